//! The GTP time commands' arguments, parsed into [`TimeControls`]:
//! `time_settings`, `kgs-time_settings`, `kata-time_settings`,
//! `kata-list_time_settings` and `time_left`. The caller (the GTP loop)
//! splits the command line into arguments and sets both players' clocks.

use super::controls::MAX_USER_INPUT_TIME;
use super::{TimeControlError, TimeControls};
use crate::game::Player;

/// The response to `kata-list_time_settings`.
pub const KATA_TIME_SETTINGS_LIST: &str = "none absolute byoyomi canadian fischer fischer-capped";

/// A number as C++ streams read it: no `inf`, `nan` or other words.
fn parse_f64(s: &str) -> Option<f64> {
    let s = s.trim();
    if s.is_empty()
        || !s
            .bytes()
            .all(|b| b.is_ascii_digit() || b".+-eE".contains(&b))
    {
        return None;
    }
    s.parse().ok()
}

fn time_arg(
    args: &[&str],
    index: usize,
    description: &'static str,
    allow_negative: bool,
) -> Result<f64, TimeControlError> {
    let text = args.get(index).copied().unwrap_or("");
    let time = parse_f64(text).ok_or(TimeControlError::Expected {
        kind: "float",
        description,
        index,
    })?;
    let low = if allow_negative {
        -MAX_USER_INPUT_TIME
    } else {
        0.0
    };
    if !(low..=MAX_USER_INPUT_TIME).contains(&time) {
        return Err(TimeControlError::InvalidValue {
            description,
            text: text.to_string(),
        });
    }
    Ok(time)
}

fn count_arg(
    args: &[&str],
    index: usize,
    description: &'static str,
) -> Result<u32, TimeControlError> {
    let text = args.get(index).copied().unwrap_or("");
    let n: i64 = text
        .trim()
        .parse()
        .map_err(|_| TimeControlError::Expected {
            kind: "int",
            description,
            index,
        })?;
    if !(0..=1_000_000).contains(&n) {
        return Err(TimeControlError::InvalidValue {
            description,
            text: text.to_string(),
        });
    }
    // In range 0..=1_000_000, so this always fits.
    Ok(n as u32)
}

/// Main time, period time and stones, as `time_settings` and `kgs-time_settings
/// canadian` mean them: zero stones with a positive period time is "no
/// limit" (the GTP spec's convention), zero stones otherwise is absolute.
fn canadian_from(main: f64, period: f64, stones: u32) -> TimeControls {
    if stones == 0 && period > 0.0 {
        TimeControls::unlimited()
    } else if stones == 0 {
        TimeControls::absolute(main)
    } else {
        TimeControls::canadian(main, period, stones)
    }
}

/// GTP `time_settings MAIN BYOYOMI STONES` (one Canadian period).
pub fn parse_time_settings(args: &[&str]) -> Result<TimeControls, TimeControlError> {
    let main = time_arg(args, 0, "main time", false)?;
    let period = time_arg(args, 1, "byo-yomi per-period time", false)?;
    let stones = count_arg(args, 2, "byo-yomi overtime stones")?;
    Ok(canadian_from(main, period, stones))
}

/// `kgs-time_settings none|absolute|byoyomi|canadian ...`.
pub fn parse_kgs_time_settings(args: &[&str]) -> Result<TimeControls, TimeControlError> {
    parse_system(args, false)
}

/// `kata-time_settings`: the KGS forms plus `fischer MAIN INCREMENT` and
/// `fischer-capped MAIN INCREMENT MAINLIMIT MAXPERMOVE` (a negative limit
/// means none).
pub fn parse_kata_time_settings(args: &[&str]) -> Result<TimeControls, TimeControlError> {
    parse_system(args, true)
}

