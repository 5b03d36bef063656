//! Whole-game reviews as jobs: `POST /v1/reviews` (an SGF, or moves and
//! the position fields of an analysis query) starts one, `GET
//! /v1/reviews/{id}` shows its progress and per-move results, `DELETE
//! /v1/reviews/{id}` cancels it.
//!
//! A review is a client of the same shared engine as every query: its
//! searches are analysis queries with `analyzeTurns`, submitted under its
//! key (so the fair queue and the key's weight apply, and its positions
//! batch with everyone's), their final responses collected by a sink.
//! "fast" (as OGS's free reviews) scans every turn at `reviewFastVisits`,
//! then searches the `reviewDeepMistakes` largest mistakes (the positions
//! before and after each) again at `reviewDeepVisits`; "full" searches
//! every turn at the request's `visits`.
//!
//! A running review holds one of its key's `maxInFlight` places (it counts
//! as one query, and once in `perMinute`). Jobs live in memory: at most
//! `reviewMaxActivePerKey` queued or running per key, `reviewMaxStored` in
//! all, finished ones forgotten `reviewTtlSeconds` after they end. A job is
//! its key's: any other key gets 404, as for an unknown id.

mod job;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use parking_lot::Mutex;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};

use crate::analysis::query::Request as Line;
use crate::analysis::{Submitted, TerminateScope};
use crate::game::sgf::parse_collection;
use crate::game::{Color, Loc, Move, Player};

use super::http::{read_bytes, ApiError, App};
use job::{Event, Job, Live, Mode, ReviewSink, Status};

/// The `review*` settings of `configs/serve.toml` (declared with the
/// other serve keys in `serve/mod.rs`).
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewSettings {
    /// `reviewFastVisits`: visits per position of a fast review's scan.
    pub fast_visits: u64,
    /// `reviewDeepVisits`: visits of a fast review's second pass.
    pub deep_visits: u64,
    /// `reviewDeepMistakes`: mistakes a fast review searches again, and
    /// the length of every review's `mistakes` list.
    pub deep_mistakes: usize,
    /// `reviewFullVisits`: a full review's visits when it names none.
    pub full_visits: u64,
    /// `reviewMaxVisits`: most visits a full review may ask for (more is
    /// lowered to this).
    pub max_visits: u64,
    /// `reviewMaxActivePerKey`: queued or running reviews per key (429).
    pub max_active_per_key: usize,
    /// `reviewMaxStored`: reviews held in memory, all keys, any status (503).
    pub max_stored: usize,
    /// `reviewTtlSeconds`: how long a finished review stays readable.
    pub ttl: Duration,
}

impl Default for ReviewSettings {
    fn default() -> Self {
        ReviewSettings {
            fast_visits: 25,
            deep_visits: 200,
            deep_mistakes: 10,
            full_visits: 200,
            max_visits: 2000,
            max_active_per_key: 4,
            max_stored: 1000,
            ttl: Duration::from_secs(3600),
        }
    }
}

/// Every review held, by id.
#[derive(Default)]
pub(super) struct Reviews {
    jobs: Mutex<HashMap<String, Arc<Job>>>,
}

/// What the review routes share: the server's, and the jobs.
struct Service {
    app: Arc<App>,
    reviews: Arc<Reviews>,
}

/// The review routes, for the server's router (of any state: they carry
/// their own).
pub(super) fn router<S: Clone + Send + Sync + 'static>(
    app: Arc<App>,
    reviews: Arc<Reviews>,
) -> Router<S> {
    Router::new()
        .route("/v1/reviews", post(create))
        .route("/v1/reviews/{id}", get(show).delete(cancel))
        .with_state(Arc::new(Service { app, reviews }))
}

/// The statuses, in the order `/metrics` lists them.
const STATUSES: [Status; 5] = [
    Status::Queued,
    Status::Running,
    Status::Done,
    Status::Cancelled,
    Status::Failed,
];

impl Reviews {
    /// Jobs held by status (after forgetting the expired ones).
    pub(super) fn counts(&self, ttl: Duration) -> Vec<(&'static str, usize)> {
        let mut jobs = self.jobs.lock();
        sweep(&mut jobs, ttl);
        let mut counts = [0usize; STATUSES.len()];
        for job in jobs.values() {
            let status = job.status();
            if let Some(i) = STATUSES.iter().position(|&s| s == status) {
                counts[i] += 1;
            }
        }
        STATUSES
            .iter()
            .zip(counts)
            .map(|(s, n)| (s.name(), n))
            .collect()
    }
}

/// Forgets the jobs finished longer than `ttl` ago.
fn sweep(jobs: &mut HashMap<String, Arc<Job>>, ttl: Duration) {
    jobs.retain(|_, job| job.finished_at().is_none_or(|at| at.elapsed() < ttl));
}

