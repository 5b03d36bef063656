//! The engine as the network code sees it: two object-safe traits over
//! [`AnalysisEngine`] and its [`Client`], so the routes are written once
//! whatever the search backend (the network's or the protocol tests'
//! stub).

use std::any::Any;
use std::sync::Arc;

use serde_json::Value;

use crate::nn::EvalStats;

use crate::analysis::query::Parsed;
use crate::analysis::{
    AnalysisBackend, AnalysisEngine, Client, ClientOptions, EngineStats, ResponseSink, Submitted,
};

/// The network evaluator's counters.
pub type NnStats = Box<dyn Fn() -> EvalStats + Send + Sync>;

/// The shared engine.
pub trait EnginePort: Send + Sync + 'static {
    /// A new client whose responses go to `sink`.
    fn client(&self, opts: ClientOptions, sink: Arc<dyn ResponseSink>) -> Box<dyn ClientPort>;
    /// Positions queued in all.
    fn queued(&self) -> usize;
    /// The engine's counters.
    fn stats(&self) -> EngineStats;
    /// Stops everything (after the drain).
    fn kill_and_join(&self);
}

/// One client of the engine; dropping it cancels its open jobs when it
/// was made with `cancel_on_drop`.
pub trait ClientPort: Send + 'static {
    /// See [`Client::submit`].
    fn submit(&self, parsed: Parsed, hold: Option<Box<dyn Any + Send + Sync>>) -> Submitted;
    /// Sends an error answer to this client, after what it was sent before.
    fn error(&self, value: &Value);
}

impl<B: AnalysisBackend> EnginePort for AnalysisEngine<B> {
    fn client(&self, opts: ClientOptions, sink: Arc<dyn ResponseSink>) -> Box<dyn ClientPort> {
        Box::new(AnalysisEngine::client(self, opts, sink))
    }

    fn queued(&self) -> usize {
        AnalysisEngine::queued(self)
    }

    fn stats(&self) -> EngineStats {
        AnalysisEngine::stats(self)
    }

    fn kill_and_join(&self) {
        self.kill();
        self.close_and_join();
    }
}

impl<B: AnalysisBackend> ClientPort for Client<B> {
    fn submit(&self, parsed: Parsed, hold: Option<Box<dyn Any + Send + Sync>>) -> Submitted {
        Client::submit(self, parsed, hold)
    }

    fn error(&self, value: &Value) {
        Client::error(self, value);
    }
}
