//! The eval cache's side of a [`Search`]: the cache it uses (its own, or
//! one that analysis threads share), the key of its parameters, the fresh
//! root's entry, and recording what a search found.

use std::sync::Arc;

use super::super::eval::{PositionEvaluator, SearchState};
use super::super::tree::eval_cache::EvalCache;
use super::super::tree::{Node, STATE_UNEVALUATED};
use super::Search;
use crate::game::Hash128;

impl<S: SearchState, E: PositionEvaluator<S>> Search<S, E> {
    /// Uses `cache` as the eval cache (analysis threads share one);
    /// `None`: a search makes its own when its parameters ask for one.
    pub fn set_eval_cache(&mut self, cache: Option<Arc<EvalCache>>) {
        self.eval_cache = cache;
    }

    /// The eval cache, once a search made one or one was set.
    pub fn eval_cache(&self) -> Option<&Arc<EvalCache>> {
        self.eval_cache.as_ref()
    }

    /// Forgets what the eval cache remembers (`clear_cache`).
    pub fn clear_eval_cache(&self) {
        if let Some(c) = &self.eval_cache {
            c.clear();
        }
    }

    /// Makes the eval cache the parameters ask for if there is none yet,
    /// sets the key of this search's parameters, and gives a fresh root
    /// its graph hash and what the cache holds for it (KataGo's
    /// `beginSearch`).
    pub(super) fn prepare_eval_cache(&mut self) {
        let wanted = self.params.use_eval_cache && self.params.use_graph_search;
        if wanted && self.eval_cache.is_none() {
            self.eval_cache = EvalCache::for_params(&self.params);
        }
        self.eval_cache_key = if wanted {
            super::super::tree::eval_cache::params_key(&self.params)
        } else {
            Hash128::ZERO
        };
        if let Some(hash) = self.root_graph_hash {
            if self.root.state() == STATE_UNEVALUATED {
                let cached = self
                    .eval_cache
                    .as_ref()
                    .filter(|_| wanted)
                    .and_then(|c| c.find(self.eval_cache_key ^ hash));
                let pla = self.root_state.next_player();
                self.root = Arc::new(Node::new(pla, true).with_graph_hash(hash, cached));
            }
        }
    }

    /// Leaves what the search found in the eval cache, if this search
    /// uses one (KataGo's `recursivelyRecordEvalCache` after a search).
    pub(super) fn record_eval_cache(&self) {
        let ctx = self.ctx(false);
        if let Some(cache) = ctx.eval_cache {
            let min_visits = self.params.eval_cache_min_visits;
            let key = self.eval_cache_key;
            super::super::tree::eval_cache::record_graph(
                cache,
                key,
                &self.root,
                min_visits,
                ctx.root_cached,
            );
        }
    }
}