fn parse_system(args: &[&str], kata: bool) -> Result<TimeControls, TimeControlError> {
    let unknown = if kata {
        TimeControlError::UnknownKataSystem
    } else {
        TimeControlError::UnknownKgsSystem
    };
    let Some(what) = args.first() else {
        return Err(unknown);
    };
    match what.trim().to_ascii_lowercase().as_str() {
        "none" => Ok(TimeControls::unlimited()),
        "absolute" => Ok(TimeControls::absolute(time_arg(
            args,
            1,
            "main time",
            false,
        )?)),
        "canadian" => {
            let main = time_arg(args, 1, "main time", false)?;
            let period = time_arg(args, 2, "byo-yomi period time", false)?;
            let stones = count_arg(args, 3, "byo-yomi overtime stones")?;
            Ok(canadian_from(main, period, stones))
        }
        "byoyomi" => {
            let main = time_arg(args, 1, "main time", false)?;
            let period = time_arg(args, 2, "byo-yomi per-period time", false)?;
            let periods = count_arg(args, 3, "byo-yomi overtime periods")?;
            if periods == 0 {
                Ok(TimeControls::absolute(main))
            } else {
                Ok(TimeControls::byo_yomi(main, period, periods))
            }
        }
        "fischer" if kata => {
            let main = time_arg(args, 1, "main time", false)?;
            let increment = time_arg(args, 2, "increment time", false)?;
            Ok(TimeControls::fischer(main, increment))
        }
        "fischer-capped" if kata => {
            let main = time_arg(args, 1, "main time", false)?;
            let increment = time_arg(args, 2, "increment time", false)?;
            let uncapped = |x: f64| if x < 0.0 { MAX_USER_INPUT_TIME } else { x };
            let limit = uncapped(time_arg(args, 3, "main time limit", true)?);
            let per_move = uncapped(time_arg(args, 4, "max time per move", true)?);
            TimeControls::fischer_capped(main, increment, limit, per_move)
        }
        _ => Err(unknown),
    }
}

