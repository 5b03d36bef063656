//! Handicap and asymmetric-playout games: KataGo's choice of extra black
//! stones and playout advantage per game (`GameInitializer`,
//! `PlayUtils::chooseExtraBlackAndKomi`), the stones' placement from the
//! policy (`PlayUtils::playExtraBlack`) and the per-move visit split of an
//! asymmetric game (`getSearchLimitsThisMove`).

use rand::distributions::Distribution;
use rand::rngs::StdRng;
use rand::Rng;
use rand_distr::StandardNormal;

use super::settings::PlaySettings;
use crate::game::Player;
use crate::search::SearchParams;

/// How a game is set up beyond its size and rules.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct GameSetup {
    /// Extra black stones placed before the game (0: no handicap).
    pub extra_black: u32,
    /// The player given the playout advantage, if any.
    pub pda_pla: Option<Player>,
    /// Their playout doubling advantage (log2 of the visit ratio).
    pub pda: f64,
    /// Whether komi is made fair for the actual start position (after the
    /// extra stones) rather than for the empty board.
    pub make_game_fair: bool,
}

/// A standard normal draw, redrawn until within `bound` (KataGo's
/// `nextGaussianTruncated`).
pub(super) fn gaussian_truncated(rng: &mut StdRng, bound: f64) -> f64 {
    loop {
        let x: f64 = StandardNormal.sample(rng);
        if x.abs() <= bound {
            return x;
        }
    }
}

/// The per-game search values KataGo's `GameInitializer::createGame`
/// randomises: the no-result utility (`noResultStdev`) and the draw value
/// (`drawRandRadius`), each redrawn until in range.
pub(super) fn randomize_game_params(s: &PlaySettings, params: &mut SearchParams, rng: &mut StdRng) {
    if s.no_result_stdev > 1e-30 {
        let mean = params.no_result_utility_for_white;
        loop {
            let v = mean + s.no_result_stdev * gaussian_truncated(rng, 3.0);
            if (-1.0..=1.0).contains(&v) {
                params.no_result_utility_for_white = v;
                break;
            }
        }
    }
    if s.draw_rand_radius > 1e-30 {
        let mean = params.draw_equivalent_wins_for_white.clamp(0.0, 1.0);
        loop {
            let v = mean + s.draw_rand_radius * (rng.gen::<f64>() * 2.0 - 1.0);
            if (0.0..=1.0).contains(&v) {
                params.draw_equivalent_wins_for_white = v;
                break;
            }
        }
    }
}

/// KataGo's `getDefaultMaxExtraBlack`: no handicap on boards of about
/// 10x10 or less, up to 5 stones on 19x19.
pub(super) fn default_max_extra_black(sqrt_area: f64) -> u32 {
    match sqrt_area {
        a if a <= 10.00001 => 0,
        a if a <= 14.00001 => 1,
        a if a <= 16.00001 => 2,
        a if a <= 17.00001 => 3,
        a if a <= 18.00001 => 4,
        _ => 5,
    }
}

/// Draws the game's handicap, playout advantage and komi fairness as
/// KataGo's `GameInitializer` does for a game from the empty board.
pub(super) fn choose_setup(s: &PlaySettings, area: usize, rng: &mut StdRng) -> GameSetup {
    let max_extra = default_max_extra_black((area as f64).sqrt());
    let mut extra_black = 0;
    if (s.num_extra_black_fixed > 0 || max_extra > 0)
        && s.handicap_prob > 0.0
        && rng.gen_bool(s.handicap_prob)
    {
        extra_black = if s.num_extra_black_fixed > 0 {
            s.num_extra_black_fixed
        } else {
            1 + rng.gen_range(0..max_extra)
        };
    }
    let mut make_fair_prob = if extra_black > 0 {
        s.handicap_compensate_komi_prob
    } else {
        0.0
    };
    let asym_prob = if extra_black > 0 {
        s.handicap_asymmetric_playout_prob
    } else {
        s.normal_asymmetric_playout_prob
    };
    let (mut pda_pla, mut pda) = (None, 0.0);
    if asym_prob > 0.0 && rng.gen_bool(asym_prob) {
        let max_doublings = s.max_asymmetric_ratio.max(1.0).log2();
        pda = rng.gen::<f64>() * max_doublings;
        // A handicap game always gives white the advantage.
        pda_pla = Some(if extra_black > 0 || rng.gen_bool(0.5) {
            Player::White
        } else {
            Player::Black
        });
        make_fair_prob = make_fair_prob.max(s.min_asymmetric_compensate_komi_prob);
    }
    let make_game_fair = make_fair_prob > 0.0 && rng.gen_bool(make_fair_prob.min(1.0));
    GameSetup {
        extra_black,
        pda_pla,
        pda,
        make_game_fair,
    }
}

