//! The GTP time commands: `time_settings`, `kgs-time_settings`,
//! `kata-time_settings`, `kata-list_time_settings` and `time_left`, with
//! KataGo's argument checks and error texts.
//!
//! The clock state is KataGo's `TimeControls` (the fields the search's
//! time management reads); the engine keeps one per player.

use crate::game::Player;

use super::numfmt::{parse_finite_f64, parse_i64};

/// Largest time a user may type (KataGo's `MAX_USER_INPUT_TIME`).
const MAX_USER_INPUT_TIME: f64 = 1e25;
/// KataGo's "unlimited" value for unset times.
const UNLIMITED_TIME_DEFAULT: f64 = 1e30;

/// One player's clock, field for field KataGo's `TimeControls`.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeControls {
    /// Main time at the start.
    pub original_main_time: f64,
    /// Fischer increment per move.
    pub increment: f64,
    /// Cap on main time after adding the increment.
    pub main_time_limit: f64,
    /// Cap on the time for one move.
    pub max_time_per_move: f64,
    /// Byo-yomi periods at the start.
    pub original_num_periods: i64,
    /// Stones to play per period (1 for Japanese byo-yomi).
    pub num_stones_per_period: i64,
    /// Length of one period.
    pub per_period_time: f64,
    /// Main time left.
    pub main_time_left: f64,
    /// Whether main time is used up.
    pub in_overtime: bool,
    /// Periods left, the current one included.
    pub num_periods_left_including_current: i64,
    /// Stones left to play in the current period.
    pub num_stones_left_in_period: i64,
    /// Time left in the current period.
    pub time_left_in_period: f64,
}

impl Default for TimeControls {
    /// No time limit.
    fn default() -> TimeControls {
        TimeControls {
            original_main_time: UNLIMITED_TIME_DEFAULT,
            increment: 0.0,
            main_time_limit: UNLIMITED_TIME_DEFAULT,
            max_time_per_move: UNLIMITED_TIME_DEFAULT,
            original_num_periods: 0,
            num_stones_per_period: 0,
            per_period_time: 0.0,
            main_time_left: UNLIMITED_TIME_DEFAULT,
            in_overtime: false,
            num_periods_left_including_current: 0,
            num_stones_left_in_period: 0,
            time_left_in_period: 0.0,
        }
    }
}

impl TimeControls {
    /// Sudden death: `main` seconds for the whole game.
    pub fn absolute(main: f64) -> TimeControls {
        TimeControls {
            original_main_time: main,
            main_time_left: main,
            ..TimeControls::default()
        }
    }

    /// Fischer: `main` seconds plus `increment` after every move.
    pub fn fischer(main: f64, increment: f64) -> TimeControls {
        TimeControls {
            increment,
            ..TimeControls::absolute(main)
        }
    }

    /// Fischer with a cap on main time and on the time per move.
    pub fn fischer_capped(
        main: f64,
        increment: f64,
        limit: f64,
        max_per_move: f64,
    ) -> TimeControls {
        TimeControls {
            main_time_limit: limit,
            max_time_per_move: max_per_move,
            ..TimeControls::fischer(main, increment)
        }
    }

    /// Byo-yomi (`stones == 1`) or Canadian (`periods == 1`) overtime.
    pub fn byo_yomi(main: f64, period_time: f64, periods: i64, stones: i64) -> TimeControls {
        TimeControls {
            original_num_periods: periods,
            num_stones_per_period: stones,
            per_period_time: period_time,
            in_overtime: false,
            num_periods_left_including_current: periods,
            num_stones_left_in_period: 0,
            time_left_in_period: 0.0,
            ..TimeControls::absolute(main)
        }
    }

    /// Applies `time_left` (KataGo's reading: `stones == 0` is main time;
    /// otherwise overtime, where with KGS byo-yomi `stones` counts periods).
    pub fn set_time_left(&mut self, time: f64, stones: i64) {
        if stones == 0 {
            self.main_time_left = time;
            self.in_overtime = false;
            self.num_periods_left_including_current = self.original_num_periods;
            self.num_stones_left_in_period = 0;
            self.time_left_in_period = 0.0;
        } else if self.original_num_periods > 1 && self.num_stones_per_period == 1 {
            self.main_time_left = 0.0;
            self.in_overtime = true;
            self.num_periods_left_including_current = stones.min(self.original_num_periods);
            self.num_stones_left_in_period = 1;
            self.time_left_in_period = time;
        } else {
            self.main_time_left = 0.0;
            self.in_overtime = true;
            self.num_periods_left_including_current = 1;
            self.num_stones_left_in_period = stones.min(self.num_stones_per_period);
            self.time_left_in_period = time;
        }
    }

