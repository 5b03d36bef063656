//! A stand-in search for testing the protocol without a network: it
//! "visits" one empty point per millisecond, in board order, with made-up
//! values. It obeys the visit limit, the stop flag, the progress schedule and
//! `avoidMoves`/`allowMoves`, which is all the protocol layer can observe.
//!
//! Reachable from the command line only through the hidden
//! `engine analysis -stub-search` flag, for the protocol tests.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::game::{Move, Player};
use crate::nn::NnOutput;

use super::backend::{AnalysisBackend, ModelInfo, SearchJob, Searcher};
use crate::search::{AnalysisSnapshot, MoveInfo, RootInfo};

/// Parameter names the stub accepts (a few real KataGo ones).
const KNOWN: &[&str] = &[
    "maxVisits",
    "rootFpuReductionMax",
    "rootPolicyTemperature",
    "rootPolicyTemperatureEarly",
    "rootNumSymmetriesToSample",
    "playoutDoublingAdvantage",
    "wideRootNoise",
    "ignorePreRootHistory",
    "cpuctExploration",
];

/// Search parameters of the stub.
#[derive(Debug, Clone, PartialEq)]
pub struct StubParams {
    pub max_visits: u64,
}

/// The stub backend (see the module docs).
#[derive(Debug, Clone)]
pub struct StubBackend {
    /// `maxVisits` when a query names none.
    pub default_max_visits: u64,
}

impl AnalysisBackend for StubBackend {
    type Params = StubParams;
    type Searcher = StubSearcher;

    fn query_params(
        &self,
        overrides: &[(String, Value)],
    ) -> Result<(StubParams, Vec<String>), String> {
        let mut p = StubParams {
            max_visits: self.default_max_visits,
        };
        let mut unknown = Vec::new();
        for (k, v) in overrides {
            if k == "maxVisits" {
                p.max_visits = v
                    .as_u64()
                    .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
                    .filter(|&n| n >= 1)
                    .ok_or_else(|| format!("maxVisits: expected a positive integer, got {v}"))?;
            } else if !KNOWN.contains(&k.as_str()) {
                unknown.push(k.clone());
            }
        }
        Ok((p, unknown))
    }

    fn new_searcher(&self, _index: usize) -> StubSearcher {
        StubSearcher
    }

    fn models(&self) -> Vec<ModelInfo> {
        vec![ModelInfo {
            name: "stub".into(),
            internal_name: "stub".into(),
            max_batch_size: 1,
            uses_human_sl_profile: false,
            version: 8,
            using_fp16: "false".into(),
        }]
    }

    fn clear_cache(&self) {}
}

/// The stub's per-thread search.
#[derive(Debug)]
pub struct StubSearcher;

impl Searcher<StubParams> for StubSearcher {
    fn analyze(
        &mut self,
        job: &SearchJob<StubParams>,
        stop: &AtomicBool,
        on_progress: &(dyn Fn(&AnalysisSnapshot) + Sync),
    ) -> AnalysisSnapshot {
        let pos = &job.position;
        let pla = pos.next;
        let mut candidates: Vec<Move> = pos
            .board
            .locs()
            .map(Move::Play)
            .chain([Move::Pass])
            .filter(|&mv| pos.hist.is_legal(&pos.board, mv, pla))
            .collect();
        if let Some(r) = &job.restriction {
            candidates.retain(|&mv| !r.is_barred(pla, mv, 0));
        }
        let start = Instant::now();
        let mut next_report = job.progress.map(|p| start + p.first_after);
        let mut visits = 0u64;
        while visits < job.params.max_visits && !stop.load(Ordering::Acquire) {
            std::thread::sleep(Duration::from_millis(1));
            visits += 1;
            if let (Some(at), Some(p)) = (next_report, job.progress) {
                if Instant::now() >= at {
                    on_progress(&snapshot(job, &candidates, visits));
                    next_report = Some(at + p.every);
                }
            }
        }
        snapshot(job, &candidates, visits)
    }
}

fn snapshot(job: &SearchJob<StubParams>, candidates: &[Move], visits: u64) -> AnalysisSnapshot {
    if visits == 0 {
        return AnalysisSnapshot::default();
    }
    let pos = &job.position;
    let (xs, ys) = (pos.x_size(), pos.y_size());
    let n = xs * ys;
    let children = visits - 1;
    let shown = candidates.len().min(children as usize).min(10);
    let moves = (0..shown)
        .map(|i| {
            let share = children / shown as u64 + u64::from((i as u64) < children % shown as u64);
            let share = share as i64;
            let mut m = MoveInfo {
                mv: candidates[i],
                ..MoveInfo::default()
            };
            m.visits = share;
            m.edge_visits = share;
            m.weight = share as f64;
            m.prior = 1.0 / candidates.len() as f64;
            m.order = i;
            m.pv = vec![candidates[i]];
            m.pv_visits = vec![share];
            m.pv_edge_visits = vec![share];
            if job.contents.moves_ownership {
                m.ownership = Some(vec![0.0; n]);
            }
            if job.contents.moves_ownership_stdev {
                m.ownership_stdev = Some(vec![0.0; n]);
            }
            // White's LCB -0.1, seen by the player to move.
            m.lcb = if pos.next == Player::White { -0.1 } else { 1.1 };
            m
        })
        .collect();
    let mut policy = vec![-1.0f32; n + 1];
    for mv in candidates {
        let i = mv.loc().map_or(n, |l| l.y(xs) * xs + l.x(xs));
        policy[i] = 1.0 / candidates.len() as f32;
    }
    AnalysisSnapshot {
        x_size: xs,
        y_size: ys,
        root_pla: pos.next,
        moves,
        root: Some(RootInfo {
            visits: visits as i64,
            weight: visits as f64,
            score_stdev: 10.0,
            current_player: pos.next,
            ..RootInfo::default()
        }),
        root_human_nn: None,
        root_nn: Some(Arc::new(NnOutput {
            x_size: xs,
            y_size: ys,
            policy,
            white_win_prob: 0.5,
            white_loss_prob: 0.5,
            white_no_result_prob: 0.0,
            white_score_mean: 0.0,
            white_score_mean_sq: 100.0,
            white_lead: 0.0,
            var_time_left: -1.0,
            shortterm_winloss_error: -1.0,
            shortterm_score_error: -1.0,
            white_ownership: None,
        })),
        ownership: job.contents.ownership.then(|| vec![0.0; n]),
        ownership_stdev: job.contents.ownership_stdev.then(|| vec![0.0; n]),
    }
}
