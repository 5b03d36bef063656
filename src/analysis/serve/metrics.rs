//! `GET /metrics`: the server's counters in Prometheus' text format
//! (version 0.0.4), written by hand: a few counters, gauges and two
//! histograms do not need a metrics library.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::Mutex;

use crate::analysis::EngineStats;
use crate::nn::{EvalStats, BATCH_SIZE_BUCKETS};

/// Upper bounds (seconds) of the query latency histogram's buckets.
const LATENCY_BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0,
];

/// Gauges by label read when `/metrics` is asked for.
pub type Gauges = Box<dyn Fn() -> Vec<(&'static str, usize)> + Send + Sync>;

/// What the server counts itself (the engine counts the rest).
#[derive(Debug, Default)]
pub struct Metrics {
    /// Requests by (key name, endpoint, status code).
    requests: Mutex<BTreeMap<(String, &'static str, u16), u64>>,
    latency: Mutex<Histogram>,
    /// Connections that went away with queries still open.
    disconnects: AtomicU64,
}

#[derive(Debug, Default)]
struct Histogram {
    counts: [u64; LATENCY_BUCKETS.len()],
    count: u64,
    sum: f64,
}

/// Gauges read when `/metrics` is asked for.
pub struct Snapshot<'a> {
    /// The engine's counters.
    pub engine: EngineStats,
    /// Key names, by key number.
    pub key_names: Vec<&'a str>,
    /// Open queries per key number.
    pub in_flight: Vec<usize>,
    /// The evaluator's counters, when a network runs.
    pub nn: Option<EvalStats>,
    /// Review jobs held, by status name.
    pub reviews: Vec<(&'static str, usize)>,
}

impl Metrics {
    /// Counts one answered request (a WebSocket counts each query frame).
    pub fn request(&self, key: &str, endpoint: &'static str, status: u16) {
        *self
            .requests
            .lock()
            .entry((key.to_string(), endpoint, status))
            .or_insert(0) += 1;
    }

    /// One query's time from acceptance to its last final response (or
    /// its cancellation).
    pub fn query_latency(&self, elapsed: Duration) {
        let secs = elapsed.as_secs_f64();
        let mut h = self.latency.lock();
        for (count, bound) in h.counts.iter_mut().zip(LATENCY_BUCKETS) {
            if secs <= bound {
                *count += 1;
            }
        }
        h.count += 1;
        h.sum += secs;
    }

    /// A client went away with queries open.
    pub fn disconnect(&self) {
        self.disconnects.fetch_add(1, Ordering::Relaxed);
    }

    /// The text of `/metrics`.
    pub fn render(&self, s: &Snapshot) -> String {
        let mut out = String::with_capacity(4096);
        let head = |out: &mut String, name: &str, kind: &str, help: &str| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        };
        head(
            &mut out,
            "engine_serve_requests_total",
            "counter",
            "Requests answered, by key, endpoint and HTTP status (WebSocket: per query frame).",
        );
        for ((key, endpoint, code), n) in self.requests.lock().iter() {
            let _ = writeln!(
                out,
                "engine_serve_requests_total{{key=\"{key}\",endpoint=\"{endpoint}\",code=\"{code}\"}} {n}"
            );
        }
        head(
            &mut out,
            "engine_serve_queue_depth",
            "gauge",
            "Positions queued, by key.",
        );
        for (i, name) in s.key_names.iter().enumerate() {
            let depth = s
                .engine
                .queued_by_key
                .iter()
                .find(|(k, _)| *k == i)
                .map_or(0, |(_, d)| *d);
            let _ = writeln!(out, "engine_serve_queue_depth{{key=\"{name}\"}} {depth}");
        }
        head(
            &mut out,
            "engine_serve_queries_in_flight",
            "gauge",
            "Queries accepted and not yet finished, by key.",
        );
        for (name, n) in s.key_names.iter().zip(&s.in_flight) {
            let _ = writeln!(out, "engine_serve_queries_in_flight{{key=\"{name}\"}} {n}");
        }
        let scalars = [
            (
                "engine_serve_searches_running",
                "gauge",
                "Searches running now.",
                s.engine.running as u64,
            ),
            (
                "engine_serve_searches_total",
                "counter",
                "Searches finished.",
                s.engine.searches,
            ),
            (
                "engine_serve_visits_total",
                "counter",
                "Visits of the finished searches (rate() gives visits/s).",
                s.engine.visits,
            ),
            (
                "engine_serve_cancelled_jobs_total",
                "counter",
                "Positions stopped or dropped by terminate or by their client going away.",
                s.engine.cancelled,
            ),
            (
                "engine_serve_disconnects_total",
                "counter",
                "Clients that went away with queries open.",
                self.disconnects.load(Ordering::Relaxed),
            ),
        ];
        for (name, kind, help, value) in scalars {
            head(&mut out, name, kind, help);
            let _ = writeln!(out, "{name} {value}");
        }
        head(
            &mut out,
            "engine_serve_reviews",
            "gauge",
            "Whole-game review jobs held, by status.",
        );
        for (status, n) in &s.reviews {
            let _ = writeln!(out, "engine_serve_reviews{{status=\"{status}\"}} {n}");
        }
        if let Some(nn) = s.nn {
            head(
                &mut out,
                "engine_nn_rows_total",
                "counter",
                "Positions evaluated by the network (rows / batches = mean batch size).",
            );
            let _ = writeln!(out, "engine_nn_rows_total {}", nn.rows);
            head(
                &mut out,
                "engine_nn_batches_total",
                "counter",
                "Network batches run.",
            );
            let _ = writeln!(out, "engine_nn_batches_total {}", nn.batches);
            head(
                &mut out,
                "engine_nn_batch_size",
                "histogram",
                "Rows per network batch: how full cross-client batching keeps the evaluator.",
            );
            let mut cumulative = 0;
            for (count, bound) in nn.batch_sizes.iter().zip(BATCH_SIZE_BUCKETS) {
                cumulative += count;
                let _ = writeln!(
                    out,
                    "engine_nn_batch_size_bucket{{le=\"{bound}\"}} {cumulative}"
                );
            }
            let _ = writeln!(
                out,
                "engine_nn_batch_size_bucket{{le=\"+Inf\"}} {}\n\
                 engine_nn_batch_size_sum {}\n\
                 engine_nn_batch_size_count {}",
                nn.batches, nn.rows, nn.batches
            );
        }
        head(
            &mut out,
            "engine_serve_query_duration_seconds",
            "histogram",
            "Time from a query's acceptance to its last final response or its cancellation.",
        );
        let h = self.latency.lock();
        for (count, bound) in h.counts.iter().zip(LATENCY_BUCKETS) {
            let _ = writeln!(
                out,
                "engine_serve_query_duration_seconds_bucket{{le=\"{bound}\"}} {count}"
            );
        }
        let _ = writeln!(
            out,
            "engine_serve_query_duration_seconds_bucket{{le=\"+Inf\"}} {}\n\
             engine_serve_query_duration_seconds_sum {}\n\
             engine_serve_query_duration_seconds_count {}",
            h.count, h.sum, h.count
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_gauges_and_a_cumulative_histogram() {
        let m = Metrics::default();
        m.request("alice", "analyze", 200);
        m.request("alice", "analyze", 200);
        m.request("bob", "ws", 429);
        m.query_latency(Duration::from_millis(20));
        m.query_latency(Duration::from_secs(2));
        let text = m.render(&Snapshot {
            engine: EngineStats {
                queued_by_key: vec![(1, 7)],
                running: 2,
                cancelled: 3,
                searches: 4,
                visits: 500,
            },
            key_names: vec!["alice", "bob"],
            in_flight: vec![0, 5],
            nn: Some(EvalStats {
                rows: 100,
                batches: 10,
                batch_sizes: [0, 0, 1, 2, 3, 4, 0, 0, 0, 0],
                ..EvalStats::default()
            }),
            reviews: vec![("running", 1), ("done", 2)],
        });
        for line in [
            "engine_serve_requests_total{key=\"alice\",endpoint=\"analyze\",code=\"200\"} 2",
            "engine_serve_requests_total{key=\"bob\",endpoint=\"ws\",code=\"429\"} 1",
            "engine_serve_queue_depth{key=\"alice\"} 0",
            "engine_serve_queue_depth{key=\"bob\"} 7",
            "engine_serve_queries_in_flight{key=\"bob\"} 5",
            "engine_serve_searches_running 2",
            "engine_serve_cancelled_jobs_total 3",
            "engine_nn_batches_total 10",
            "engine_nn_batch_size_bucket{le=\"2\"} 0",
            "engine_nn_batch_size_bucket{le=\"4\"} 1",
            "engine_nn_batch_size_bucket{le=\"32\"} 10",
            "engine_nn_batch_size_bucket{le=\"+Inf\"} 10",
            "engine_nn_batch_size_sum 100",
            "engine_nn_batch_size_count 10",
            "engine_serve_reviews{status=\"done\"} 2",
            "engine_serve_query_duration_seconds_bucket{le=\"0.01\"} 0",
            "engine_serve_query_duration_seconds_bucket{le=\"0.025\"} 1",
            "engine_serve_query_duration_seconds_bucket{le=\"2.5\"} 2",
            "engine_serve_query_duration_seconds_bucket{le=\"+Inf\"} 2",
            "engine_serve_query_duration_seconds_count 2",
        ] {
            assert!(text.lines().any(|l| l == line), "{line}\n{text}");
        }
    }
}
