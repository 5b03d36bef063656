//! One review job: its state, the final responses it records, and what
//! its `GET` shows (the per-move results and the largest mistakes).

use std::collections::BTreeSet;
use std::time::Instant;

use parking_lot::Mutex;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::sync::Notify;

use crate::analysis::query::Parsed;
use crate::analysis::{ResponseSink, Submitted};
use crate::game::Player;

use super::super::keys::InFlight;
use super::super::port::ClientPort;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Mode {
    /// A low-visit scan, then the largest mistakes again, deeper.
    #[default]
    Fast,
    /// Every turn at the request's visits.
    Full,
}

impl Mode {
    pub(super) fn name(self) -> &'static str {
        match self {
            Mode::Fast => "fast",
            Mode::Full => "full",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Status {
    /// Accepted; no search has answered yet.
    Queued,
    Running,
    Done,
    Cancelled,
    /// Some positions got no result (their searches were terminated).
    Failed,
}

impl Status {
    pub(super) fn name(self) -> &'static str {
        match self {
            Status::Queued => "queued",
            Status::Running => "running",
            Status::Done => "done",
            Status::Cancelled => "cancelled",
            Status::Failed => "failed",
        }
    }

    pub(super) fn finished(self) -> bool {
        matches!(self, Status::Done | Status::Cancelled | Status::Failed)
    }
}

/// One searched position, as the review keeps it (Black's view).
#[derive(Debug, Clone)]
struct Eval {
    winrate: f64,
    score_lead: f64,
    visits: i64,
    best_move: Option<String>,
}

/// What the engine writes for one analysed turn (the fields a review
/// reads; everything else in the response is ignored).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FinalResponse {
    turn_number: usize,
    #[serde(default)]
    is_during_search: bool,
    #[serde(default)]
    no_results: bool,
    root_info: Option<RootJson>,
    #[serde(default)]
    move_infos: Vec<MoveJson>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RootJson {
    winrate: f64,
    score_lead: f64,
    visits: i64,
}

#[derive(Debug, Deserialize)]
struct MoveJson {
    #[serde(rename = "move")]
    mv: String,
    order: i64,
}

/// One move's review: the position before it and the one after.
#[derive(Debug, Clone)]
struct MoveReview {
    turn: usize,
    points_lost: f64,
    winrate_lost: f64,
    json: Value,
}

struct JobState {
    status: Status,
    /// 1: the scan (or the full review), 2: the deeper searches.
    pass: u8,
    /// Positions answered, and to answer (the second pass's are added when
    /// it starts).
    done: usize,
    total: usize,
    /// By turn, `0..=moves`.
    evals: Vec<Option<Eval>>,
    /// The engine's warnings (e.g. rules the network does not know).
    warnings: Vec<Value>,
    error: Option<String>,
    finished: Option<Instant>,
}

/// What a running review holds; dropped when it ends or is cancelled,
/// which stops its searches (the client cancels on drop) and frees its
/// key's in-flight place.
pub(super) struct Live {
    pub(super) client: Box<dyn ClientPort>,
    pub(super) _place: InFlight,
}

pub(super) struct Job {
    pub(super) id: String,
    pub(super) key: usize,
    mode: Mode,
    scan_visits: u64,
    pub(super) deep_visits: Option<u64>,
    mistakes_listed: usize,
    /// The moves: who played and where (GTP).
    pub(super) moves: Vec<(Player, String)>,
    state: Mutex<JobState>,
    live: Mutex<Option<Live>>,
    cancelled: Notify,
}

/// The review's sink: its final responses go to its own task.
pub(super) struct ReviewSink(pub(super) UnboundedSender<Event>);

pub(super) enum Event {
    Response(Value),
    QueryDone,
}

impl ResponseSink for ReviewSink {
    fn send(&self, value: &Value) {
        let _ = self.0.send(Event::Response(value.clone()));
    }

    fn query_finished(&self) {
        let _ = self.0.send(Event::QueryDone);
    }
}

impl Job {
    /// A queued job of `moves`, holding `live` while it runs.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        id: String,
        key: usize,
        mode: Mode,
        scan_visits: u64,
        deep_visits: Option<u64>,
        mistakes_listed: usize,
        moves: Vec<(Player, String)>,
        live: Live,
    ) -> Job {
        let positions = moves.len() + 1;
        Job {
            id,
            key,
            mode,
            scan_visits,
            deep_visits,
            mistakes_listed,
            moves,
            state: Mutex::new(JobState {
                status: Status::Queued,
                pass: 1,
                done: 0,
                total: positions,
                evals: vec![None; positions],
                warnings: Vec::new(),
                error: None,
                finished: None,
            }),
            live: Mutex::new(Some(live)),
            cancelled: Notify::new(),
        }
    }

