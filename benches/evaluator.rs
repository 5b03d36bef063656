//! Evaluator overhead with a network that costs (almost) nothing: what the
//! queue, the thread hand-off, the symmetry copy and the post-processing
//! add to every evaluation; and how batches form under 8 callers when each
//! forward pass takes a fixed time.
//!
//! `./setup.sh cargo bench --bench evaluator`

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use engine::game::Player;
use engine::nn::{
    BatchModel, EncodedInput, EvalRequest, Evaluator, EvaluatorConfig, InputBatch, ModelError,
    NetOutputs, NetRow, ScoreOutputs, SymmetryChoice,
};

const C: usize = 22;
const G: usize = 19;

/// Returns a fixed row per input row, after sleeping `delay` per batch.
struct Constant {
    policy: Vec<f32>,
    ownership: Vec<f32>,
    delay: Duration,
}

impl BatchModel for Constant {
    fn forward(&mut self, batch: &InputBatch) -> Result<NetOutputs, ModelError> {
        if !self.delay.is_zero() {
            std::thread::sleep(self.delay);
        }
        let mut out = NetOutputs::empty(batch.y_len, batch.x_len);
        for _ in 0..batch.rows {
            out.push_row(NetRow {
                policy: &self.policy,
                policy_optimistic: None,
                value_logits: [0.2, -0.1, -3.0],
                scores: ScoreOutputs {
                    score_mean: 1.0,
                    score_stdev: 8f32.sqrt(),
                    lead: 0.5,
                    var_time_left: 0.0,
                    shortterm_winloss_error: 0.0,
                    shortterm_score_error: 0.0,
                },
                ownership: &self.ownership,
            });
        }
        Ok(out)
    }
    fn num_spatial_features(&self) -> usize {
        C
    }
    fn num_global_features(&self) -> usize {
        G
    }
}

fn evaluator(delay: Duration, max_batch_wait: Duration) -> Evaluator {
    let area = 19 * 19;
    let policy = (0..=area).map(|i| (i % 7) as f32 * 0.3).collect();
    let ownership = vec![0.1; area];
    Evaluator::new(
        Box::new(Constant {
            policy,
            ownership,
            delay,
        }),
        EvaluatorConfig {
            max_batch_wait,
            ..EvaluatorConfig::default()
        },
    )
}

fn request(hash: u128, skip_cache: bool) -> EvalRequest {
    let area = 19 * 19;
    let input = EncodedInput {
        x_size: 19,
        y_size: 19,
        spatial: vec![0.5; C * area],
        global: vec![0.0; G],
        meta: vec![],
    };
    let mut req = EvalRequest::new(input, vec![true; area + 1], Player::Black, hash);
    req.params.skip_cache = skip_cache;
    req.params.symmetry = SymmetryChoice::Random;
    req
}

fn overhead(c: &mut Criterion) {
    let eval = evaluator(Duration::ZERO, Duration::from_micros(500));
    c.bench_function("evaluate 19x19 one thread, cache miss", |b| {
        b.iter_batched(
            || request(1, true),
            |req| eval.evaluate(req).unwrap(),
            criterion::BatchSize::SmallInput,
        )
    });
    eval.evaluate(request(2, false)).unwrap();
    c.bench_function("evaluate 19x19 one thread, cache hit", |b| {
        b.iter_batched(
            || request(2, false),
            |req| eval.evaluate(req).unwrap(),
            criterion::BatchSize::SmallInput,
        )
    });
}

/// 8 callers, a forward pass of 1 ms whatever the batch size: with perfect
/// batching 8 rows take 1 ms.
fn batching(_c: &mut Criterion) {
    for wait in [Duration::ZERO, Duration::from_micros(500)] {
        let eval = evaluator(Duration::from_millis(1), wait);
        let per_thread = 300;
        let start = Instant::now();
        std::thread::scope(|s| {
            for t in 0..8u128 {
                let eval = eval.clone();
                s.spawn(move || {
                    for i in 0..per_thread {
                        eval.evaluate(request(t << 32 | i, true)).unwrap();
                    }
                });
            }
        });
        let secs = start.elapsed().as_secs_f64();
        let stats = eval.stats();
        eprintln!(
            "8 threads, 1 ms forward, max_batch_wait {wait:?}: {:.0} rows/s, average batch {:.2}",
            stats.rows as f64 / secs,
            stats.average_batch_size()
        );
    }
}

criterion_group!(benches, overhead, batching);
criterion_main!(benches);
