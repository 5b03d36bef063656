//! `GET /v1/ws`: one WebSocket carrying `engine analysis`'s stdin/stdout
//! protocol. Each text message from the client is one query or action;
//! each message from the server is one response. The connection is one
//! client of the engine: its ids and `terminate_all` are its own, and its
//! open queries are cancelled when it goes away.
//!
//! The key comes in `Authorization: Bearer SECRET` or, for browsers (which
//! cannot set headers on a WebSocket), in the `?key=SECRET` query
//! parameter.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::extract::rejection::QueryRejection;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use tokio::sync::mpsc::unbounded_channel;

use crate::analysis::query::Request as Line;
use crate::analysis::{Submitted, TerminateScope};

use super::http::{ApiError, App, ChannelSink, ConnectionCount, Event};
use super::port::ClientPort;

/// The upgrade: authenticated before the WebSocket opens (401 otherwise).
pub(super) async fn upgrade(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    params: Result<Query<HashMap<String, String>>, QueryRejection>,
    ws: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    // A query string that does not parse is no key (401 below).
    let params = params.map(|Query(p)| p).unwrap_or_default();
    let key = match app.authenticate(&headers, params.get("key").map(String::as_str)) {
        Ok(key) => key,
        Err(e) => {
            app.metrics.request("-", "ws", e.status.as_u16());
            return e.into_response();
        }
    };
    let ws = match ws {
        Ok(ws) => ws,
        Err(rejection) => {
            let e = ApiError::new(rejection.status(), rejection.body_text());
            app.metrics
                .request(app.key_name(key), "ws", e.status.as_u16());
            return e.into_response();
        }
    };
    let limit = app.settings.max_request_bytes;
    ws.max_message_size(limit)
        .max_frame_size(limit)
        .on_upgrade(move |socket| connection(app, key, socket))
}

/// One connection, until the client closes it, goes idle with nothing in
/// flight, or the server drains.
async fn connection(app: Arc<App>, key: usize, mut socket: WebSocket) {
    // The drain waits for upgraded connections too.
    let _count = ConnectionCount::new(&app.connections);
    let (tx, mut rx) = unbounded_channel();
    let client = app.engine.client(
        app.client_options(key, TerminateScope::Client),
        Arc::new(ChannelSink(tx)),
    );
    let name = app.key_name(key).to_string();
    let mut open_queries = 0usize;
    // Wakes the loop to look at the drain flag.
    let mut drain_tick = tokio::time::interval(std::time::Duration::from_millis(50));
    let mut last_message = tokio::time::Instant::now();
    loop {
        let draining = app.draining.load(Ordering::Acquire);
        if draining && open_queries == 0 {
            let _ = socket
                .send(Message::Close(Some(CloseFrame {
                    code: 1001,
                    reason: "server shutting down".into(),
                })))
                .await;
            break;
        }
        let idle = tokio::time::sleep_until(last_message + app.settings.ws_idle_timeout);
        tokio::select! {
            event = rx.recv() => match event {
                Some(Event::Line(line)) => {
                    if socket.send(Message::Text(line.into())).await.is_err() {
                        break;
                    }
                }
                Some(Event::QueryDone) => {
                    open_queries = open_queries.saturating_sub(1);
                    // Idle time counts from the last answer too.
                    last_message = tokio::time::Instant::now();
                }
                None => break,
            },
            message = socket.recv() => match message {
                Some(Ok(Message::Text(text))) => {
                    last_message = tokio::time::Instant::now();
                    if handle_text(&app, key, &name, &*client, text.as_str()) {
                        open_queries += 1;
                    }
                }
                Some(Ok(Message::Binary(_))) => {
                    let e = ApiError::new(
                        axum::http::StatusCode::BAD_REQUEST,
                        "send queries as text messages",
                    );
                    client.error(&e.body);
                }
                // Pings (answered by the library) keep an idle client
                // connected: `-remote` sends them while a GUI waits.
                Some(Ok(_)) => last_message = tokio::time::Instant::now(),
                Some(Err(_)) | None => break,
            },
            _ = idle, if open_queries == 0 => {
                let _ = socket
                    .send(Message::Close(Some(CloseFrame {
                        code: 1000,
                        reason: "idle".into(),
                    })))
                    .await;
                break;
            }
            _ = drain_tick.tick() => {}
        }
    }
    if open_queries > 0 {
        app.metrics.disconnect();
    }
    // Dropping the client cancels what is still open.
    drop(client);
}

/// Handles one text message; returns whether a query was queued. Refusals
/// go back as error messages on the socket, in order with the rest.
fn handle_text(app: &App, key: usize, name: &str, client: &dyn ClientPort, text: &str) -> bool {
    let line = text.trim();
    if line.is_empty() {
        return false;
    }
    let parsed = app.parse(line);
    let hold = match &parsed.result {
        Ok(Line::Analyze(q)) => match app.admit(key, q) {
            Ok(hold) => Some(hold),
            Err(e) => {
                app.metrics.request(name, "ws", e.status.as_u16());
                client.error(&e.body);
                return false;
            }
        },
        _ => None,
    };
    match client.submit(parsed, hold) {
        Submitted::Refused(error) => {
            app.metrics.request(name, "ws", 400);
            client.error(&error);
            false
        }
        Submitted::Answered => {
            app.metrics.request(name, "ws", 200);
            false
        }
        Submitted::Queued { jobs } => {
            app.metrics.request(name, "ws", 200);
            jobs > 0
        }
    }
}
