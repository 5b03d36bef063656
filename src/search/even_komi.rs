//! The komi that makes a position even, and the lead it implies (KataGo's
//! `getNaiveEvenKomiHelper` and `computeLead`): searches at a few komis,
//! first shifting by the predicted lead, then a binary search on the sign
//! of the win/loss value. More robust than a single search's score
//! estimate where the score is a near-certain integer (GTP `final_score`),
//! and the basis of fair-komi adjustment.
//!
//! The searching is the caller's: `eval(komi)` returns the search's
//! `(lead, win_loss)` for White at that komi. Results are cached per komi
//! because the binary search revisits them.

use std::collections::HashMap;

/// KataGo's `roundAndClipKomi`: the nearest half-integer, within the
/// board area plus the network's komi range.
pub fn round_and_clip_komi(komi: f64, board_area: usize) -> f64 {
    const KOMI_CLIP_RADIUS: f64 = 20.0;
    let range = KOMI_CLIP_RADIUS + board_area as f64;
    0.5 * (2.0 * komi.clamp(-range, range)).round()
}

/// A per-komi cache of `eval`.
struct Evals<F> {
    eval: F,
    cache: HashMap<i64, (f64, f64)>,
    board_area: usize,
}

impl<F: FnMut(f64) -> (f64, f64)> Evals<F> {
    /// `(lead, win_loss)` for White at `komi` (rounded and clipped).
    fn at(&mut self, komi: f64) -> (f64, f64) {
        let komi = round_and_clip_komi(komi, self.board_area);
        let key = (komi * 2.0) as i64;
        if let Some(&v) = self.cache.get(&key) {
            return v;
        }
        let v = (self.eval)(komi);
        self.cache.insert(key, v);
        v
    }
}

/// The komi at which the position is even for the searches `eval` runs,
/// starting from `komi` (KataGo's `getNaiveEvenKomiHelper`).
fn naive_even_komi<F: FnMut(f64) -> (f64, f64)>(evals: &mut Evals<F>, komi: f64) -> f64 {
    let area = evals.board_area;
    let mut komi = komi;
    // Shift by the predicted lead a few times to get close to fair.
    let (mut last_shift, mut last_win_loss, mut last_lead) = (0.0f64, 0.0, 0.0);
    for i in 0..3 {
        let (lead, win_loss) = evals.at(komi);
        // A shift that made things go the wrong way by a lot: take half
        // of it back and stop.
        if i > 0
            && ((last_lead > 0.0 && lead > last_lead + 5.0 && win_loss < 0.75)
                || (last_lead < 0.0 && lead < last_lead - 5.0 && win_loss > -0.75)
                || (last_win_loss > 0.0 && win_loss > last_win_loss + 0.1)
                || (last_win_loss < 0.0 && win_loss < last_win_loss - 0.1))
        {
            komi = round_and_clip_komi(komi - last_shift * 0.5, area);
            break;
        }
        last_lead = lead;
        last_win_loss = win_loss;
        let mut shift = -lead;
        // Never shift by more than last time.
        if i > 0 && shift.abs() > last_shift.abs() {
            shift = last_shift.abs().copysign(shift);
        }
        last_shift = shift;
        // Score and winrate disagree about the direction: stop here.
        if (shift > 0.0 && win_loss > 0.0) || (shift < 0.0 && lead < 0.0) {
            break;
        }
        komi = round_and_clip_komi(komi + shift, area);
        if shift.abs() < 16.0 {
            break;
        }
    }

    // Grow a window around the komi until the win/loss changes sign, then
    // bisect it down to half a point.
    let mut win_loss_at = |delta: f64| evals.at(komi + delta).1;
    let (mut lower, mut upper, mut lower_wl, mut upper_wl);
    let at_zero = win_loss_at(0.0);
    if at_zero < 0.0 {
        (lower, lower_wl) = (0.0, at_zero);
        (upper, upper_wl) = (0.0, at_zero);
        for i in 0..=5 {
            upper = 2f64.powi(i).round();
            upper_wl = win_loss_at(upper);
            if upper_wl >= 0.0 {
                break;
            }
        }
    } else {
        (upper, upper_wl) = (0.0, at_zero);
        (lower, lower_wl) = (0.0, at_zero);
        for i in 0..=5 {
            lower = -2f64.powi(i).round();
            lower_wl = win_loss_at(lower);
            if lower_wl <= 0.0 {
                break;
            }
        }
    }
    while upper - lower > 0.50001 {
        let mid = 0.5 * (lower + upper);
        let mid_wl = win_loss_at(mid);
        if mid_wl < 0.0 {
            (lower, lower_wl) = (mid, mid_wl);
        } else {
            (upper, upper_wl) = (mid, mid_wl);
        }
    }
    let delta = if lower_wl >= upper_wl - 1e-30 {
        // Crossed by noise: take the middle.
        0.5 * (lower + upper)
    } else if upper_wl <= 0.0 {
        upper
    } else if lower_wl >= 0.0 {
        lower
    } else {
        lower + (upper - lower) * (0.0 - lower_wl) / (upper_wl - lower_wl)
    };
    komi + delta
}

