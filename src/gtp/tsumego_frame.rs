//! The problem `genmove` plays inside after `kata-tsumego-frame` (see
//! `tsumego_cmd`): kept in [`super::engine::GtpEngine`], so it lives apart
//! from the command that sets it.

use crate::game::{Board, Loc, Move, Player};
use crate::tsumego::{Goal, GoalSpec, KoThreats, RegionSpec, TsumegoRequest};

/// A problem kept for `genmove` (`kata-tsumego-frame`): its points and
/// the sides' roles stay as they were set while the stones change.
#[derive(Debug, Clone)]
pub struct TsumegoFrame {
    /// The problem's points.
    pub region: Vec<Loc>,
    /// The side that kills; the other lives.
    pub attacker: Player,
    /// A stone of the group the goal is about, while it stands.
    pub target: Option<Loc>,
    /// Which side the frame gives ko threats.
    pub ko_threats: KoThreats,
}

impl TsumegoFrame {
    /// The problem on `board` with `to_move` to play: the attacker kills,
    /// the defender lives.
    pub fn request(&self, board: &Board, to_move: Player) -> TsumegoRequest {
        let defender = self.attacker.opp();
        TsumegoRequest {
            region: RegionSpec::Points(self.region.clone()),
            goal: GoalSpec::Given(if to_move == self.attacker {
                Goal::Kill
            } else {
                Goal::Live
            }),
            target: self.target.filter(|&t| board.get(t) == defender.color()),
            ko_threats: self.ko_threats,
        }
    }

    /// The frame as the commands show it, on a board of that size.
    pub fn to_json(&self, x_size: usize, y_size: usize) -> serde_json::Value {
        let gtp = |l: Loc| Move::Play(l).to_gtp(x_size, y_size);
        serde_json::json!({
            "region": self.region.iter().map(|&l| gtp(l)).collect::<Vec<_>>(),
            "attacker": self.attacker.letter().to_string(),
            "target": self.target.map(gtp),
            "koThreats": match self.ko_threats {
                KoThreats::None => "none",
                KoThreats::Attacker => "attacker",
                KoThreats::Defender => "defender",
            },
        })
    }
}