    /// Whether the clock does not bound thinking time at all.
    pub fn is_unlimited(&self) -> bool {
        const UNLIMITED_TIME_THRESHOLD: f64 = 1e20;
        !self.in_overtime
            && self.main_time_left >= UNLIMITED_TIME_THRESHOLD
            && self.max_time_per_move >= UNLIMITED_TIME_THRESHOLD
    }
}

fn parse_time(args: &[String], i: usize, what: &str, allow_negative: bool) -> Result<f64, String> {
    let t = args
        .get(i)
        .and_then(|s| parse_finite_f64(s))
        .ok_or_else(|| format!("Expected float for {what} as argument {i}"))?;
    let lo = if allow_negative {
        -MAX_USER_INPUT_TIME
    } else {
        0.0
    };
    if t < lo || t > MAX_USER_INPUT_TIME {
        return Err(format!("{what} is an invalid value: {}", args[i]));
    }
    Ok(t)
}

fn parse_count(args: &[String], i: usize, what: &str) -> Result<i64, String> {
    let n = args
        .get(i)
        .and_then(|s| parse_i64(s))
        .ok_or_else(|| format!("Expected int for {what} as argument {i}"))?;
    if !(0..=1_000_000).contains(&n) {
        return Err(format!("{what} is an invalid value: {}", args[i]));
    }
    Ok(n)
}

/// GTP's overtime rule: positive byo-yomi time with 0 stones means no
/// limit, 0 stones otherwise means absolute time.
fn canadian(main: f64, period: f64, stones: i64) -> TimeControls {
    if stones == 0 && period > 0.0 {
        TimeControls::default()
    } else if stones == 0 {
        TimeControls::absolute(main)
    } else {
        TimeControls::byo_yomi(main, period, 1, stones)
    }
}

/// `time_settings MAIN BYOYOMI STONES`.
pub fn parse_time_settings(args: &[String]) -> Result<TimeControls, String> {
    let main = parse_time(args, 0, "main time", false)?;
    let period = parse_time(args, 1, "byo-yomi per-period time", false)?;
    let stones = parse_count(args, 2, "byo-yomi overtime stones")?;
    Ok(canadian(main, period, stones))
}

/// What `kata-list_time_settings` answers.
pub const KATA_TIME_SETTINGS: &str = "none absolute byoyomi canadian fischer fischer-capped";

/// `kgs-time_settings KIND ...` (`kata == false`) or
/// `kata-time_settings KIND ...` (`kata == true`, adds Fischer forms).
pub fn parse_kind_time_settings(args: &[String], kata: bool) -> Result<TimeControls, String> {
    let usage = if kata {
        "Expected 'none', 'absolute', 'byoyomi', 'canadian', 'fischer', or 'fischer-capped' as first argument for kata-time_settings"
    } else {
        "Expected 'none', 'absolute', 'byoyomi', or 'canadian' as first argument for kgs-time_settings"
    };
    let kind = args
        .first()
        .map(|s| s.trim().to_ascii_lowercase())
        .ok_or_else(|| usage.to_string())?;
    match kind.as_str() {
        "none" => Ok(TimeControls::default()),
        "absolute" => Ok(TimeControls::absolute(parse_time(
            args,
            1,
            "main time",
            false,
        )?)),
        "canadian" => {
            let main = parse_time(args, 1, "main time", false)?;
            let period = parse_time(args, 2, "byo-yomi period time", false)?;
            let stones = parse_count(args, 3, "byo-yomi overtime stones")?;
            Ok(canadian(main, period, stones))
        }
        "byoyomi" => {
            let main = parse_time(args, 1, "main time", false)?;
            let period = parse_time(args, 2, "byo-yomi per-period time", false)?;
            let periods = parse_count(args, 3, "byo-yomi overtime periods")?;
            Ok(if periods == 0 {
                TimeControls::absolute(main)
            } else {
                TimeControls::byo_yomi(main, period, periods, 1)
            })
        }
        "fischer" if kata => {
            let main = parse_time(args, 1, "main time", false)?;
            let inc = parse_time(args, 2, "increment time", false)?;
            Ok(TimeControls::fischer(main, inc))
        }
        "fischer-capped" if kata => {
            let main = parse_time(args, 1, "main time", false)?;
            let inc = parse_time(args, 2, "increment time", false)?;
            let cap = |v: f64| if v < 0.0 { MAX_USER_INPUT_TIME } else { v };
            let limit = cap(parse_time(args, 3, "main time limit", true)?);
            let per_move = cap(parse_time(args, 4, "max time per move", true)?);
            Ok(TimeControls::fischer_capped(main, inc, limit, per_move))
        }
        _ => Err(usage.to_string()),
    }
}

