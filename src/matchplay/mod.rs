//! `engine match` and `engine gatekeeper`: games between bots (nets,
//! visits, search settings) for strength measurements and for gating new
//! nets in the training loop (KataGo's `match` and `gatekeeper`).
//!
//! Front door: [`run_match`] with [`MatchArgs`], [`run_gatekeeper`] with
//! [`GatekeeperArgs`]; [`MatchSettings`] (the config's keys), [`MatchRunner`]
//! (plays a schedule of games: round robin, paired openings, alternating
//! colours, one batching evaluator per model file shared by all games),
//! and its reports; the statistics (Elo with confidence intervals,
//! Bradley-Terry ratings, SPRT) are the play layer's ([`crate::play::stats`]).

mod cli;
mod game;
mod gatekeeper;
mod report;
mod run;
mod settings;

pub use cli::{run as run_match, MatchArgs};
pub use game::{play_match_game, GameEnd, GameOutcome, Opening};
pub use gatekeeper::{
    run as run_gatekeeper, GateDecision, GateFolders, Gatekeeper, GatekeeperArgs, LOG_HEADER,
};
pub use report::{summary_json, table};
pub use run::{game_assignment, round_robin, Logger, MatchError, MatchRunner, Tally};
pub use settings::{BotSpec, MatchSettings};
