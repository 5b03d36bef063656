//! The accept loop of `engine serve`: hyper's HTTP/1 connections with a
//! header-read timeout (a client that opens a connection and sends nothing
//! is dropped), upgrades for WebSockets, and the SIGTERM drain: stop
//! accepting, let open queries finish for up to `drainSeconds`, exit 0.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::analysis::command::StartError;
use crate::analysis::query::ParseOptions;

use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::Router;

use super::http::{analyze, metrics, ready, ApiError, App, ConnectionCount};
use super::keys::Keyring;
use super::metrics::Metrics;
use super::port::{EnginePort, NnStats};
use super::reviews::Reviews;
use super::ServeSettings;

/// What the server starts from.
pub(super) struct Setup {
    pub(super) addr: SocketAddr,
    pub(super) settings: ServeSettings,
    pub(super) keys: Keyring,
    pub(super) parse: ParseOptions,
    /// `logAllRequests`.
    pub(super) log_requests: bool,
    pub(super) default_max_visits: u64,
}

/// Serves until SIGTERM (or Ctrl-C) and the drain; the engine is stopped
/// before it returns.
pub(super) fn run(
    setup: Setup,
    engine: Arc<dyn EnginePort>,
    described: &str,
    nn: Option<NnStats>,
) -> Result<(), StartError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name("serve")
        .build()?;
    let keys_line = if setup.keys.required() {
        format!("keys on ({} keys)", setup.keys.keys().len())
    } else {
        "keys off".to_string()
    };
    let reviews = Arc::new(Reviews::default());
    let (counted, review_ttl) = (reviews.clone(), setup.settings.reviews.ttl);
    let app = Arc::new(App {
        engine: engine.clone(),
        keys: setup.keys,
        metrics: Arc::new(Metrics::default()),
        settings: setup.settings,
        parse: setup.parse,
        log_requests: setup.log_requests,
        default_max_visits: setup.default_max_visits,
        nn,
        draining: Default::default(),
        connections: Arc::new(AtomicUsize::new(0)),
        review_counts: Box::new(move || counted.counts(review_ttl)),
    });
    let result = runtime.block_on(async {
        let listener = TcpListener::bind(setup.addr).await?;
        let local = listener.local_addr()?;
        crate::logfile::startup(&format!(
            "engine serve: listening on http://{local}, {described}, {keys_line}"
        ));
        serve(listener, app, reviews).await
    });
    engine.kill_and_join();
    runtime.shutdown_timeout(Duration::from_millis(200));
    result.map_err(StartError::Io)
}

async fn serve(listener: TcpListener, app: Arc<App>, reviews: Arc<Reviews>) -> std::io::Result<()> {
    let (stop_tx, stop_rx) = watch::channel(false);
    let connections = app.connections.clone();
    let routes = router(app.clone(), reviews);
    let signal = shutdown_signal();
    tokio::pin!(signal);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let _ = stream.set_nodelay(true);
                let service = TowerToHyperService::new(routes.clone());
                let header_timeout = app.settings.header_read_timeout;
                let mut stop = stop_rx.clone();
                let count = ConnectionCount::new(&connections);
                tokio::spawn(async move {
                    let _count = count;
                    let conn = hyper::server::conn::http1::Builder::new()
                        .timer(TokioTimer::new())
                        .header_read_timeout(header_timeout)
                        .serve_connection(TokioIo::new(stream), service)
                        .with_upgrades();
                    tokio::pin!(conn);
                    tokio::select! {
                        _ = conn.as_mut() => {}
                        _ = stop.changed() => {
                            // Finish the response under way, then close.
                            conn.as_mut().graceful_shutdown();
                            let _ = conn.await;
                        }
                    }
                });
            }
            _ = &mut signal => break,
        }
    }
    // Stop accepting: the listener closes; open queries may finish.
    drop(listener);
    app.draining.store(true, Ordering::Release);
    let _ = stop_tx.send(true);
    let started = Instant::now();
    crate::logfile::startup(&format!(
        "engine serve: draining ({} connections open, up to {:.0} s)",
        connections.load(Ordering::Acquire),
        app.settings.drain.as_secs_f64()
    ));
    while connections.load(Ordering::Acquire) > 0 && started.elapsed() < app.settings.drain {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    crate::logfile::startup("engine serve: stopped");
    Ok(())
}

/// The routes.
fn router(app: Arc<App>, reviews: Arc<Reviews>) -> Router {
    Router::new()
        .route("/v1/analyze", post(analyze))
        .route("/v1/ws", get(super::ws::upgrade))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(ready))
        .route("/metrics", get(metrics))
        .merge(super::reviews::router(app.clone(), reviews))
        // The board page: no key, it holds no data (the WebSocket needs one).
        .route("/", get(super::web::index))
        .route("/assets/{name}", get(super::web::asset))
        .fallback(|| async { ApiError::new(StatusCode::NOT_FOUND, "no such endpoint") })
        .method_not_allowed_fallback(|| async {
            ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "method not allowed here")
        })
        .with_state(app)
}

/// SIGTERM or Ctrl-C.
async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = ctrl_c => {}
                }
            }
            Err(_) => {
                let _ = ctrl_c.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}