/// The body of `POST /v1/reviews`: an SGF, or the position fields of an
/// analysis query (checked by the query parser, with its messages).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ReviewRequest {
    sgf: Option<String>,
    moves: Option<Value>,
    initial_stones: Option<Value>,
    initial_player: Option<Value>,
    board_x_size: Option<Value>,
    board_y_size: Option<Value>,
    komi: Option<Value>,
    rules: Option<Value>,
    white_handicap_bonus: Option<Value>,
    #[serde(default)]
    mode: Mode,
    /// Full mode's visits per position.
    visits: Option<u64>,
}

fn bad(message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, message)
}

fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "no such review")
}

/// `POST /v1/reviews`.
async fn create(State(service): State<Arc<Service>>, request: Request) -> Response {
    let app = &service.app;
    let mut key_name = "-".to_string();
    let response = match create_inner(&service, request, &mut key_name).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    };
    app.metrics
        .request(&key_name, "reviews", response.status().as_u16());
    response
}

async fn create_inner(
    service: &Service,
    request: Request,
    key_name: &mut String,
) -> Result<Response, ApiError> {
    let app = &service.app;
    let (parts, body) = request.into_parts();
    let key = app.authenticate(&parts.headers, None)?;
    *key_name = app.key_name(key).to_string();
    let bytes = read_bytes(app, &parts.headers, body).await?;
    let req: ReviewRequest =
        serde_json::from_slice(&bytes).map_err(|e| bad(format!("bad review request: {e}")))?;
    let settings = &app.settings.reviews;
    let key_max = app.keys.keys()[key].max_visits.unwrap_or(u64::MAX);
    let (scan_visits, deep_visits) = match req.mode {
        Mode::Fast => {
            if req.visits.is_some() {
                return Err(bad(
                    "visits is for mode \"full\"; a fast review's visits are the server's",
                ));
            }
            (
                settings.fast_visits.min(key_max),
                Some(settings.deep_visits.min(key_max)),
            )
        }
        Mode::Full => {
            let visits = req.visits.unwrap_or(settings.full_visits);
            if visits == 0 {
                return Err(bad("visits must be at least 1"));
            }
            (visits.min(settings.max_visits).min(key_max), None)
        }
    };
    let mode = req.mode;
    let base = position_fields(req)?;
    let num_moves = base
        .get("moves")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let id = format!("{:032x}", rand::random::<u128>());
    let turns: Vec<usize> = (0..=num_moves).collect();
    let parsed = app.parse(&query_line(&base, &id, &turns, scan_visits));
    let q = match &parsed.result {
        Ok(Line::Analyze(q)) => q,
        Ok(Line::Action(_)) => return Err(bad("not a game")),
        Err(e) => return Err(query_error(e.to_json())),
    };
    if q.moves.is_empty() {
        return Err(bad("the game has no moves to review"));
    }
    let (xs, ys) = (q.board_x_size, q.board_y_size);
    let moves: Vec<(Player, String)> = q
        .moves
        .iter()
        .map(|m| (m.player, m.mv.to_gtp(xs, ys)))
        .collect();

    let mut jobs = service.reviews.jobs.lock();
    sweep(&mut jobs, settings.ttl);
    let active = jobs
        .values()
        .filter(|j| j.key == key && !j.status().finished())
        .count();
    if active >= settings.max_active_per_key {
        return Err(ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "this key has {active} reviews queued or running, the server's reviewMaxActivePerKey"
            ),
        )
        .retry(app.settings.retry_after_secs));
    }
    if jobs.len() >= settings.max_stored {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server holds as many reviews as it keeps (reviewMaxStored)",
        )
        .retry(app.settings.retry_after_secs));
    }
    let place = app.admit_place(key, None, scan_visits.max(deep_visits.unwrap_or(0)) as f64)?;
    let (tx, rx) = unbounded_channel();
    let client = app.engine.client(
        app.client_options(key, TerminateScope::Client),
        Arc::new(ReviewSink(tx)),
    );
    match client.submit(parsed, None) {
        Submitted::Queued { .. } => {}
        // A replay error (an illegal move): KataGo's message.
        Submitted::Refused(error) => return Err(query_error(error)),
        Submitted::Answered => return Err(bad("not a game")),
    }
    let job = Arc::new(Job::new(
        id.clone(),
        key,
        mode,
        scan_visits,
        deep_visits,
        settings.deep_mistakes,
        moves,
        Live {
            client,
            _place: place,
        },
    ));
    jobs.insert(id.clone(), job.clone());
    drop(jobs);
    tokio::spawn(run(app.clone(), job.clone(), rx, base));

    let location = format!("/v1/reviews/{id}");
    let body = json!({
        "id": id,
        "status": Status::Queued.name(),
        "mode": mode.name(),
        "moves": job.moves.len(),
    });
    let mut response = (
        StatusCode::ACCEPTED,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response();
    if let Ok(value) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    Ok(response)
}