    /// Its status now.
    pub(super) fn status(&self) -> Status {
        self.state.lock().status
    }

    /// When it ended, if it has.
    pub(super) fn finished_at(&self) -> Option<Instant> {
        self.state.lock().finished
    }

    /// Submits the second pass's query of `positions` positions through
    /// the job's client; `None` if the job has ended.
    pub(super) fn submit_second_pass(&self, parsed: Parsed, positions: usize) -> Option<Submitted> {
        {
            let mut st = self.state.lock();
            st.pass = 2;
            st.total += positions;
        }
        let live = self.live.lock();
        Some(live.as_ref()?.client.submit(parsed, None))
    }

    /// Records final responses until the query's last; false if the job
    /// was cancelled meanwhile.
    pub(super) async fn collect(&self, rx: &mut UnboundedReceiver<Event>) -> bool {
        loop {
            tokio::select! {
                event = rx.recv() => match event {
                    Some(Event::Response(value)) => self.record(value),
                    Some(Event::QueryDone) => return true,
                    // The client was dropped: cancelled.
                    None => return false,
                },
                _ = self.cancelled.notified() => return false,
            }
        }
    }

    fn record(&self, value: Value) {
        let mut st = self.state.lock();
        if value.get("warning").is_some() {
            // Each pass's query draws the same ones: kept once, and bounded.
            if st.warnings.len() < 16 && !st.warnings.contains(&value) {
                st.warnings.push(value);
            }
            return;
        }
        let Ok(r) = serde_json::from_value::<FinalResponse>(value) else {
            return;
        };
        if r.is_during_search || r.turn_number >= st.evals.len() {
            return;
        }
        st.done += 1;
        if st.status == Status::Queued {
            st.status = Status::Running;
        }
        let (false, Some(root)) = (r.no_results, r.root_info) else {
            return;
        };
        let best_move = r
            .move_infos
            .iter()
            .find(|m| m.order == 0)
            .or(r.move_infos.first())
            .map(|m| m.mv.clone());
        st.evals[r.turn_number] = Some(Eval {
            winrate: root.winrate,
            score_lead: root.score_lead,
            visits: root.visits,
            best_move,
        });
    }

    /// The reviewed moves so far (those whose positions before and after
    /// both have results).
    fn move_reviews(&self, st: &JobState) -> Vec<MoveReview> {
        let mut out = Vec::with_capacity(self.moves.len());
        for (turn, (player, mv)) in self.moves.iter().enumerate() {
            let (Some(Some(before)), Some(Some(after))) =
                (st.evals.get(turn), st.evals.get(turn + 1))
            else {
                continue;
            };
            // Values are Black's: the mover's loss is Black's drop for
            // Black, Black's gain for White.
            let sign = if *player == Player::Black { 1.0 } else { -1.0 };
            let points_lost = sign * (before.score_lead - after.score_lead);
            let winrate_lost = sign * (before.winrate - after.winrate);
            out.push(MoveReview {
                turn,
                points_lost,
                winrate_lost,
                json: json!({
                    "turn": turn,
                    "move": mv,
                    "player": player.letter().to_string(),
                    "winrate": after.winrate,
                    "scoreLead": after.score_lead,
                    "bestMove": before.best_move,
                    "pointsLost": points_lost,
                    "winrateLost": winrate_lost,
                    "visits": before.visits,
                }),
            });
        }
        out
    }

    /// Moves by size of mistake: points lost, then winrate lost, then turn.
    /// (`partial_cmp`, not `total_cmp`: -0.0 and 0.0 are the same loss.)
    fn by_mistake(reviews: &mut [MoveReview]) {
        let desc = |a: f64, b: f64| b.partial_cmp(&a).unwrap_or(std::cmp::Ordering::Equal);
        reviews.sort_by(|a, b| {
            desc(a.points_lost, b.points_lost)
                .then(desc(a.winrate_lost, b.winrate_lost))
                .then(a.turn.cmp(&b.turn))
        });
    }

