//! The routes of `engine serve`, authentication, the checks every query
//! passes before it is queued, and the error answers (`{"error": ...}`
//! with the HTTP status of each case).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use crate::analysis::query::{AnalyzeQuery, ParseOptions, Request as Line};
use crate::analysis::{parse_line, ClientOptions, ResponseSink, Submitted, TerminateScope};

use super::keys::{InFlight, Keyring, QuotaRefusal};
use super::metrics::{Gauges, Metrics, Snapshot};
use super::port::{EnginePort, NnStats};
use super::ServeSettings;

/// Everything the routes share.
pub(super) struct App {
    pub(super) engine: Arc<dyn EnginePort>,
    pub(super) keys: Keyring,
    pub(super) metrics: Arc<Metrics>,
    pub(super) settings: ServeSettings,
    pub(super) parse: ParseOptions,
    /// `logAllRequests`: each query line to the log, `Request: LINE`.
    pub(super) log_requests: bool,
    /// `maxVisits` of a query that names none (checked against a key's).
    pub(super) default_max_visits: u64,
    pub(super) nn: Option<NnStats>,
    /// Set on SIGTERM: no new queries.
    pub(super) draining: AtomicBool,
    /// Connections open (HTTP, and WebSockets after their upgrade).
    pub(super) connections: Arc<AtomicUsize>,
    /// Review jobs held, by status (for `/metrics`).
    pub(super) review_counts: Gauges,
}

/// One open connection in [`App::connections`], while it lives.
pub(super) struct ConnectionCount(Arc<AtomicUsize>);

impl ConnectionCount {
    pub(super) fn new(count: &Arc<AtomicUsize>) -> ConnectionCount {
        count.fetch_add(1, Ordering::AcqRel);
        ConnectionCount(count.clone())
    }
}

impl Drop for ConnectionCount {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// An error answer: a status, `{"error": ...}` (with the query's `id` and
/// `field` where KataGo's own answer has them), maybe `Retry-After`.
#[derive(Debug)]
pub(super) struct ApiError {
    pub(super) status: StatusCode,
    pub(super) body: Value,
    pub(super) retry_after: Option<u64>,
}

impl ApiError {
    pub(super) fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            body: json!({ "error": message.into() }),
            retry_after: None,
        }
    }

    pub(super) fn retry(mut self, secs: u64) -> ApiError {
        self.retry_after = Some(secs.max(1));
        self
    }

    /// The same error for the query with this id (WebSocket clients and
    /// `-remote` match answers by id).
    pub(super) fn with_id(mut self, id: Option<&str>) -> ApiError {
        if let (Some(id), Value::Object(map)) = (id, &mut self.body) {
            map.entry("id").or_insert_with(|| Value::from(id));
        }
        self
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (
            self.status,
            [(header::CONTENT_TYPE, "application/json")],
            self.body.to_string(),
        )
            .into_response();
        if let Some(secs) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}

/// What a client's sink hands to its connection.
pub(super) enum Event {
    /// One response line (JSON, no newline).
    Line(String),
    /// A query's last final response was sent.
    QueryDone,
}

/// The sink of a network client: an unbounded channel, since analysis
/// threads must never wait on a slow network client; a query's responses
/// are bounded by its turns and its during-search reports.
pub(super) struct ChannelSink(pub(super) UnboundedSender<Event>);

impl ResponseSink for ChannelSink {
    fn send(&self, value: &Value) {
        let _ = self.0.send(Event::Line(value.to_string()));
    }

    fn query_finished(&self) {
        let _ = self.0.send(Event::QueryDone);
    }
}

/// A queued query's hold: its key's in-flight place, and its latency
/// when it ends (finished or cancelled).
struct QueryHold {
    _place: InFlight,
    started: Instant,
    metrics: Arc<Metrics>,
}

impl Drop for QueryHold {
    fn drop(&mut self) {
        self.metrics.query_latency(self.started.elapsed());
    }
}

impl App {
    /// Parses one request line (logged first with `logAllRequests`).
    pub(super) fn parse(&self, line: &str) -> crate::analysis::query::Parsed {
        if self.log_requests {
            crate::logfile::line(&format!("Request: {line}"));
        }
        parse_line(line, &self.parse)
    }