/// A 400 with the query parser's error (its text and field; the review's
/// internal query id left out).
fn query_error(mut error: Value) -> ApiError {
    if let Value::Object(map) = &mut error {
        map.remove("id");
    }
    ApiError {
        status: StatusCode::BAD_REQUEST,
        body: error,
        retry_after: None,
    }
}

/// The position fields of the analysis queries of a review: from the SGF
/// (its main line), or as given; `komi`, `rules` and `whiteHandicapBonus`
/// given beside an SGF replace its own.
fn position_fields(req: ReviewRequest) -> Result<Map<String, Value>, ApiError> {
    let mut fields = Map::new();
    match req.sgf {
        Some(sgf) => {
            let given = [
                &req.moves,
                &req.initial_stones,
                &req.initial_player,
                &req.board_x_size,
                &req.board_y_size,
            ];
            if given.iter().any(|f| f.is_some()) {
                return Err(bad(
                    "give either sgf or moves (with initialStones, initialPlayer, boardXSize, boardYSize), not both",
                ));
            }
            fields = sgf_fields(&sgf)?;
        }
        None => {
            let Some(moves) = req.moves else {
                return Err(bad("give sgf, or moves and the position's fields"));
            };
            fields.insert("moves".into(), moves);
            let rest = [
                ("initialStones", req.initial_stones),
                ("initialPlayer", req.initial_player),
                ("boardXSize", req.board_x_size),
                ("boardYSize", req.board_y_size),
            ];
            for (name, value) in rest {
                if let Some(v) = value {
                    fields.insert(name.into(), v);
                }
            }
        }
    }
    let overrides = [
        ("komi", req.komi),
        ("rules", req.rules),
        ("whiteHandicapBonus", req.white_handicap_bonus),
    ];
    for (name, value) in overrides {
        if let Some(v) = value {
            fields.insert(name.into(), v);
        }
    }
    Ok(fields)
}

/// An SGF's main line as analysis query fields.
fn sgf_fields(text: &str) -> Result<Map<String, Value>, ApiError> {
    let trees = parse_collection(text).map_err(|e| bad(format!("sgf: {e}")))?;
    let tree = trees
        .first()
        .ok_or_else(|| bad("sgf: no game in the text"))?;
    let rec = tree.record().map_err(|e| bad(format!("sgf: {e}")))?;
    let (xs, ys) = (rec.x_size, rec.y_size);
    let gtp = |(x, y): (usize, usize)| Move::Play(Loc::from_xy(x, y, xs)).to_gtp(xs, ys);
    // Setup in order: a later AB/AW/AE on a point replaces an earlier one.
    let mut stones: BTreeMap<(usize, usize), Player> = BTreeMap::new();
    for &(color, at) in &rec.setup {
        match color {
            Color::Black => stones.insert(at, Player::Black),
            Color::White => stones.insert(at, Player::White),
            _ => stones.remove(&at),
        };
    }
    let placed = |p: Player, at: String| json!([p.letter().to_string(), at]);
    let initial: Vec<Value> = stones
        .into_iter()
        .map(|(at, p)| placed(p, gtp(at)))
        .collect();
    let moves: Vec<Value> = rec
        .moves
        .iter()
        .map(|&(p, at)| placed(p, at.map_or_else(|| "pass".to_string(), gtp)))
        .collect();
    let mut fields = Map::new();
    fields.insert("boardXSize".into(), Value::from(xs));
    fields.insert("boardYSize".into(), Value::from(ys));
    fields.insert("initialStones".into(), Value::Array(initial));
    fields.insert("moves".into(), Value::Array(moves));
    if let Some(p) = rec.player_to_move {
        fields.insert("initialPlayer".into(), Value::from(p.letter().to_string()));
    }
    if let Some(komi) = rec.komi {
        fields.insert("komi".into(), Value::from(f64::from(komi)));
    }
    // Many SGFs name no rules, which a query must: Chinese (area scoring)
    // then, as most servers default to; a `rules` field beside the SGF
    // replaces it.
    let rules = rec
        .rules
        .as_deref()
        .map(str::trim)
        .filter(|r| !r.is_empty());
    fields.insert("rules".into(), Value::from(rules.unwrap_or("chinese")));
    Ok(fields)
}

