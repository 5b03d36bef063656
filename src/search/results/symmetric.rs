//! The root's symmetric copies in results (KataGo's
//! `duplicateForSymmetries`): the moves root symmetry pruning did not
//! search, listed after the searched move they are images of.

use super::{MoveInfo, SearchView};
use crate::search::root_symmetry::RootSymmetry;

/// `infos` (in order) with, after each, its images under the root's
/// symmetries that are not listed yet and not avoided: same statistics,
/// the move, PV and per-move ownership mapped, `is_symmetry_of` set.
/// As KataGo's `duplicateForSymmetries`; orders are renumbered.
pub(crate) fn symmetric_copies(rs: &RootSymmetry, infos: Vec<MoveInfo>) -> Vec<MoveInfo> {
    if rs.symmetries.len() <= 1 {
        return infos;
    }
    let (xs, ys) = (rs.x_size, rs.y_size);
    let mut listed = vec![false; xs * ys + 1];
    let mut out = Vec::with_capacity(infos.len() * rs.symmetries.len());
    for info in &infos {
        for &sym in &rs.symmetries {
            let mv = sym.mv(info.mv, xs, ys);
            let i = mv.policy_index(xs, ys);
            if listed[i] || rs.avoided.get(i).copied().unwrap_or(false) {
                continue;
            }
            listed[i] = true;
            let mut copy = info.clone();
            if sym != crate::nn::Symmetry::IDENTITY {
                copy.mv = mv;
                copy.is_symmetry_of = Some(info.mv);
                for m in copy.pv.iter_mut() {
                    *m = sym.mv(*m, xs, ys);
                }
                for plane in [&mut copy.ownership, &mut copy.ownership_stdev]
                    .into_iter()
                    .flatten()
                {
                    *plane = rs.map_plane(sym, plane);
                }
            }
            out.push(copy);
        }
    }
    for (order, info) in out.iter_mut().enumerate() {
        info.order = order;
    }
    out
}

impl SearchView<'_> {
    /// `infos` with the moves that root symmetry pruning did not search
    /// added after the searched move they are copies of (KataGo's
    /// `duplicateForSymmetries`, what front ends get); unchanged when the
    /// root has no symmetry or pruning is off.
    pub fn with_symmetric_copies(&self, infos: Vec<MoveInfo>) -> Vec<MoveInfo> {
        symmetric_copies(self.root_symmetry, infos)
    }

    /// The root's symmetries (identity alone unless root symmetry pruning
    /// found more).
    pub fn root_symmetries(&self) -> &[crate::nn::Symmetry] {
        self.root_symmetry.symmetries()
    }
}
