//! One player's clock and how long to think on the next move
//! (KataGo's `TimeControls`).

use std::fmt;

use crate::numfmt::format_g;

use super::TimeControlError;

/// Above this, a time is treated as unlimited.
pub const UNLIMITED_TIME_THRESHOLD: f64 = 1e20;
/// The largest time a user may enter.
pub const MAX_USER_INPUT_TIME: f64 = 1e25;
/// What unset times default to when they must be unlimited.
const UNLIMITED_TIME_DEFAULT: f64 = 1e30;
/// Like [`UNLIMITED_TIME_DEFAULT`], and larger than anything else.
const UNLIMITED_TIME_DEFAULT_LARGE: f64 = 1e40;
/// All but the last this many byo-yomi periods are spent like main time.
const NUM_RESERVED_PERIODS: i64 = 5;

/// How long to think on one move, in seconds, with the lag buffer applied.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeBudget {
    /// Stopping before this wastes time that cannot be reclaimed (the rest of
    /// a byo-yomi period, say).
    pub min: f64,
    /// The mean time to aim for.
    pub recommended: f64,
    /// Going over this is very bad, possibly an immediate loss on time.
    pub max: f64,
}

/// One player's time control and clock state, as KataGo models it: Fischer
/// (optionally capped), or generalised byo-yomi (Japanese byo-yomi is
/// periods of one stone; Canadian is one period of many stones), or
/// absolute, or unlimited.
///
/// Fields are private so that the state stays consistent (no Fischer
/// increment together with periods, no periods without stones): that is
/// what lets [`TimeControls::get_time`] be infallible where KataGo throws.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeControls {
    original_main_time: f64,
    increment: f64,
    main_time_limit: f64,
    max_time_per_move: f64,
    original_num_periods: i64,
    num_stones_per_period: i64,
    per_period_time: f64,

    main_time_left: f64,
    in_overtime: bool,
    num_periods_left_including_current: i64,
    num_stones_left_in_period: i64,
    time_left_in_period: f64,
}

impl Default for TimeControls {
    /// No time limit.
    fn default() -> Self {
        TimeControls::unlimited()
    }
}

/// Takes the lag buffer off a time, halving small times instead of
/// driving them to zero.
fn apply_lag_buffer(time: f64, lag_buffer: f64) -> f64 {
    if time < 0.0 {
        time
    } else if time < 2.0 * lag_buffer {
        time * 0.5
    } else {
        time - lag_buffer
    }
}

