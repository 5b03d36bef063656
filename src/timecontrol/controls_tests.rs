//! Hand-computed cases of KataGo's time management, one per time system.
//!
//! On an empty 19x19 board (area 361) the game-length estimates are, in our
//! own moves: absolute (0.95*361+20)/2 = 181.475, increment
//! (0.75*361+15)/2 = 142.875, byo-yomi (0.5*361+10)/2 = 95.25.

use super::*;

const AREA: usize = 361;
const ABS_TURNS: f64 = 181.475;
const INC_TURNS: f64 = 142.875;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9 * (1.0 + b.abs())
}

fn assert_budget(b: TimeBudget, min: f64, rec: f64, max: f64) {
    assert!(
        close(b.min, min) && close(b.recommended, rec) && close(b.max, max),
        "got {b:?}, expected ({min}, {rec}, {max})"
    );
}

#[test]
fn absolute_time() {
    let tc = TimeControls::absolute(600.0);
    // Increment policy 600/142.875 capped by absolute 600/181.475; max a fifth.
    assert_budget(tc.get_time(AREA, 0, 0.0), 0.0, 600.0 / ABS_TURNS, 120.0);
    // Late in the game the estimate hits its floor: 0.15*361+30 = 84.15 -> 42.075.
    let tc = TimeControls::absolute(60.0);
    assert_budget(tc.get_time(AREA, 300, 0.0), 0.0, 60.0 / 42.075, 12.0);
}

#[test]
fn fischer_with_lag_buffer() {
    let tc = TimeControls::fischer(300.0, 10.0);
    // Excess 300-10 less lag 1 = 289; rec 10 + 289/142.875; max 10 + 289/5;
    // then the lag buffer again on each.
    let b = tc.get_time(AREA, 0, 1.0);
    assert_budget(
        b,
        0.0,
        10.0 + 289.0 / INC_TURNS - 1.0,
        10.0 + 289.0 / 5.0 - 1.0,
    );
}

#[test]
fn fischer_below_increment() {
    let mut tc = TimeControls::fischer(300.0, 10.0);
    tc.time_left(5.0, 0).unwrap();
    // rec = 5 - lag twice, max = 5 - lag once.
    assert_budget(tc.get_time(AREA, 0, 1.0), 0.0, 3.0, 4.0);
    // Negative reported time is tolerated.
    tc.time_left(-2.0, 0).unwrap();
    assert_budget(tc.get_time(AREA, 0, 1.0), 0.0, 0.0, 0.0);
}

#[test]
fn fischer_capped() {
    let tc = TimeControls::fischer_capped(100.0, 10.0, 105.0, 20.0).unwrap();
    // Near the cap we must spend at least 100+10-105 = 5 s or lose the
    // increment; the per-move cap bounds max at 20.
    assert_budget(
        tc.get_time(AREA, 0, 0.0),
        5.0,
        10.0 + 90.0 / INC_TURNS,
        20.0,
    );
    assert_eq!(
        TimeControls::fischer_capped(100.0, 10.0, 50.0, 20.0),
        Err(TimeControlError::MainTimeLimitBelowMainTime)
    );
}

#[test]
fn byo_yomi_in_main_time() {
    let tc = TimeControls::byo_yomi(600.0, 30.0, 5);
    // Optimal turns (600/30)/e = 7.3576 stretched to 1.75x = 12.8758.
    let turns = 20.0 * (-1.0f64).exp() * 1.75;
    // max = 30 + max(min(30*1.75, 600), 600/5).
    assert_budget(tc.get_time(AREA, 0, 0.0), 0.0, 600.0 / turns, 150.0);
}

#[test]
fn byo_yomi_many_periods_count_as_main_time() {
    // 10 periods: all but 5 are added to main time (5 * 30 = 150 s more).
    let tc = TimeControls::byo_yomi(0.0, 30.0, 10);
    let turns = 5.0 * (-1.0f64).exp() * 1.75;
    let b = tc.get_time(AREA, 0, 0.0);
    assert_budget(b, 0.0, 150.0 / turns, 30.0 + 52.5);
}

#[test]
fn byo_yomi_in_overtime() {
    let mut tc = TimeControls::byo_yomi(600.0, 30.0, 5);
    // KGS sends periods left as "stones".
    tc.time_left(25.0, 3).unwrap();
    assert!(tc.in_overtime());
    assert_eq!((tc.periods_left(), tc.stones_left_in_period()), (3, 1));
    assert_budget(tc.get_time(AREA, 100, 0.0), 25.0, 25.0, 25.0);
    assert_budget(tc.get_time(AREA, 100, 1.0), 24.0, 24.0, 24.0);
    // The last period: the lag buffer doubles, running out loses.
    tc.time_left(25.0, 1).unwrap();
    assert_budget(tc.get_time(AREA, 100, 1.0), 23.0, 23.0, 23.0);
    // Very little left in the period with periods to spare: spend a period.
    tc.time_left(2.0, 5).unwrap();
    assert_budget(tc.get_time(AREA, 100, 0.0), 32.0, 32.0, 32.0);
}

#[test]
fn byo_yomi_negative_main_time_rolls_into_periods() {
    let mut tc = TimeControls::byo_yomi(600.0, 30.0, 3);
    // 5 s past main time (a lagging controller): 25 s left of the first
    // period, one stone to play in it.
    tc.time_left(-5.0, 0).unwrap();
    assert_budget(tc.get_time(AREA, 100, 0.0), 25.0, 25.0, 25.0);
}