/// `time_left COLOR TIME STONES`: checks the arguments against the
/// player's clock and returns the player and the updated clock.
pub fn parse_time_left(
    args: &[String],
    clock_of: impl Fn(Player) -> TimeControls,
) -> Result<(Player, TimeControls), String> {
    let parsed = match args {
        [p, t, s] => Player::parse(p).zip(parse_finite_f64(t)).zip(parse_i64(s)),
        _ => None,
    };
    let ((pla, time), stones) = parsed.ok_or_else(|| {
        format!(
            "Expected player and float time and int stones for time_left but got '{}'",
            args.join(" ")
        )
    })?;
    // Slightly negative times are tolerated: controllers' clocks run over.
    if !(-10.0..=MAX_USER_INPUT_TIME).contains(&time) {
        return Err("invalid time".to_string());
    }
    if !(0..=100_000).contains(&stones) {
        return Err("invalid stones".to_string());
    }
    let mut tc = clock_of(pla);
    if stones > 0 && tc.original_num_periods <= 0 {
        return Err(
            "stones left in period is > 0 but the time control used does not have any overtime periods"
                .to_string(),
        );
    }
    tc.set_time_left(time, stones);
    Ok((pla, tc))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn gtp_time_settings_follow_katago() {
        let tc = parse_time_settings(&s(&["300", "30", "5"])).unwrap();
        assert_eq!(tc.original_num_periods, 1);
        assert_eq!(tc.num_stones_per_period, 5);
        assert_eq!(tc.main_time_left, 300.0);
        assert!(parse_time_settings(&s(&["0", "1", "0"]))
            .unwrap()
            .is_unlimited());
        assert_eq!(
            parse_time_settings(&s(&["60", "0", "0"])).unwrap(),
            TimeControls::absolute(60.0)
        );
        assert_eq!(
            parse_time_settings(&s(&["abc", "1", "1"])).unwrap_err(),
            "Expected float for main time as argument 0"
        );
        assert!(parse_time_settings(&s(&["10"])).is_err());
        assert!(parse_time_settings(&s(&["-1", "1", "1"])).is_err());
    }

    #[test]
    fn kgs_and_kata_kinds() {
        assert!(parse_kind_time_settings(&s(&["none"]), false)
            .unwrap()
            .is_unlimited());
        let by = parse_kind_time_settings(&s(&["byoyomi", "300", "30", "5"]), false).unwrap();
        assert_eq!((by.original_num_periods, by.num_stones_per_period), (5, 1));
        let ca = parse_kind_time_settings(&s(&["canadian", "300", "30", "5"]), false).unwrap();
        assert_eq!((ca.original_num_periods, ca.num_stones_per_period), (1, 5));
        assert!(parse_kind_time_settings(&s(&["fischer", "300", "5"]), false).is_err());
        let f = parse_kind_time_settings(&s(&["fischer", "300", "5"]), true).unwrap();
        assert_eq!(f.increment, 5.0);
        let fc = parse_kind_time_settings(&s(&["fischer-capped", "300", "5", "-1", "20"]), true)
            .unwrap();
        assert_eq!(
            (fc.main_time_limit, fc.max_time_per_move),
            (MAX_USER_INPUT_TIME, 20.0)
        );
        assert!(parse_kind_time_settings(&s(&["bogus", "1"]), true).is_err());
        assert!(parse_kind_time_settings(&[], false).is_err());
    }

    #[test]
    fn time_left_main_and_overtime() {
        let by = parse_kind_time_settings(&s(&["byoyomi", "300", "30", "5"]), false).unwrap();
        let (pla, tc) = parse_time_left(&s(&["w", "25", "3"]), |_| by.clone()).unwrap();
        assert_eq!(pla, Player::White);
        assert!(tc.in_overtime);
        assert_eq!(tc.num_periods_left_including_current, 3);
        assert_eq!(tc.time_left_in_period, 25.0);
        let ca = parse_time_settings(&s(&["300", "30", "5"])).unwrap();
        let (_, tc) = parse_time_left(&s(&["b", "20", "9"]), |_| ca.clone()).unwrap();
        assert_eq!(tc.num_stones_left_in_period, 5);
        let (_, tc) = parse_time_left(&s(&["b", "290", "0"]), |_| ca.clone()).unwrap();
        assert_eq!(tc.main_time_left, 290.0);
        assert!(!tc.in_overtime);
        let abs = TimeControls::absolute(10.0);
        assert!(parse_time_left(&s(&["b", "5", "1"]), |_| abs.clone()).is_err());
        assert!(parse_time_left(&s(&["x", "1", "1"]), |_| abs.clone()).is_err());
        assert!(parse_time_left(&s(&["b", "abc", "0"]), |_| abs.clone()).is_err());
        assert!(parse_time_left(&s(&["b", "-11", "0"]), |_| abs.clone()).is_err());
    }
}
