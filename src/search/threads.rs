//! The search threads of one [`super::Search::run`]: what they share
//! ([`Shared`]: the playout budget, the stop flag, the first error) and the
//! loop each runs.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};

use parking_lot::Mutex;
use rand::rngs::StdRng;
use rand::SeedableRng;

use super::eval::{EvalError, PositionEvaluator, SearchState};
use super::playout::{Ctx, PlayoutEnd, Worker};
use super::tree::Node;

/// What the search threads share while a search runs.
pub(super) struct Shared {
    /// Playouts started or done: each reserves one unit of the budget
    /// first, so that many threads end at exactly the limit.
    pub(super) reserved: AtomicI64,
    /// Playouts done.
    pub(super) done: AtomicI64,
    /// Set when the search must end (limit, clock or error).
    pub(super) finished: AtomicBool,
    pub(super) error: Mutex<Option<EvalError>>,
    /// With time controls, the most visits the time left allows (`f64`
    /// bits; KataGo's `upperBoundVisitsLeftDueToTime`).
    pub(super) visits_left_by_time: AtomicU64,
    pub(super) budget: i64,
    /// Visits the visit limit leaves at the start.
    pub(super) visits_room: i64,
    pub(super) max_playouts: i64,
    pub(super) has_tc: bool,
}

impl Shared {
    /// The most visits the rest of the search can add (KataGo's
    /// `upperBoundVisitsLeft`: the limits, and the clock under time
    /// controls).
    pub(super) fn visits_left(&self) -> f64 {
        let playouts = self.done.load(Ordering::Acquire);
        let by_time = if self.has_tc {
            f64::from_bits(self.visits_left_by_time.load(Ordering::Acquire))
        } else {
            1e30
        };
        by_time
            .min((self.max_playouts - playouts) as f64)
            .min((self.visits_room - playouts) as f64)
    }

    /// One search thread: playouts until the search is over.
    pub(super) fn search_thread<S: SearchState, E: PositionEvaluator<S>>(
        &self,
        ctx: &Ctx<'_, S, E>,
        root: &Node,
        seed: u64,
        stop: Option<&AtomicBool>,
    ) {
        let mut w = Worker::new(StdRng::seed_from_u64(seed), ctx.root_state.clone());
        let mut retries = 0u32;
        while !(self.finished.load(Ordering::Acquire)
            || stop.is_some_and(|s| s.load(Ordering::Acquire)))
        {
            if self.reserved.fetch_add(1, Ordering::AcqRel) >= self.budget {
                self.reserved.fetch_sub(1, Ordering::AcqRel);
                self.finished.store(true, Ordering::Release);
                break;
            }
            w.reset(ctx, root);
            w.visits_left = self.visits_left();
            match ctx.descend(&mut w, root, true, 0) {
                Ok(PlayoutEnd::Counted | PlayoutEnd::Weightless) => {
                    self.done.fetch_add(1, Ordering::AcqRel);
                    retries = 0;
                }
                Ok(PlayoutEnd::Uncounted) => {
                    self.reserved.fetch_sub(1, Ordering::AcqRel);
                    retries = 0;
                }
                Ok(PlayoutEnd::Retry) => {
                    self.reserved.fetch_sub(1, Ordering::AcqRel);
                    retries += 1;
                    if retries > 16 {
                        std::thread::yield_now();
                    }
                }
                Err(e) => {
                    self.reserved.fetch_sub(1, Ordering::AcqRel);
                    *self.error.lock() = Some(e);
                    self.finished.store(true, Ordering::Release);
                }
            }
        }
    }
}