    /// The key number of a request: `Authorization: Bearer SECRET`, or
    /// (WebSockets, which browsers open without headers) `query_key`.
    pub(super) fn authenticate(
        &self,
        headers: &HeaderMap,
        query_key: Option<&str>,
    ) -> Result<usize, ApiError> {
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim);
        self.keys.authenticate(bearer.or(query_key)).ok_or_else(|| {
            let message = if bearer.or(query_key).is_none() {
                "missing key: send Authorization: Bearer SECRET"
            } else {
                "wrong key"
            };
            ApiError::new(StatusCode::UNAUTHORIZED, message)
        })
    }

    /// The name of key number `key`.
    pub(super) fn key_name(&self, key: usize) -> &str {
        &self.keys.keys()[key].name
    }

    /// The client options of key number `key`.
    pub(super) fn client_options(&self, key: usize, scope: TerminateScope) -> ClientOptions {
        ClientOptions {
            key,
            weight: self.keys.keys()[key].weight,
            scope,
            cancel_on_drop: true,
        }
    }

    /// The checks of a query before it is queued: the key's `maxVisits`,
    /// `maxInFlight` and `perMinute`, the server's queue and drain. The
    /// hold returned keeps the in-flight place while the query is open.
    pub(super) fn admit(
        &self,
        key: usize,
        q: &AnalyzeQuery,
    ) -> Result<Box<dyn std::any::Any + Send + Sync>, ApiError> {
        // `overrideSettings.maxVisits` is read as the search reads it (a
        // number, or a string holding one, blanks trimmed): `1e6` or
        // `" 6000"` must not slip past the key's limit as "no maxVisits".
        // A value the search refuses anyway counts as the default.
        let visits = q
            .max_visits
            .map(|v| v.max(0) as f64)
            .or_else(|| {
                q.override_settings
                    .iter()
                    .find(|(k, _)| k == "maxVisits")
                    .and_then(|(_, v)| match v {
                        Value::Number(n) => n.as_f64(),
                        Value::String(s) => s.trim().parse::<f64>().ok(),
                        _ => None,
                    })
            })
            .unwrap_or(self.default_max_visits as f64);
        let place = self.admit_place(key, Some(q.id.as_str()), visits)?;
        Ok(Box::new(QueryHold {
            _place: place,
            started: Instant::now(),
            metrics: self.metrics.clone(),
        }))
    }

    /// The checks of [`App::admit`] for a query (or a review) of `visits`
    /// per position; the place returned is the key's `maxInFlight` place.
    pub(super) fn admit_place(
        &self,
        key: usize,
        id: Option<&str>,
        visits: f64,
    ) -> Result<InFlight, ApiError> {
        if self.draining.load(Ordering::Acquire) {
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "the server is shutting down",
            )
            .retry(self.settings.retry_after_secs)
            .with_id(id));
        }
        let limits = &self.keys.keys()[key];
        if let Some(max) = limits.max_visits {
            if visits > max as f64 {
                let mut e = ApiError::new(
                    StatusCode::BAD_REQUEST,
                    format!("maxVisits {visits} is over this key's limit of {max}"),
                )
                .with_id(id);
                e.body["field"] = Value::from("maxVisits");
                return Err(e);
            }
        }
        let place = self.keys.admit(key, Instant::now()).map_err(|refusal| {
            let wait = match refusal {
                QuotaRefusal::InFlight(_) => 1,
                QuotaRefusal::PerMinute(_, wait) => wait.as_secs_f64().ceil() as u64,
            };
            ApiError::new(StatusCode::TOO_MANY_REQUESTS, refusal.to_string())
                .retry(wait)
                .with_id(id)
        })?;
        if self.engine.queued() >= self.settings.max_queued {
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "the server's queue is full",
            )
            .retry(self.settings.retry_after_secs)
            .with_id(id));
        }
        Ok(place)
    }
}

pub(super) async fn ready(State(app): State<Arc<App>>) -> Response {
    if app.draining.load(Ordering::Acquire) {
        return ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "shutting down").into_response();
    }
    if app.engine.queued() >= app.settings.max_queued {
        return ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "queue full").into_response();
    }
    "ready\n".into_response()
}

pub(super) async fn metrics(State(app): State<Arc<App>>) -> Response {
    let keys = app.keys.keys();
    let text = app.metrics.render(&Snapshot {
        engine: app.engine.stats(),
        key_names: keys.iter().map(|k| k.name.as_str()).collect(),
        in_flight: keys.iter().map(|k| k.in_flight()).collect(),
        nn: app.nn.as_ref().map(|f| f()),
        reviews: (app.review_counts)(),
    });
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text).into_response()
}

