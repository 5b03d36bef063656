//! Games between bots (nets, visits, search settings), as KataGo's
//! `program/play.cpp` plays them for `match` and `gatekeeper`: the match
//! settings ([`MatchSettings`]), one game ([`play_match_game`]), a schedule
//! of games ([`MatchRunner`]: round robin, paired openings, alternating
//! colours, one batching evaluator per model file shared by all games),
//! its reports, and gating ([`Gatekeeper`]). `engine match`,
//! `engine gatekeeper` and `engine learn` build on it.

mod game;
mod gating;
mod report;
mod resume;
mod runner;
mod settings;

pub use game::{play_match_game, GameEnd, GameOutcome, Opening, Thinking};
pub use gating::{gating_decided, GateDecision, GateFolders, GateSettings, Gatekeeper, LOG_HEADER};
pub use report::{pairs_text, summary_json, table, write_summary};
pub use resume::{finished_games, RunManifest, MANIFEST};
pub use runner::{
    game_assignment, load_evaluators, round_robin, Logger, MatchRunner, RunResult, Tally,
};
pub use settings::{bot_params, config_rows, gating_rows, match_rows, BotSpec, MatchSettings};