/// White's lead at komi `komi` (KataGo's `computeLead`): `komi` minus the
/// even komi. Under area scoring without a button, where scores move in
/// steps of two points, the win/loss values at the neighbouring komis are
/// averaged to smooth the steps before interpolating.
pub fn compute_lead(
    komi: f64,
    board_area: usize,
    coarse_granularity: bool,
    eval: impl FnMut(f64) -> (f64, f64),
) -> f64 {
    let mut evals = Evals {
        eval,
        cache: HashMap::new(),
        board_area,
    };
    let naive = naive_even_komi(&mut evals, komi);
    if !coarse_granularity || naive == naive.round() {
        return komi - naive;
    }
    let lower = (naive * 2.0).floor() * 0.5;
    let upper = lower + 0.5;
    let mut wl = |k: f64| evals.at(k).1;
    let lower_wl = 0.5 * (wl(upper) + wl(lower - 0.5));
    let upper_wl = 0.5 * (wl(upper + 0.5) + wl(lower));
    let even = if lower_wl >= upper_wl - 1e-30 {
        0.5 * (lower + upper)
    } else {
        let r = lower + (upper - lower) * (0.0 - lower_wl) / (upper_wl - lower_wl);
        r.clamp(lower - 0.5, upper + 0.5)
    };
    komi - even
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A position Black wins by `margin` points on the board: White's
    /// win/loss is a smooth step in komi around the margin; the lead is
    /// exact. Counts the evaluations.
    fn model(margin: f64, noise: f64) -> impl FnMut(f64) -> (f64, f64) {
        let mut n = 0u32;
        move |komi: f64| {
            n += 1;
            let lead = komi - margin + noise * if n.is_multiple_of(2) { 1.0 } else { -1.0 };
            (lead, (lead / 2.0).tanh())
        }
    }

    #[test]
    fn rounds_and_clips_komi_as_katago() {
        assert_eq!(round_and_clip_komi(7.3, 81), 7.5);
        assert_eq!(round_and_clip_komi(7.2, 81), 7.0);
        assert_eq!(round_and_clip_komi(-3.76, 81), -4.0);
        assert_eq!(round_and_clip_komi(500.0, 81), 101.0);
        assert_eq!(round_and_clip_komi(-500.0, 361), -381.0);
    }

    #[test]
    fn finds_the_even_komi_and_the_lead() {
        // Black is 9 points ahead on the board; komi 6.5: White's lead -2.5.
        for coarse in [false, true] {
            let lead = compute_lead(6.5, 81, coarse, model(9.0, 0.0));
            assert!((lead - -2.5).abs() < 0.3, "{coarse} {lead}");
        }
        // Far from even (a 60-point game) it still gets there.
        let lead = compute_lead(7.5, 361, false, model(67.5, 0.0));
        assert!((lead - -60.0).abs() < 0.3, "{lead}");
        let lead = compute_lead(0.0, 361, false, model(-30.0, 0.0));
        assert!((lead - 30.0).abs() < 0.3, "{lead}");
    }

    #[test]
    fn a_noisy_score_estimate_does_not_move_the_result_much() {
        // The score head is off by +-1.5 from call to call; the win/loss
        // sign that the binary search follows stays right.
        let lead = compute_lead(6.5, 81, true, model(9.0, 1.5));
        assert!((lead - -2.5).abs() < 1.0, "{lead}");
    }

    #[test]
    fn caches_each_komi_once() {
        let mut komis = Vec::new();
        let mut inner = model(9.0, 0.0);
        compute_lead(6.5, 81, true, |k| {
            komis.push(k);
            inner(k)
        });
        let mut unique = komis.clone();
        unique.sort_by(f64::total_cmp);
        unique.dedup();
        assert_eq!(unique.len(), komis.len(), "{komis:?}");
        assert!(komis.len() <= 16, "{komis:?}");
    }
}
