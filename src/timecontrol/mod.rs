//! Time controls and time management, as KataGo does them.
//!
//! - [`TimeControls`]: one player's clock (absolute, Fischer, capped
//!   Fischer, Japanese byo-yomi, Canadian, unlimited), updated by GTP
//!   `time_left`, and [`TimeControls::get_time`]: the (min, recommended,
//!   max) seconds for the next move.
//! - The GTP commands' argument parsers: [`parse_time_settings`],
//!   [`parse_kgs_time_settings`], [`parse_kata_time_settings`],
//!   [`parse_time_left`], and [`KATA_TIME_SETTINGS_LIST`].
//! - [`TimeParams`]: KataGo's time parameters (`lagBuffer`, the search
//!   factors, midgame and obvious-move factors) and the search's time limit
//!   for a move, [`TimeParams::search_time_limit`].
//!
//! ```
//! use engine::timecontrol::{parse_kgs_time_settings, TimeControls};
//! let mut tc = parse_kgs_time_settings(&["byoyomi", "600", "30", "5"])?;
//! tc.time_left(25.0, 3)?; // in overtime: 25 s left, 3 periods
//! let budget = tc.get_time(19 * 19, 120, 0.0);
//! assert_eq!((budget.min, budget.recommended, budget.max), (25.0, 25.0, 25.0));
//! # Ok::<(), engine::timecontrol::TimeControlError>(())
//! ```

mod budget;
mod controls;
mod error;
mod gtp;

pub use budget::{upper_bound_visits_left, SearchTimeState, TimeParams};
pub use controls::{TimeBudget, TimeControls, MAX_USER_INPUT_TIME, UNLIMITED_TIME_THRESHOLD};
pub use error::TimeControlError;
pub use gtp::{
    parse_kata_time_settings, parse_kgs_time_settings, parse_time_left, parse_time_settings,
    KATA_TIME_SETTINGS_LIST,
};