/// GTP `time_left COLOR TIME STONES`, parsed and range-checked; apply it
/// with [`TimeControls::time_left`] on that player's clock.
pub fn parse_time_left(args: &[&str]) -> Result<(Player, f64, i64), TimeControlError> {
    let syntax = || TimeControlError::TimeLeftSyntax {
        got: args.join(" "),
    };
    if args.len() != 3 {
        return Err(syntax());
    }
    let player = Player::parse(args[0]).ok_or_else(syntax)?;
    let time = parse_f64(args[1]).ok_or_else(syntax)?;
    let stones: i64 = args[2]
        .trim()
        .parse()
        .ok()
        .filter(|s| i32::try_from(*s).is_ok())
        .ok_or_else(syntax)?;
    if !(-10.0..=MAX_USER_INPUT_TIME).contains(&time) {
        return Err(TimeControlError::InvalidTime);
    }
    if !(0..=100_000).contains(&stones) {
        return Err(TimeControlError::InvalidStones);
    }
    Ok((player, time, stones))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(r: Result<TimeControls, TimeControlError>) -> String {
        r.unwrap_err().to_string()
    }

    #[test]
    fn time_settings_forms() {
        assert_eq!(
            parse_time_settings(&["300", "30", "5"]).unwrap(),
            TimeControls::canadian(300.0, 30.0, 5)
        );
        assert_eq!(
            parse_time_settings(&["300", "0", "0"]).unwrap(),
            TimeControls::absolute(300.0)
        );
        // Positive overtime with zero stones: no limit, per the GTP spec.
        assert!(parse_time_settings(&["300", "30", "0"])
            .unwrap()
            .is_effectively_unlimited());
        assert_eq!(
            err(parse_time_settings(&["abc", "1", "1"])),
            "Expected float for main time as argument 0"
        );
        assert_eq!(
            err(parse_time_settings(&["-5", "1", "1"])),
            "main time is an invalid value: -5"
        );
        assert_eq!(
            err(parse_time_settings(&["5", "1"])),
            "Expected int for byo-yomi overtime stones as argument 2"
        );
        assert_eq!(
            err(parse_time_settings(&["5", "1", "1.5"])),
            "Expected int for byo-yomi overtime stones as argument 2"
        );
        assert_eq!(
            err(parse_time_settings(&["nan", "1", "1"])),
            "Expected float for main time as argument 0"
        );
        assert_eq!(
            err(parse_time_settings(&["1e30", "1", "1"])),
            "main time is an invalid value: 1e30"
        );
        assert_eq!(
            err(parse_time_settings(&["1", "1", "-1"])),
            "byo-yomi overtime stones is an invalid value: -1"
        );
    }

    #[test]
    fn kgs_and_kata_forms() {
        assert!(parse_kgs_time_settings(&["none"])
            .unwrap()
            .is_effectively_unlimited());
        assert_eq!(
            parse_kgs_time_settings(&["Absolute", "600"]).unwrap(),
            TimeControls::absolute(600.0)
        );
        assert_eq!(
            parse_kgs_time_settings(&["byoyomi", "600", "30", "5"]).unwrap(),
            TimeControls::byo_yomi(600.0, 30.0, 5)
        );
        assert_eq!(
            parse_kgs_time_settings(&["byoyomi", "600", "30", "0"]).unwrap(),
            TimeControls::absolute(600.0)
        );
        assert_eq!(
            parse_kgs_time_settings(&["canadian", "600", "300", "25"]).unwrap(),
            TimeControls::canadian(600.0, 300.0, 25)
        );
        assert_eq!(
            err(parse_kgs_time_settings(&["fischer", "600", "10"])),
            TimeControlError::UnknownKgsSystem.to_string()
        );
        assert_eq!(
            err(parse_kgs_time_settings(&[])),
            TimeControlError::UnknownKgsSystem.to_string()
        );
        assert_eq!(
            parse_kata_time_settings(&["fischer", "600", "10"]).unwrap(),
            TimeControls::fischer(600.0, 10.0)
        );
        assert_eq!(
            parse_kata_time_settings(&["fischer-capped", "600", "10", "-1", "-1"]).unwrap(),
            TimeControls::fischer_capped(600.0, 10.0, MAX_USER_INPUT_TIME, MAX_USER_INPUT_TIME)
                .unwrap()
        );
        assert_eq!(
            err(parse_kata_time_settings(&[
                "fischer-capped",
                "600",
                "10",
                "100",
                "5"
            ])),
            "TimeControls: mainTimeLimit is smaller than mainTime"
        );
        assert_eq!(
            err(parse_kata_time_settings(&["fischer", "600"])),
            "Expected float for increment time as argument 2"
        );
        assert_eq!(
            err(parse_kata_time_settings(&["blitz"])),
            TimeControlError::UnknownKataSystem.to_string()
        );
        assert_eq!(
            KATA_TIME_SETTINGS_LIST.split(' ').count(),
            6,
            "every kata-time_settings system is listed"
        );
    }

    #[test]
    fn time_left_parsing() {
        assert_eq!(
            parse_time_left(&["b", "30.5", "0"]).unwrap(),
            (Player::Black, 30.5, 0)
        );
        assert_eq!(
            parse_time_left(&["white", "-3", "5"]).unwrap(),
            (Player::White, -3.0, 5)
        );
        assert_eq!(
            parse_time_left(&["x", "3", "0"]).unwrap_err().to_string(),
            "Expected player and float time and int stones for time_left but got 'x 3 0'"
        );
        assert_eq!(
            parse_time_left(&["b", "3"]).unwrap_err(),
            TimeControlError::TimeLeftSyntax {
                got: "b 3".to_string()
            }
        );
        assert_eq!(
            parse_time_left(&["b", "-11", "0"]).unwrap_err(),
            TimeControlError::InvalidTime
        );
        assert_eq!(
            parse_time_left(&["b", "1", "100001"]).unwrap_err(),
            TimeControlError::InvalidStones
        );
    }
}