impl TimeControls {
    /// No time limit (KataGo's default-constructed `TimeControls`).
    pub fn unlimited() -> TimeControls {
        TimeControls {
            original_main_time: UNLIMITED_TIME_DEFAULT,
            increment: 0.0,
            main_time_limit: UNLIMITED_TIME_DEFAULT_LARGE,
            max_time_per_move: UNLIMITED_TIME_DEFAULT_LARGE,
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

    /// Sudden death: `main_time` seconds for the whole game.
    pub fn absolute(main_time: f64) -> TimeControls {
        TimeControls {
            original_main_time: main_time,
            main_time_left: main_time,
            ..TimeControls::unlimited()
        }
    }

    /// Fischer: `increment` seconds added after every move.
    pub fn fischer(main_time: f64, increment: f64) -> TimeControls {
        TimeControls {
            increment,
            ..TimeControls::absolute(main_time)
        }
    }

    /// Capped Fischer: as [`TimeControls::fischer`], but the clock never
    /// holds more than `main_time_limit` and no move may take more than
    /// `max_time_per_move`.
    pub fn fischer_capped(
        main_time: f64,
        increment: f64,
        main_time_limit: f64,
        max_time_per_move: f64,
    ) -> Result<TimeControls, TimeControlError> {
        if main_time_limit < main_time {
            return Err(TimeControlError::MainTimeLimitBelowMainTime);
        }
        Ok(TimeControls {
            main_time_limit,
            max_time_per_move,
            ..TimeControls::fischer(main_time, increment)
        })
    }

    /// Japanese byo-yomi: `num_periods` periods of `period_time` seconds,
    /// one move each.
    pub fn byo_yomi(main_time: f64, period_time: f64, num_periods: u32) -> TimeControls {
        TimeControls::periods(main_time, period_time, num_periods, 1)
    }

    /// Canadian: one period of `period_time` seconds for `num_stones` moves.
    pub fn canadian(main_time: f64, period_time: f64, num_stones: u32) -> TimeControls {
        TimeControls::periods(main_time, period_time, 1, num_stones)
    }

    /// The general form: `num_periods` periods of `period_time` seconds,
    /// each for `num_stones_per_period` moves. Zero periods is absolute
    /// time; periods need at least one stone each.
    pub fn canadian_or_byo_yomi(
        main_time: f64,
        period_time: f64,
        num_periods: u32,
        num_stones_per_period: u32,
    ) -> Result<TimeControls, TimeControlError> {
        if num_periods > 0 && num_stones_per_period == 0 {
            return Err(TimeControlError::PeriodsWithoutStones);
        }
        Ok(TimeControls::periods(
            main_time,
            period_time,
            num_periods,
            num_stones_per_period,
        ))
    }

    fn periods(main_time: f64, period_time: f64, periods: u32, stones: u32) -> TimeControls {
        TimeControls {
            original_num_periods: i64::from(periods),
            num_stones_per_period: i64::from(stones),
            per_period_time: period_time,
            num_periods_left_including_current: i64::from(periods),
            ..TimeControls::absolute(main_time)
        }
    }

    /// Whether this control never limits thinking in practice.
    pub fn is_effectively_unlimited(&self) -> bool {
        (self.main_time_left > UNLIMITED_TIME_THRESHOLD
            || (self.in_overtime && self.time_left_in_period > UNLIMITED_TIME_THRESHOLD))
            && self.max_time_per_move > UNLIMITED_TIME_THRESHOLD
    }

    /// Whether this control has overtime periods (byo-yomi or Canadian).
    pub fn has_periods(&self) -> bool {
        self.original_num_periods > 0
    }

    /// Main time left, in seconds.
    pub fn main_time_left(&self) -> f64 {
        self.main_time_left
    }

    /// Whether the player is in overtime (byo-yomi periods).
    pub fn in_overtime(&self) -> bool {
        self.in_overtime
    }

    /// Seconds left in the current period (overtime only).
    pub fn time_left_in_period(&self) -> f64 {
        self.time_left_in_period
    }

    /// Periods left, counting the current one.
    pub fn periods_left(&self) -> i64 {
        self.num_periods_left_including_current
    }

    /// Stones still to play in the current period (overtime only).
    pub fn stones_left_in_period(&self) -> i64 {
        self.num_stones_left_in_period
    }

    /// GTP `time_left`: the controller reports the clock. `stones == 0`
    /// means main time; otherwise the player is in overtime with `time`
    /// left in the period and `stones` to play. For Japanese byo-yomi
    /// (several one-stone periods) `stones` counts periods left instead,
    /// as KGS sends it.
    pub fn time_left(&mut self, time: f64, stones: i64) -> Result<(), TimeControlError> {
        // Slightly negative times happen with lagging controllers.
        if time.is_nan() || !(-10.0..=MAX_USER_INPUT_TIME).contains(&time) {
            return Err(TimeControlError::InvalidTime);
        }
        if !(0..=100_000).contains(&stones) {
            return Err(TimeControlError::InvalidStones);
        }
        if stones > 0 && self.original_num_periods <= 0 {
            return Err(TimeControlError::NoOvertimePeriods);
        }
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
        Ok(())
    }

    /// How long to think on the next move (KataGo's `getTime`). The game's
    /// progress is estimated crudely from the board area (`x * y`) and the
    /// number of stones on the board; `lag_buffer` seconds are kept back for
    /// network and GUI delays.
    pub fn get_time(
        &self,
        board_area: usize,
        stones_on_board: usize,
        lag_buffer: f64,
    ) -> TimeBudget {
        let area = board_area as f64;
        let stones = stones_on_board as f64;
        // Moves left for us (half of all moves) if the game goes on to a
        // typical length for the time system, with a floor near the end.
        let turns_left = |typical: f64, floor: f64| (typical - stones).max(floor) * 0.5;
        let turns_left_absolute = turns_left(0.95 * area + 20.0, 0.15 * area + 30.0);
        let turns_left_increment = turns_left(0.75 * area + 15.0, 0.10 * area + 20.0);
        let turns_left_byo_yomi = turns_left(0.50 * area + 10.0, 0.02 * area + 4.0);

        let divide_for_increment = |time: f64| {
            if time <= 0.0 {
                return time;
            }
            // With a tiny increment, stay close to the absolute-time policy.
            (time / turns_left_increment).min(time / turns_left_absolute + 2.0 * self.increment)
        };
        let divide_for_byo_yomi = |time: f64| {
            if self.per_period_time <= 0.0 || self.num_stones_per_period <= 0 {
                return time / turns_left_absolute;
            }
            let byo_yomi_per_move = self.per_period_time / self.num_stones_per_period as f64;
            // If strength grows with log(time), spending e times the byo-yomi
            // time per move, and so running out after 1/e as many moves, is
            // optimal; stretch that towards the typical game length, as time
            // deep in the midgame matters more, but never beyond absolute time.
            let optimal_turns = (time / byo_yomi_per_move) * (-1.0f64).exp();
            let mut turns = optimal_turns;
            if turns_left_byo_yomi > optimal_turns {
                turns = turns_left_byo_yomi.min(optimal_turns * 1.75);
            }
            turns = turns.min(turns_left_absolute).max(1.0);
            let mut to_use =
                (time / turns).min(time / turns_left_absolute + 3.0 * byo_yomi_per_move);
            // Never plan less than the byo-yomi time per move.
            to_use = to_use.max(byo_yomi_per_move);
            // Nearly out of main time: dip into the first period at once.
            if to_use < byo_yomi_per_move * 1.5 && time < byo_yomi_per_move * 1.5 {
                to_use = time + byo_yomi_per_move;
            }
            to_use
        };

        let mut lag = lag_buffer;
        let (mut min, mut rec, mut max);
        if self.increment > 0.0 || self.num_periods_left_including_current <= 0 {
            // Fischer or absolute. Controllers may report negative time; do
            // the best we can.
            let m = self.main_time_left;
            min = (m * 0.5)
                .max(0.0)
                .min((m + self.increment - self.main_time_limit).max(0.0));
            if m <= self.increment {
                // The lag buffer is applied twice on purpose: extra safety.
                rec = apply_lag_buffer(m, lag);
                max = m;
            } else {
                let excess = apply_lag_buffer(m - self.increment, lag);
                rec = self.increment + divide_for_increment(excess);
                max = m.min(self.increment + excess / 5.0);
            }
        } else {
            let ClockAfter {
                mut main_left,
                mut in_overtime,
                mut periods_left,
                mut period_left,
                stones_left,
            } = self.clock_after(None);
            // Crudely treat all but the last few periods as main time.
            if periods_left > NUM_RESERVED_PERIODS {
                in_overtime = false;
                let spare = (periods_left - NUM_RESERVED_PERIODS) as f64;
                if !self.in_overtime {
                    main_left += self.per_period_time * spare;
                } else {
                    main_left += period_left + self.per_period_time * (spare - 1.0);
                }
            }

            if !in_overtime {
                // The most we would tolerate spending on one byo-yomi move.
                let large_per_move =
                    self.per_period_time / (0.75 * self.num_stones_per_period as f64 + 0.25);
                min = 0.0;
                rec = divide_for_byo_yomi(main_left);
                max = large_per_move + (large_per_move * 1.75).min(main_left).max(main_left / 5.0);
                // Going into byo-yomi anyway: may as well use the whole period.
                if max > main_left && max < main_left + large_per_move {
                    max = main_left + large_per_move;
                }
                // Entering the last period of one stone: running out kills.
                if max > main_left && periods_left <= 1 && self.num_stones_per_period <= 1 {
                    lag *= 2.0;
                }
            } else {
                // Far into the period (lag, reconnection) with periods to
                // spare: spend one to get more thinking time.
                if periods_left > 1
                    && apply_lag_buffer(period_left, lag)
                        < apply_lag_buffer(0.5 * self.per_period_time, lag)
                            * (periods_left - 1) as f64
                            / (NUM_RESERVED_PERIODS - 1) as f64
                {
                    periods_left -= 1;
                    period_left += self.per_period_time;
                }
                let stones = stones_left as f64;
                min = if stones_left <= 1 { period_left } else { 0.0 };
                rec = period_left / stones;
                max = period_left / (0.75 * stones + 0.25);
                // The last stone of the last period: running out kills.
                if periods_left <= 1 && stones_left <= 1 {
                    lag *= 2.0;
                }
            }
        }

        max = max.min(self.max_time_per_move);
        min = apply_lag_buffer(min, lag).max(0.0);
        rec = apply_lag_buffer(rec, lag).max(0.0);
        max = apply_lag_buffer(max, lag).max(0.0);
        TimeBudget {
            min: min.min(max),
            recommended: rec.min(max),
            max,
        }
    }

    /// Raises a planned time limit where stopping at it would waste time:
    /// the rest of the main time when a byo-yomi period follows anyway, or
    /// the rest of a one-stone period (KataGo's `roundUpTimeLimitIfNeeded`).
    /// `time_used` is the time already spent on this move.
    pub fn round_up_time_limit_if_needed(
        &self,
        lag_buffer: f64,
        time_used: f64,
        time_limit: f64,
    ) -> f64 {
        if self.increment > 0.0 || self.num_periods_left_including_current <= 0 {
            return time_limit;
        }
        // Where the clock will be after `time_used`.
        let ClockAfter {
            main_left,
            in_overtime,
            period_left,
            stones_left,
            ..
        } = self.clock_after(Some(time_used));

        let per_move = self.per_period_time / self.num_stones_per_period as f64;
        let per_move_buffered = apply_lag_buffer(per_move, lag_buffer);
        // Like the lag buffer, but bounded away from zero and by the per-move time.
        let bit_of_time = lag_buffer
            .max(per_move_buffered * 0.01)
            .min(per_move_buffered);

        let rounded = if !in_overtime {
            if main_left >= per_move * 0.5 {
                return time_limit;
            }
            if self.num_stones_per_period <= 1 {
                // Japanese: use up the main time and the whole period.
                time_used + main_left + per_move_buffered
            } else {
                // Canadian: use up the main time and get a bit into the period.
                time_used + main_left + bit_of_time
            }
        } else {
            if period_left <= 0.0 {
                // Probably lost on time already; change nothing.
                return time_limit;
            }
            if stones_left > 1 {
                // Entered the period this move: make sure the move counts
                // in the new period rather than submitting just before it.
                let used_of_period = self.per_period_time - period_left;
                if !self.in_overtime && used_of_period < bit_of_time {
                    time_used + bit_of_time - used_of_period
                } else {
                    return time_limit;
                }
            } else {
                // One stone left: whatever we leave of the period is lost.
                apply_lag_buffer(time_used + period_left, lag_buffer)
            }
        };
        if rounded < time_used {
            return time_limit;
        }
        time_limit.max(rounded)
    }

    /// The state and the plan for the next move, for `kata-debug-print-tc`.
    pub fn debug_string(
        &self,
        board_area: usize,
        stones_on_board: usize,
        lag_buffer: f64,
    ) -> String {
        let b = self.get_time(board_area, stones_on_board, lag_buffer);
        let rrec0 = self.round_up_time_limit_if_needed(lag_buffer, 0.0, b.recommended);
        let rreclimit =
            self.round_up_time_limit_if_needed(lag_buffer, b.recommended - 0.000001, b.recommended);
        let rreclimit2 =
            self.round_up_time_limit_if_needed(lag_buffer, rreclimit - 0.000001, rreclimit);
        let g = |x: f64| format_g(x, false);
        format!(
            "{self} minRecMax {} {} {} rrec0 {} rreclimit {} rreclimit2 {}",
            g(b.min),
            g(b.recommended),
            g(b.max),
            g(rrec0),
            g(rreclimit),
            g(rreclimit2)
        )
    }
}

/// A byo-yomi clock as it stands, or as it will stand after some time.
struct ClockAfter {
    main_left: f64,
    in_overtime: bool,
    periods_left: i64,
    period_left: f64,
    stones_left: i64,
}

impl TimeControls {
    /// The clock after `time_used` (taken from the main time, or in
    /// overtime from the period), with KataGo's reading of negative times:
    /// a negative main time means that far into overtime, a negative
    /// period time that far into the next period. `None`: the clock as it
    /// stands, nothing subtracted.
    fn clock_after(&self, time_used: Option<f64>) -> ClockAfter {
        let mut c = ClockAfter {
            main_left: self.main_time_left,
            in_overtime: self.in_overtime,
            periods_left: self.num_periods_left_including_current,
            period_left: self.time_left_in_period,
            stones_left: self.num_stones_left_in_period,
        };
        if let Some(used) = time_used {
            if !c.in_overtime {
                c.main_left -= used;
            } else {
                c.period_left -= used;
            }
        }
        if c.main_left < 0.0 && !c.in_overtime {
            c.in_overtime = true;
            c.period_left = c.main_left + self.per_period_time;
            c.stones_left = self.num_stones_per_period;
        }
        if c.in_overtime {
            while c.period_left < 0.0 && c.periods_left > 1 {
                c.periods_left -= 1;
                c.period_left += self.per_period_time;
            }
        }
        c
    }
}

impl fmt::Display for TimeControls {
    /// KataGo's debug form: `originalMainTime 600 mainTimeLeft 540 inOvertime 0`...,
    /// numbers as a C++ stream prints them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let g = |x: f64| format_g(x, false);
        write!(f, "originalMainTime {}", g(self.original_main_time))?;
        if self.increment != 0.0 {
            write!(f, " increment {}", g(self.increment))?;
        }
        if self.main_time_limit < UNLIMITED_TIME_THRESHOLD {
            write!(f, " mainTimeLimit {}", g(self.main_time_limit))?;
        }
        if self.max_time_per_move < UNLIMITED_TIME_THRESHOLD {
            write!(f, " maxTimePerMove {}", g(self.max_time_per_move))?;
        }
        if self.original_num_periods != 0 {
            write!(f, " originalNumPeriods {}", self.original_num_periods)?;
        }
        if self.num_stones_per_period != 0 {
            write!(f, " numStonesPerPeriod {}", self.num_stones_per_period)?;
        }
        if self.per_period_time != 0.0 {
            write!(f, " perPeriodTime {}", g(self.per_period_time))?;
        }
        write!(
            f,
            " mainTimeLeft {} inOvertime {}",
            g(self.main_time_left),
            u8::from(self.in_overtime)
        )?;
        if self.num_periods_left_including_current != 0 {
            write!(
                f,
                " numPeriodsLeftIncludingCurrent {}",
                self.num_periods_left_including_current
            )?;
        }
        if self.num_stones_left_in_period != 0 {
            write!(
                f,
                " numStonesLeftInPeriod {}",
                self.num_stones_left_in_period
            )?;
        }
        if self.time_left_in_period != 0.0 {
            write!(f, " timeLeftInPeriod {}", g(self.time_left_in_period))?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "controls_tests.rs"]
mod tests;