/// `POST /v1/analyze`: counts the answer by key and status.
pub(super) async fn analyze(State(app): State<Arc<App>>, request: Request) -> Response {
    let mut key_name = "-".to_string();
    let response = match analyze_inner(&app, request, &mut key_name).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    };
    app.metrics
        .request(&key_name, "analyze", response.status().as_u16());
    response
}

async fn analyze_inner(
    app: &Arc<App>,
    request: Request,
    key_name: &mut String,
) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let key = app.authenticate(&parts.headers, None)?;
    *key_name = app.key_name(key).to_string();
    let line = read_body(app, &parts.headers, body).await?;
    let parsed = app.parse(&line);
    let hold = match &parsed.result {
        Err(e) => return Err(query_error(e.to_json())),
        Ok(Line::Analyze(q)) => Some(app.admit(key, q)?),
        Ok(Line::Action(_)) => None,
    };
    let sse = parts
        .headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/event-stream"));
    let (tx, rx) = unbounded_channel();
    let client = app.engine.client(
        app.client_options(key, TerminateScope::Key),
        Arc::new(ChannelSink(tx)),
    );
    let queued = match client.submit(parsed, hold) {
        Submitted::Refused(error) => return Err(query_error(error)),
        Submitted::Answered => false,
        // A query of no positions has nothing more to say.
        Submitted::Queued { jobs } => jobs > 0,
    };
    let content_type = if sse {
        "text/event-stream"
    } else {
        "application/x-ndjson"
    };
    let stream = LineStream {
        rx,
        client: Some(client),
        open: queued,
        sse,
        metrics: app.metrics.clone(),
    };
    let body = Body::from_stream(futures_util::stream::unfold(stream, LineStream::next));
    Ok((
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response())
}

/// A 400 with KataGo's error object (its text, `id` and `field`).
fn query_error(error: Value) -> ApiError {
    ApiError {
        status: StatusCode::BAD_REQUEST,
        body: error,
        retry_after: None,
    }
}

/// The body: at most `maxRequestBytes`, within the body timeout, UTF-8,
/// one line.
async fn read_body(app: &App, headers: &HeaderMap, body: Body) -> Result<String, ApiError> {
    let bytes = read_bytes(app, headers, body).await?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| ApiError::new(StatusCode::BAD_REQUEST, "the body is not UTF-8"))?;
    let line = text.trim();
    if line.is_empty() || line.contains('\n') {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "the body must be exactly one query line",
        ));
    }
    Ok(line.to_string())
}

/// The body's bytes: at most `maxRequestBytes`, within the body timeout.
pub(super) async fn read_bytes(
    app: &App,
    headers: &HeaderMap,
    body: Body,
) -> Result<Bytes, ApiError> {
    let limit = app.settings.max_request_bytes;
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("request body over maxRequestBytes ({limit} bytes)"),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let bytes: Bytes = match tokio::time::timeout(
        app.settings.body_read_timeout,
        axum::body::to_bytes(body, limit),
    )
    .await
    {
        Err(_) => {
            return Err(ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                "the request body did not arrive in time",
            ))
        }
        Ok(Err(_)) => return Err(too_large()),
        Ok(Ok(bytes)) => bytes,
    };
    Ok(bytes)
}

/// The response body of one request: its lines as they come, until its
/// query's last final response. Dropping it (the client went away) drops
/// the engine client, which cancels the query.
struct LineStream {
    rx: UnboundedReceiver<Event>,
    client: Option<Box<dyn super::port::ClientPort>>,
    /// Whether a query is still open (else: the lines already sent, then
    /// the end).
    open: bool,
    sse: bool,
    metrics: Arc<Metrics>,
}

impl LineStream {
    async fn next(mut self) -> Option<(Result<Bytes, std::io::Error>, LineStream)> {
        loop {
            let event = if self.open {
                self.rx.recv().await
            } else {
                self.rx.try_recv().ok()
            };
            match event {
                Some(Event::Line(line)) => {
                    let framed = if self.sse {
                        format!("data: {line}\n\n")
                    } else {
                        format!("{line}\n")
                    };
                    return Some((Ok(Bytes::from(framed)), self));
                }
                Some(Event::QueryDone) => {
                    self.open = false;
                    self.client = None;
                }
                None => return None,
            }
        }
    }
}

impl Drop for LineStream {
    fn drop(&mut self) {
        if self.open && self.client.is_some() {
            // The connection ended before the query did.
            self.metrics.disconnect();
        }
    }
}