    /// The positions of the second pass: before and after each of the
    /// `reviewDeepMistakes` largest mistakes of the scan.
    pub(super) fn deep_turns(&self) -> Vec<usize> {
        let st = self.state.lock();
        let mut reviews = self.move_reviews(&st);
        Self::by_mistake(&mut reviews);
        let turns: BTreeSet<usize> = reviews
            .iter()
            .take(self.mistakes_listed)
            .flat_map(|r| [r.turn, r.turn + 1])
            .collect();
        turns.into_iter().collect()
    }

    /// Ends the job (done, or failed with `error` or with positions left
    /// without results), unless it already ended; stops what is left.
    pub(super) fn end(&self, error: Option<String>) {
        {
            let mut st = self.state.lock();
            if !st.status.finished() {
                let missing = st.evals.iter().filter(|e| e.is_none()).count();
                let error = error.or_else(|| {
                    (missing > 0).then(|| {
                        format!(
                            "{missing} positions got no result (their searches were terminated)"
                        )
                    })
                });
                st.status = if error.is_some() {
                    Status::Failed
                } else {
                    Status::Done
                };
                st.error = error;
                st.finished = Some(Instant::now());
            }
        }
        drop(self.live.lock().take());
    }

    /// Cancels the job if it is queued or running: its searches are
    /// stopped and its key's place freed now.
    pub(super) fn cancel(&self) {
        {
            let mut st = self.state.lock();
            if st.status.finished() {
                return;
            }
            st.status = Status::Cancelled;
            st.finished = Some(Instant::now());
        }
        drop(self.live.lock().take());
        self.cancelled.notify_one();
    }

    pub(super) fn to_json(&self) -> Value {
        let st = self.state.lock();
        let reviews = self.move_reviews(&st);
        let mut mistakes: Vec<MoveReview> = reviews
            .iter()
            .filter(|r| r.points_lost > 0.0)
            .cloned()
            .collect();
        Self::by_mistake(&mut mistakes);
        let mistakes: Vec<usize> = mistakes
            .iter()
            .take(self.mistakes_listed)
            .map(|r| r.turn)
            .collect();
        let mut visits = json!({ "scan": self.scan_visits });
        if let Some(deep) = self.deep_visits {
            visits["deep"] = Value::from(deep);
        }
        let mut out = json!({
            "id": self.id,
            "status": st.status.name(),
            "mode": self.mode.name(),
            "visits": visits,
            "pass": st.pass,
            "progress": { "done": st.done, "total": st.total },
            "moves": reviews.into_iter().map(|r| r.json).collect::<Vec<_>>(),
            "mistakes": mistakes,
        });
        if let Some(e) = &st.error {
            out["error"] = Value::from(e.as_str());
        }
        if !st.warnings.is_empty() {
            out["warnings"] = Value::Array(st.warnings.clone());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mistakes_are_the_movers_losses_largest_first() {
        let moves = vec![
            (Player::Black, "E5".to_string()),
            (Player::White, "C3".to_string()),
            (Player::Black, "D4".to_string()),
        ];
        let eval = |lead: f64| {
            Some(Eval {
                winrate: 0.5 + lead / 100.0,
                score_lead: lead,
                visits: 10,
                best_move: Some("A1".into()),
            })
        };
        let job = Job {
            id: "x".into(),
            key: 0,
            mode: Mode::Fast,
            scan_visits: 1,
            deep_visits: Some(2),
            mistakes_listed: 1,
            state: Mutex::new(JobState {
                status: Status::Running,
                pass: 1,
                done: 4,
                total: 4,
                // Black +1, White gives 5 back, Black drops 2.
                evals: vec![eval(0.0), eval(1.0), eval(6.0), eval(4.0)],
                warnings: vec![],
                error: None,
                finished: None,
            }),
            moves,
            live: Mutex::new(None),
            cancelled: Notify::new(),
        };
        let v = job.to_json();
        let lost: Vec<f64> = v["moves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["pointsLost"].as_f64().unwrap())
            .collect();
        assert_eq!(lost, [-1.0, 5.0, 2.0]);
        assert_eq!(v["mistakes"], json!([1]));
        assert_eq!(v["moves"][1]["player"], "W");
        assert_eq!(job.deep_turns(), [1, 2]);
    }
}