#[test]
fn canadian_start_and_overtime() {
    // time_settings 0 300 25: straight into a 25-stone, 300 s period.
    let mut tc = TimeControls::canadian(0.0, 300.0, 25);
    // rec: the 12 s per stone; max: 300/(0.75*25+0.25) = 15.789.
    assert_budget(tc.get_time(AREA, 0, 0.0), 0.0, 12.0, 300.0 / 19.0);
    tc.time_left(100.0, 10).unwrap();
    assert_budget(tc.get_time(AREA, 0, 0.0), 0.0, 10.0, 100.0 / 7.75);
    // More stones than the period has: capped at 25.
    tc.time_left(100.0, 30).unwrap();
    assert_eq!(tc.stones_left_in_period(), 25);
    assert_budget(tc.get_time(AREA, 0, 0.0), 0.0, 4.0, 100.0 / 19.0);
    // One stone left: must use at least the whole period.
    tc.time_left(7.0, 1).unwrap();
    assert_budget(tc.get_time(AREA, 0, 0.0), 7.0, 7.0, 7.0);
}

#[test]
fn unlimited() {
    let tc = TimeControls::unlimited();
    assert!(tc.is_effectively_unlimited());
    let b = tc.get_time(AREA, 0, 0.0);
    assert!(b.recommended > 1e27 && b.max >= b.recommended);
    assert!(!TimeControls::absolute(600.0).is_effectively_unlimited());
    let capped = TimeControls::fischer_capped(1e30, 0.0, 1e40, 10.0).unwrap();
    assert!(!capped.is_effectively_unlimited());
}

#[test]
fn time_left_errors() {
    let mut tc = TimeControls::absolute(600.0);
    assert_eq!(
        tc.time_left(5.0, 3),
        Err(TimeControlError::NoOvertimePeriods)
    );
    assert_eq!(tc.time_left(-11.0, 0), Err(TimeControlError::InvalidTime));
    assert_eq!(
        tc.time_left(f64::NAN, 0),
        Err(TimeControlError::InvalidTime)
    );
    assert_eq!(tc.time_left(5.0, -1), Err(TimeControlError::InvalidStones));
    assert_eq!(
        tc.main_time_left(),
        600.0,
        "a rejected update changes nothing"
    );
    // Back to main time resets the periods.
    let mut tc = TimeControls::byo_yomi(600.0, 30.0, 5);
    tc.time_left(20.0, 2).unwrap();
    tc.time_left(300.0, 0).unwrap();
    assert_eq!(tc, {
        let mut fresh = TimeControls::byo_yomi(600.0, 30.0, 5);
        fresh.main_time_left = 300.0;
        fresh
    });
    assert_eq!(
        TimeControls::canadian_or_byo_yomi(10.0, 30.0, 2, 0),
        Err(TimeControlError::PeriodsWithoutStones)
    );
}

#[test]
fn round_up_time_limit() {
    // Japanese, 10 s main left: use it and the whole next period.
    let mut tc = TimeControls::byo_yomi(600.0, 30.0, 5);
    tc.time_left(10.0, 0).unwrap();
    assert_eq!(tc.round_up_time_limit_if_needed(0.0, 0.0, 5.0), 40.0);
    // Plenty of main time: unchanged.
    tc.time_left(100.0, 0).unwrap();
    assert_eq!(tc.round_up_time_limit_if_needed(0.0, 0.0, 5.0), 5.0);
    // Last stone of a period: use the period, less the lag buffer.
    tc.time_left(20.0, 2).unwrap();
    assert_eq!(tc.round_up_time_limit_if_needed(0.0, 3.0, 5.0), 20.0);
    assert_eq!(tc.round_up_time_limit_if_needed(1.0, 3.0, 5.0), 19.0);

    // Canadian, 5 s main left (< half the 12 s per stone): use it and a bit
    // (1% of the per-stone time) of the period.
    let mut tc = TimeControls::canadian(600.0, 300.0, 25);
    tc.time_left(5.0, 0).unwrap();
    assert!(close(tc.round_up_time_limit_if_needed(0.0, 0.0, 1.0), 5.12));
    // Several stones left in the period: nothing to waste.
    tc.time_left(100.0, 10).unwrap();
    assert_eq!(tc.round_up_time_limit_if_needed(0.0, 0.0, 1.0), 1.0);

    // Fischer and absolute never round.
    let tc = TimeControls::fischer(10.0, 5.0);
    assert_eq!(tc.round_up_time_limit_if_needed(0.0, 0.0, 1.0), 1.0);
}

#[test]
fn debug_string_lists_state() {
    let mut tc = TimeControls::byo_yomi(600.0, 30.0, 5);
    tc.time_left(25.0, 3).unwrap();
    let s = tc.debug_string(AREA, 0, 0.0);
    assert!(s.starts_with("originalMainTime 600 originalNumPeriods 5 numStonesPerPeriod 1 perPeriodTime 30 mainTimeLeft 0 inOvertime 1 numPeriodsLeftIncludingCurrent 3 numStonesLeftInPeriod 1 timeLeftInPeriod 25 minRecMax 25 25 25"), "{s}");
}