/// One analysis query of a review: `turns` of the game at `visits`, the
/// values in Black's view whatever the server's `reportAnalysisWinratesAs`.
fn query_line(base: &Map<String, Value>, id: &str, turns: &[usize], visits: u64) -> String {
    let mut q = base.clone();
    q.insert("id".into(), Value::from(format!("review-{id}")));
    q.insert("analyzeTurns".into(), json!(turns));
    q.insert("maxVisits".into(), Value::from(visits));
    // The review reads the best move only: a short PV keeps responses small.
    q.insert("analysisPVLen".into(), Value::from(1));
    q.insert(
        "overrideSettings".into(),
        json!({ "reportAnalysisWinratesAs": "BLACK" }),
    );
    Value::Object(q).to_string()
}

/// A review's task: the scan, then (fast) the deeper searches; ends the
/// job unless it was cancelled.
async fn run(
    app: Arc<App>,
    job: Arc<Job>,
    mut rx: UnboundedReceiver<Event>,
    base: Map<String, Value>,
) {
    if !job.collect(&mut rx).await {
        return;
    }
    if let Some(deep) = job.deep_visits {
        let turns = job.deep_turns();
        if !turns.is_empty() {
            let parsed = app.parse(&query_line(&base, &job.id, &turns, deep));
            let Some(submitted) = job.submit_second_pass(parsed, turns.len()) else {
                return;
            };
            match submitted {
                Submitted::Queued { .. } => {
                    if !job.collect(&mut rx).await {
                        return;
                    }
                }
                Submitted::Refused(error) => {
                    job.end(Some(format!("the second pass was refused: {error}")));
                    return;
                }
                Submitted::Answered => {}
            }
        }
    }
    job.end(None);
}

/// The job `id` of key `key` (404 for another key's, as for none, and
/// for an id that is not UTF-8 once percent-decoded: axum's rejection of
/// it would be a plain-text 400, before the key is checked).
fn lookup(
    service: &Service,
    key: usize,
    id: &Result<Path<String>, PathRejection>,
) -> Result<Arc<Job>, ApiError> {
    let Ok(Path(id)) = id else {
        return Err(not_found());
    };
    let mut jobs = service.reviews.jobs.lock();
    sweep(&mut jobs, service.app.settings.reviews.ttl);
    match jobs.get(id) {
        Some(job) if job.key == key => Ok(job.clone()),
        _ => Err(not_found()),
    }
}

fn json_response(value: &Value) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

/// `GET /v1/reviews/{id}`.
async fn show(
    State(service): State<Arc<Service>>,
    id: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> Response {
    on_review(&service, &id, &headers, |job| job.to_json())
}

/// `DELETE /v1/reviews/{id}`: cancels a queued or running review (kept,
/// `cancelled`, until `reviewTtlSeconds`); forgets a finished one.
async fn cancel(
    State(service): State<Arc<Service>>,
    id: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> Response {
    on_review(&service, &id, &headers, |job| {
        if job.status().finished() {
            service.reviews.jobs.lock().remove(&job.id);
        } else {
            job.cancel();
        }
        job.to_json()
    })
}

/// The key's review `id` given to `act`, whose JSON is the answer; the
/// key's errors and an unknown (or another key's) review as JSON errors.
/// Every answer is counted by key and status.
fn on_review(
    service: &Service,
    id: &Result<Path<String>, PathRejection>,
    headers: &HeaderMap,
    act: impl FnOnce(&Arc<Job>) -> Value,
) -> Response {
    let app = &service.app;
    let mut key_name = "-".to_string();
    let result = app.authenticate(headers, None).and_then(|key| {
        key_name = app.key_name(key).to_string();
        lookup(service, key, id)
    });
    let response = match result {
        Ok(job) => json_response(&act(&job)),
        Err(e) => e.into_response(),
    };
    app.metrics
        .request(&key_name, "reviews", response.status().as_u16());
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_sgf_main_line_becomes_query_fields() {
        let sgf = "(;GM[1]SZ[9]KM[6.5]RU[Chinese]AB[cc]AW[gg]AE[gg]PL[W]\
                   ;W[ee];B[](;W[ab])(;W[ba]))";
        let f = sgf_fields(sgf).unwrap();
        assert_eq!(f["boardXSize"], 9);
        assert_eq!(f["komi"], 6.5);
        assert_eq!(f["rules"], "Chinese");
        assert_eq!(f["initialPlayer"], "W");
        assert_eq!(f["initialStones"], json!([["B", "C7"]]));
        assert_eq!(f["moves"], json!([["W", "E5"], ["B", "pass"], ["W", "A8"]]));
        let err = sgf_fields("(;GM[1]SZ[9];B[zz])").unwrap_err();
        assert_eq!(err.status, StatusCode::BAD_REQUEST);
        assert!(err.body["error"].as_str().unwrap().starts_with("sgf: "));
        assert!(sgf_fields("not sgf").is_err());
    }
}