/// The visits for `pla`'s search in an asymmetric game: the advantaged
/// side gets `2 * f / (f + 1)` times `visits`, the other `2 / (f + 1)`,
/// with `f = 2^pda`. KataGo aborts the run when a side would get fewer
/// than 5; we keep 5 (the settings already clamp `maxAsymmetricRatio`,
/// so this only bites for cheap or reduced searches) and say so in the
/// second value.
pub(super) fn asymmetric_visits(visits: i64, pla: Player, setup: &GameSetup) -> (i64, bool) {
    let Some(adv) = setup.pda_pla else {
        return (visits, false);
    };
    if setup.pda == 0.0 {
        return (visits, false);
    }
    let f = 2f64.powf(setup.pda);
    let factor = if pla == adv {
        2.0 * f / (f + 1.0)
    } else {
        2.0 / (f + 1.0)
    };
    let v = (visits as f64 * factor).round() as i64;
    if v < 5 {
        (5, true)
    } else {
        (v, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn draw_value_and_no_result_utility_stay_in_range() {
        let cfg = crate::config::Config::from_cfg_str(
            "komiMean = 7\ndrawRandRadius = 0.5\nnoResultStdev = 0.5\n",
            "t.cfg",
        )
        .unwrap();
        let (s, _) = PlaySettings::from_config(&cfg).unwrap();
        let mut rng = StdRng::seed_from_u64(9);
        let (mut lo, mut hi) = (1.0f64, 0.0f64);
        for _ in 0..200 {
            let mut p = SearchParams::defaults(crate::search::SetupFor::Other);
            p.draw_equivalent_wins_for_white = 0.9;
            randomize_game_params(&s, &mut p, &mut rng);
            let d = p.draw_equivalent_wins_for_white;
            assert!((0.4..=1.0).contains(&d), "{d}");
            assert!((-1.0..=1.0).contains(&p.no_result_utility_for_white));
            lo = lo.min(d);
            hi = hi.max(d);
        }
        assert!(lo < 0.6 && hi > 0.95, "spread {lo}..{hi}");
    }

    #[test]
    fn max_extra_black_follows_board_size() {
        assert_eq!(default_max_extra_black(7.0), 0);
        assert_eq!(default_max_extra_black(9.0), 0);
        assert_eq!(default_max_extra_black(13.0), 1);
        assert_eq!(default_max_extra_black(19.0), 5);
    }

    #[test]
    fn asymmetric_visits_split_and_clamp() {
        let setup = GameSetup {
            extra_black: 0,
            pda_pla: Some(Player::White),
            pda: 3.0,
            make_game_fair: false,
        };
        // f = 8: white gets 2*8/9, black 2/9 of the visits.
        assert_eq!(asymmetric_visits(90, Player::White, &setup), (160, false));
        assert_eq!(asymmetric_visits(90, Player::Black, &setup), (20, false));
        assert_eq!(asymmetric_visits(9, Player::Black, &setup), (5, true));
        let none = GameSetup {
            pda_pla: None,
            ..setup
        };
        assert_eq!(asymmetric_visits(90, Player::Black, &none), (90, false));
    }

    #[test]
    fn handicap_games_give_white_the_advantage() {
        let cfg = crate::config::Config::from_cfg_str(
            "komiMean = 7\nhandicapProb = 1.0\nnumExtraBlackFixed = 2\n\
             handicapAsymmetricPlayoutProb = 1.0\nmaxAsymmetricRatio = 4\n",
            "t.cfg",
        )
        .unwrap();
        let (s, _) = PlaySettings::from_config(&cfg).unwrap();
        let mut rng = StdRng::seed_from_u64(5);
        for _ in 0..20 {
            let g = choose_setup(&s, 49, &mut rng);
            assert_eq!(g.extra_black, 2);
            assert_eq!(g.pda_pla, Some(Player::White));
            assert!((0.0..=2.0).contains(&g.pda), "{}", g.pda);
        }
    }
}
