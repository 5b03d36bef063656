//! The batching evaluator against stub networks whose outputs are a known
//! function of their input, so that symmetry handling, batching, padding,
//! perspective and the cache can be checked exactly.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use engine::game::Player;
use engine::nn::{
    BatchModel, EncodedInput, EvalError, EvalRequest, Evaluator, EvaluatorConfig, InputBatch,
    ModelError, NetOutputs, NetRow, NnOutput, ScoreOutputs, Symmetry, SymmetryChoice,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Planes: 0 = on board, 1 = own stones, 2 = opponent stones.
const C: usize = 3;
/// Globals: 0 = pass logit and win logit, 1 = loss logit and score offset.
const G: usize = 2;

#[derive(Clone, Copy, PartialEq)]
enum Failure {
    None,
    Error,
    Panic,
}

/// Everything a stub saw, shared with the test.
#[derive(Default)]
struct Seen {
    batch_sizes: Mutex<Vec<usize>>,
    shapes: Mutex<Vec<(usize, usize)>>,
    dropped: AtomicBool,
    forwards: AtomicUsize,
    /// Forward passes on the evaluator's server threads (`nn-server-*`).
    on_servers: AtomicUsize,
}

/// A per-point ("equivariant") network: each point's outputs depend only
/// on the inputs at that point, so every symmetry must give the same
/// answer once undone. With `position_bias` the policy also depends on the
/// tensor index, which makes a wrong un-transform or a row mix-up visible.
struct Stub {
    seen: Arc<Seen>,
    delay: Duration,
    failure: Failure,
    position_bias: bool,
}

impl Stub {
    fn new(seen: &Arc<Seen>) -> Stub {
        Stub {
            seen: Arc::clone(seen),
            delay: Duration::ZERO,
            failure: Failure::None,
            position_bias: false,
        }
    }
}

impl Drop for Stub {
    fn drop(&mut self) {
        self.seen.dropped.store(true, Ordering::SeqCst);
    }
}

impl BatchModel for Stub {
    fn forward(&mut self, batch: &InputBatch) -> Result<NetOutputs, ModelError> {
        self.seen.forwards.fetch_add(1, Ordering::SeqCst);
        let thread = std::thread::current();
        if thread.name().is_some_and(|n| n.starts_with("nn-server-")) {
            self.seen.on_servers.fetch_add(1, Ordering::SeqCst);
        }
        self.seen.batch_sizes.lock().unwrap().push(batch.rows);
        self.seen
            .shapes
            .lock()
            .unwrap()
            .push((batch.x_len, batch.y_len));
        if !self.delay.is_zero() {
            std::thread::sleep(self.delay);
        }
        match self.failure {
            Failure::None => {}
            Failure::Error => return Err(ModelError::new("stub failure")),
            Failure::Panic => panic!("stub panic"),
        }
        let plane = batch.x_len * batch.y_len;
        let spatial = batch.spatial_rows();
        let mut rows = NetOutputs::empty(batch.y_len, batch.x_len);
        for r in 0..batch.rows {
            let s = &spatial[r * C * plane..(r + 1) * C * plane];
            let mask = &batch.mask_rows()[r * plane..(r + 1) * plane];
            let glob = &batch.global_rows()[r * G..(r + 1) * G];
            let (on, own, opp) = (&s[..plane], &s[plane..2 * plane], &s[2 * plane..]);
            if on != mask {
                return Err(ModelError::new("mask differs from the on-board plane"));
            }
            let mut policy: Vec<f32> = (0..plane)
                .map(|t| {
                    let bias = if self.position_bias {
                        t as f32 * 0.01
                    } else {
                        0.0
                    };
                    on[t] * (0.5 + 4.0 * own[t] - 2.0 * opp[t]) + bias
                })
                .collect();
            policy.push(glob[0]);
            let stones: f32 = own.iter().sum::<f32>() - opp.iter().sum::<f32>();
            let score = stones + glob[1];
            let ownership: Vec<f32> = if batch.include_ownership {
                (0..plane).map(|t| (own[t] - opp[t]).tanh()).collect()
            } else {
                Vec::new()
            };
            rows.push_row(NetRow {
                policy: &policy,
                policy_optimistic: None,
                value_logits: [glob[0], glob[1], -1.0],
                scores: ScoreOutputs {
                    score_mean: score,
                    score_stdev: 2.0,
                    lead: 0.5 * score,
                    var_time_left: on.iter().sum(),
                    shortterm_winloss_error: 0.1,
                    shortterm_score_error: 0.2,
                },
                ownership: &ownership,
            });
        }
        Ok(rows)
    }

    fn num_spatial_features(&self) -> usize {
        C
    }

    fn num_global_features(&self) -> usize {
        G
    }
}

fn config() -> EvaluatorConfig {
    EvaluatorConfig {
        max_batch_size: 16,
        cache_size_power_of_two: 10,
        max_batch_wait: Duration::from_millis(2),
        pad_to_len: None,
        rand_seed: None,
        callers_run: false,
    }
}

/// A position with stones at the given points (own, opponent).
fn position(
    x_size: usize,
    y_size: usize,
    own: &[(usize, usize)],
    opp: &[(usize, usize)],
) -> EncodedInput {
    let area = x_size * y_size;
    let mut spatial = vec![0.0; C * area];
    spatial[..area].fill(1.0);
    for &(x, y) in own {
        spatial[area + y * x_size + x] = 1.0;
    }
    for &(x, y) in opp {
        spatial[2 * area + y * x_size + x] = 1.0;
    }
    EncodedInput {
        x_size,
        y_size,
        spatial,
        global: vec![0.3, -0.2],
        meta: vec![],
    }
}

fn random_position(rng: &mut StdRng, x_size: usize, y_size: usize) -> EncodedInput {
    let mut own = vec![];
    let mut opp = vec![];
    for y in 0..y_size {
        for x in 0..x_size {
            match rng.gen_range(0..5) {
                0 => own.push((x, y)),
                1 => opp.push((x, y)),
                _ => {}
            }
        }
    }
    let mut input = position(x_size, y_size, &own, &opp);
    input.global = vec![rng.gen_range(-2.0..2.0), rng.gen_range(-2.0..2.0)];
    input
}

/// A request where every empty point and pass are legal.
fn request(input: EncodedInput, to_move: Player, hash: u128, sym: SymmetryChoice) -> EvalRequest {
    let area = input.x_size * input.y_size;
    let legal = (0..=area)
        .map(|i| {
            i == area || (input.spatial[area + i] == 0.0 && input.spatial[2 * area + i] == 0.0)
        })
        .collect();
    let mut req = EvalRequest::new(input, legal, to_move, hash);
    req.params.symmetry = sym;
    req.params.include_ownership = true;
    req
}

fn fixed(s: usize) -> SymmetryChoice {
    SymmetryChoice::Fixed(Symmetry::from_index(s).unwrap())
}

fn argmax(v: &[f32]) -> usize {
    (0..v.len()).fold(0, |best, i| if v[i] > v[best] { i } else { best })
}

const BOARDS: [(usize, usize); 5] = [(19, 19), (9, 9), (7, 5), (5, 13), (2, 3)];

#[test]
fn a_marked_stone_comes_back_to_its_point_under_every_symmetry() {
    for pad in [None, Some(19)] {
        let seen = Arc::new(Seen::default());
        let eval = Evaluator::new(
            Box::new(Stub::new(&seen)),
            EvaluatorConfig {
                pad_to_len: pad,
                ..config()
            },
        );
        for (b, &(xs, ys)) in BOARDS.iter().enumerate() {
            let hash = b as u128;
            // An opponent stone makes the point illegal, so mark it with a
            // stone whose point stays legal: legality comes from the mask
            // built here, not from the stub.
            let (sx, sy) = (xs - 1, ys / 3);
            let input = position(xs, ys, &[(sx, sy)], &[(0, ys - 1)]);
            let identity = {
                let mut req = request(input.clone(), Player::White, hash, fixed(0));
                req.legal.fill(true);
                eval.evaluate(req).unwrap()
            };
            assert_eq!(argmax(&identity.policy), sy * xs + sx, "{xs}x{ys}");
            for s in 0..8 {
                let mut req = request(input.clone(), Player::White, hash, fixed(s));
                req.legal.fill(true);
                let out = eval.evaluate(req).unwrap();
                assert_eq!(
                    argmax(&out.policy),
                    sy * xs + sx,
                    "{xs}x{ys} sym {s} pad {pad:?}"
                );
                let own = out.white_ownership.as_ref().unwrap();
                assert!(own[sy * xs + sx] > 0.7, "white's own stone is white's");
                assert!(own[(ys - 1) * xs] < -0.7);
                // The stub is per-point, so every symmetry gives exactly the
                // identity's answer.
                assert_eq!(*out, *identity, "{xs}x{ys} sym {s} pad {pad:?}");
                assert_eq!(out.var_time_left, (xs * ys) as f32, "padding is masked");
            }
        }
        let shapes = seen.shapes.lock().unwrap();
        if pad.is_some() {
            assert!(shapes.iter().all(|&s| s == (19, 19)));
        } else {
            assert!(
                shapes.contains(&(5, 7)) && shapes.contains(&(7, 5)),
                "transposed rectangles"
            );
        }
    }
}

#[test]
fn values_and_ownership_are_from_whites_perspective() {
    let seen = Arc::new(Seen::default());
    let eval = Evaluator::new(Box::new(Stub::new(&seen)), config());
    let input = position(9, 9, &[(2, 2), (3, 3)], &[(6, 6)]);
    let w = eval
        .evaluate(request(input.clone(), Player::White, 1, fixed(3)))
        .unwrap();
    let b = eval
        .evaluate(request(input, Player::Black, 2, fixed(5)))
        .unwrap();
    // Stub: win logit 0.3, loss logit -0.2, score = 1 stone - 0.2.
    let p = 1.0 / (1.0 + (-0.5f64).exp());
    assert!((f64::from(w.white_win_prob) - p).abs() < 1e-6);
    assert!((f64::from(b.white_loss_prob) - p).abs() < 1e-6);
    assert_eq!(w.white_no_result_prob, 0.0);
    assert!((w.white_score_mean - 0.8).abs() < 1e-6);
    assert!((b.white_score_mean + 0.8).abs() < 1e-6);
    assert!((w.white_lead - 0.4).abs() < 1e-6 && (b.white_lead + 0.4).abs() < 1e-6);
    assert!((w.white_score_stdev() - 2.0).abs() < 1e-5);
    let (wo, bo) = (
        w.white_ownership.as_ref().unwrap(),
        b.white_ownership.as_ref().unwrap(),
    );
    assert!(wo[2 * 9 + 2] > 0.7 && bo[2 * 9 + 2] < -0.7);
    assert_eq!(w.policy[0], b.policy[0]);
    assert_eq!(w.policy[2 * 9 + 2], -1.0, "occupied point is illegal");
}

#[test]
fn averaging_symmetries_matches_one_symmetry_of_a_per_point_net() {
    let seen = Arc::new(Seen::default());
    let eval = Evaluator::new(Box::new(Stub::new(&seen)), config());
    let mut rng = StdRng::seed_from_u64(7);
    for (i, &(xs, ys)) in BOARDS.iter().enumerate() {
        let input = random_position(&mut rng, xs, ys);
        let one = eval
            .evaluate(request(input.clone(), Player::Black, i as u128, fixed(0)))
            .unwrap();
        let before = seen.forwards.load(Ordering::SeqCst);
        let avg = eval
            .evaluate(request(
                input,
                Player::Black,
                i as u128,
                SymmetryChoice::Average(8),
            ))
            .unwrap();
        // The 8 rows are queued one by one, so a busy machine may let the
        // server start a batch before the last rows arrive: at least one
        // batch per tensor shape, never more than one per row.
        let batches = seen.forwards.load(Ordering::SeqCst) - before;
        let shapes = if xs == ys { 1 } else { 2 };
        assert!(
            (shapes..=8).contains(&batches),
            "{batches} batches for the 8 rows of a {xs}x{ys} board"
        );
        close(&one, &avg);
    }
}

fn close(a: &NnOutput, b: &NnOutput) {
    assert_eq!(a.policy.len(), b.policy.len());
    for (p, q) in a.policy.iter().zip(&b.policy) {
        assert!((p - q).abs() < 1e-6, "{p} vs {q}");
    }
    for (p, q) in [
        (a.white_win_prob, b.white_win_prob),
        (a.white_score_mean, b.white_score_mean),
        (a.white_score_mean_sq, b.white_score_mean_sq),
        (a.white_lead, b.white_lead),
        (a.var_time_left, b.var_time_left),
    ] {
        assert!((p - q).abs() < 1e-5 * (1.0 + p.abs()), "{p} vs {q}");
    }
}

#[test]
fn concurrent_callers_get_the_one_at_a_time_answers_in_batches() {
    const THREADS: usize = 8;
    const PER_THREAD: usize = 150;
    let sizes = [(9, 9), (19, 19), (7, 5)];
    let jobs: Vec<Vec<(EncodedInput, Player, usize)>> = (0..THREADS)
        .map(|t| {
            let mut rng = StdRng::seed_from_u64(t as u64);
            (0..PER_THREAD)
                .map(|i| {
                    let (xs, ys) = sizes[i % sizes.len()];
                    let pla = if rng.gen() {
                        Player::Black
                    } else {
                        Player::White
                    };
                    (random_position(&mut rng, xs, ys), pla, rng.gen_range(0..8))
                })
                .collect()
        })
        .collect();
    let make = |pad| {
        let seen = Arc::new(Seen::default());
        let mut stub = Stub::new(&seen);
        stub.position_bias = true;
        stub.delay = Duration::from_micros(300);
        let eval = Evaluator::new(
            Box::new(stub),
            EvaluatorConfig {
                pad_to_len: pad,
                ..config()
            },
        );
        (eval, seen)
    };
    for pad in [None, Some(19)] {
        // One at a time.
        let (serial, _) = make(pad);
        let expected: Vec<Vec<Arc<NnOutput>>> = jobs
            .iter()
            .map(|js| {
                js.iter()
                    .map(|(input, pla, s)| {
                        let mut req = request(input.clone(), *pla, 0, fixed(*s));
                        req.params.skip_cache = true;
                        serial.evaluate(req).unwrap()
                    })
                    .collect()
            })
            .collect();
        assert_eq!(serial.stats().average_batch_size(), 1.0);

        // Eight threads at once through one evaluator.
        let (eval, seen) = make(pad);
        std::thread::scope(|scope| {
            for (js, want) in jobs.iter().zip(&expected) {
                let eval = eval.clone();
                scope.spawn(move || {
                    for ((input, pla, s), want) in js.iter().zip(want) {
                        let mut req = request(input.clone(), *pla, 0, fixed(*s));
                        req.params.skip_cache = true;
                        let got = eval.evaluate(req).unwrap();
                        assert_eq!(*got, **want);
                    }
                });
            }
        });
        let stats = eval.stats();
        assert_eq!(stats.rows, (THREADS * PER_THREAD) as u64);
        assert!(
            stats.average_batch_size() > 2.0,
            "batches should form with {THREADS} threads: {stats:?}"
        );
        let sizes = seen.batch_sizes.lock().unwrap();
        assert!(sizes.iter().all(|&n| (1..=16).contains(&n)));
        // The histogram of batch sizes counts exactly the batches the model
        // saw, each in its bucket (bounds 1, 2, 4, 8, 16, ...).
        let mut want = [0u64; engine::nn::BATCH_SIZE_BUCKETS.len()];
        for &n in sizes.iter() {
            want[engine::nn::BATCH_SIZE_BUCKETS
                .iter()
                .position(|&b| n as u64 <= b)
                .unwrap()] += 1;
        }
        assert_eq!(stats.batch_sizes, want, "{stats:?}");
        assert_eq!(stats.batches, sizes.len() as u64);
        if pad.is_some() {
            assert!(seen.shapes.lock().unwrap().iter().all(|&s| s == (19, 19)));
        }
    }
}

#[test]
fn callers_run_the_net_on_a_free_model_and_queue_when_others_wait() {
    const THREADS: usize = 8;
    const PER_THREAD: usize = 60;
    let make = |callers_run| {
        let seen = Arc::new(Seen::default());
        let models: Vec<Box<dyn BatchModel>> = (0..2)
            .map(|_| {
                let mut stub = Stub::new(&seen);
                stub.position_bias = true;
                stub.delay = Duration::from_micros(300);
                Box::new(stub) as Box<dyn BatchModel>
            })
            .collect();
        let config = EvaluatorConfig {
            callers_run,
            ..config()
        };
        (Evaluator::with_models(models, config).unwrap(), seen)
    };
    let jobs: Vec<Vec<(EncodedInput, usize)>> = (0..THREADS)
        .map(|t| {
            let mut rng = StdRng::seed_from_u64(40 + t as u64);
            (0..PER_THREAD)
                .map(|_| (random_position(&mut rng, 9, 9), rng.gen_range(0..8)))
                .collect()
        })
        .collect();
    let ask = |eval: &Evaluator, (input, s): &(EncodedInput, usize)| {
        let mut req = request(input.clone(), Player::White, 0, fixed(*s));
        req.params.skip_cache = true;
        eval.evaluate(req).unwrap()
    };

    // A lone caller runs its rows itself: no server sees them.
    let (serial, seen) = make(true);
    let expected: Vec<Vec<Arc<NnOutput>>> = jobs
        .iter()
        .map(|js| js.iter().map(|j| ask(&serial, j)).collect())
        .collect();
    assert_eq!(seen.forwards.load(Ordering::SeqCst), THREADS * PER_THREAD);
    assert_eq!(seen.on_servers.load(Ordering::SeqCst), 0);
    assert_eq!(serial.stats().rows, (THREADS * PER_THREAD) as u64);
    // Averaged symmetries run as one batch on the caller's thread.
    let average_all = |eval: &Evaluator| {
        let mut req = request(
            jobs[0][0].0.clone(),
            Player::White,
            0,
            SymmetryChoice::Average(8),
        );
        req.params.skip_cache = true;
        eval.evaluate(req).unwrap()
    };
    let averaged = average_all(&serial);
    assert_eq!(seen.batch_sizes.lock().unwrap().last(), Some(&8));
    assert_eq!(seen.on_servers.load(Ordering::SeqCst), 0);

    // Without it, every row goes through a server, with the same answers.
    let (queued, seen) = make(false);
    for (js, want) in jobs.iter().zip(&expected) {
        for (j, want) in js.iter().zip(want) {
            assert_eq!(*ask(&queued, j), **want);
        }
    }
    close(&average_all(&queued), &averaged);
    // Every forward pass ran on a server (the averaged request's 8 rows
    // in one batch, or split over the two servers).
    let on_servers = seen.on_servers.load(Ordering::SeqCst);
    assert_eq!(on_servers, seen.forwards.load(Ordering::SeqCst));
    assert!((THREADS * PER_THREAD + 1..=THREADS * PER_THREAD + 2).contains(&on_servers));

    // Eight callers on two models: some run their own rows, the others
    // queue and the servers batch them; every answer is the lone one.
    let (eval, seen) = make(true);
    std::thread::scope(|scope| {
        for (js, want) in jobs.iter().zip(&expected) {
            let eval = eval.clone();
            scope.spawn(move || {
                for (j, want) in js.iter().zip(want) {
                    assert_eq!(*ask(&eval, j), **want);
                }
            });
        }
    });
    let stats = eval.stats();
    assert_eq!(stats.rows, (THREADS * PER_THREAD) as u64);
    let (forwards, on_servers) = (
        seen.forwards.load(Ordering::SeqCst),
        seen.on_servers.load(Ordering::SeqCst),
    );
    assert!(
        on_servers > 0 && on_servers < forwards,
        "{on_servers} of {forwards}"
    );
    assert!(stats.average_batch_size() > 1.0, "{stats:?}");
}

#[test]
fn a_model_that_panics_on_a_callers_thread_is_dropped() {
    let seen = Arc::new(Seen::default());
    let mut stub = Stub::new(&seen);
    stub.failure = Failure::Panic;
    let eval = Evaluator::with_models(
        vec![Box::new(stub)],
        EvaluatorConfig {
            callers_run: true,
            ..config()
        },
    )
    .unwrap();
    let req = || request(position(9, 9, &[], &[]), Player::Black, 1, fixed(0));
    let err = eval.evaluate(req()).unwrap_err();
    assert!(
        err.to_string().contains("model panicked: stub panic"),
        "{err}"
    );
    assert!(seen.dropped.load(Ordering::SeqCst), "the model is dropped");
    assert_eq!(seen.on_servers.load(Ordering::SeqCst), 0);
    // Nobody runs it again: the next request fails, it does not hang.
    assert!(matches!(eval.evaluate(req()), Err(EvalError::Stopped)));
    assert_eq!(seen.forwards.load(Ordering::SeqCst), 1);
}

#[test]
fn a_lone_caller_is_not_kept_waiting_for_a_batch() {
    let seen = Arc::new(Seen::default());
    let eval = Evaluator::new(
        Box::new(Stub::new(&seen)),
        EvaluatorConfig {
            max_batch_wait: Duration::from_secs(1),
            ..config()
        },
    );
    let mut rng = StdRng::seed_from_u64(3);
    let start = Instant::now();
    for i in 0..20 {
        let req = request(
            random_position(&mut rng, 9, 9),
            Player::Black,
            i,
            SymmetryChoice::Random,
        );
        eval.evaluate(req).unwrap();
    }
    // Waiting for a batch would take 20 s here; a generous bound only.
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn a_failing_model_fails_every_waiting_caller() {
    for failure in [Failure::Error, Failure::Panic] {
        let seen = Arc::new(Seen::default());
        let mut stub = Stub::new(&seen);
        stub.failure = failure;
        stub.delay = Duration::from_millis(2);
        let eval = Evaluator::new(Box::new(stub), config());
        let errors: Vec<EvalError> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..8)
                .map(|t| {
                    let eval = eval.clone();
                    scope.spawn(move || {
                        let mut rng = StdRng::seed_from_u64(t);
                        let mut errs = vec![];
                        for i in 0..5 {
                            let req = request(
                                random_position(&mut rng, 9, 9),
                                Player::White,
                                i,
                                SymmetryChoice::Average(2),
                            );
                            errs.push(eval.evaluate(req).unwrap_err());
                        }
                        errs
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect()
        });
        assert_eq!(errors.len(), 40);
        match failure {
            Failure::Error => {
                assert!(errors.iter().all(|e| matches!(e, EvalError::Model(_))));
            }
            _ => {
                assert!(errors
                    .iter()
                    .any(|e| e.to_string().contains("model panicked: stub panic")));
                assert!(errors
                    .iter()
                    .all(|e| matches!(e, EvalError::Model(_) | EvalError::Stopped)));
                assert!(
                    seen.dropped.load(Ordering::SeqCst),
                    "the panicked server let go of its model"
                );
            }
        }
        drop(eval);
    }
}

#[test]
fn bad_requests_are_rejected_before_the_queue() {
    let seen = Arc::new(Seen::default());
    let eval = Evaluator::new(Box::new(Stub::new(&seen)), config());
    let good = request(position(9, 9, &[], &[]), Player::Black, 1, fixed(0));
    let mut r = good.clone();
    r.input.spatial.pop();
    assert!(matches!(eval.evaluate(r), Err(EvalError::BadRequest(_))));
    let mut r = good.clone();
    r.legal.fill(false);
    assert!(matches!(eval.evaluate(r), Err(EvalError::BadRequest(_))));
    let mut r = good.clone();
    r.params.policy_temperature = 0.0;
    assert!(matches!(eval.evaluate(r), Err(EvalError::BadRequest(_))));
    let mut r = good.clone();
    r.params.symmetry = SymmetryChoice::Average(9);
    assert!(matches!(eval.evaluate(r), Err(EvalError::BadRequest(_))));
    assert_eq!(seen.forwards.load(Ordering::SeqCst), 0);
    assert!(eval.evaluate(good).is_ok());
}

#[test]
fn the_cache_returns_the_same_result_and_stays_bounded() {
    let seen = Arc::new(Seen::default());
    let eval = Evaluator::new(
        Box::new(Stub::new(&seen)),
        EvaluatorConfig {
            cache_size_power_of_two: 3,
            ..config()
        },
    );
    let input = position(9, 9, &[(4, 4)], &[]);
    let mut first = request(input.clone(), Player::Black, 42, SymmetryChoice::Random);
    first.params.include_ownership = false;
    let a = eval.evaluate(first.clone()).unwrap();
    let b = eval.evaluate(first.clone()).unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    assert_eq!(seen.forwards.load(Ordering::SeqCst), 1);
    assert_eq!(eval.stats().cache_hits, 1);
    assert!(eval.lookup(42, &first.params).is_some());

    // Asking for ownership re-runs the net but keeps the cached policy.
    let mut with_own = first.clone();
    with_own.params.include_ownership = true;
    let c = eval.evaluate(with_own.clone()).unwrap();
    assert_eq!(seen.forwards.load(Ordering::SeqCst), 2);
    assert_eq!(c.policy, a.policy);
    assert!(c.white_ownership.is_some());
    let d = eval.evaluate(with_own).unwrap();
    assert!(Arc::ptr_eq(&c, &d));

    // Different params, different entries.
    let mut hot = first.clone();
    hot.params.policy_temperature = 1.5;
    let e = eval.evaluate(hot).unwrap();
    assert_ne!(e.policy, a.policy);
    let mut skip = first.clone();
    skip.params.skip_cache = true;
    let f = eval.evaluate(skip).unwrap();
    assert!(!Arc::ptr_eq(&f, &c));

    // Bounded, and clear works.
    let mut rng = StdRng::seed_from_u64(9);
    for h in 0..100u128 {
        let req = request(
            random_position(&mut rng, 5, 5),
            Player::White,
            h * 7919,
            fixed(0),
        );
        eval.evaluate(req).unwrap();
    }
    assert!(eval.cache().len() <= 8);
    eval.clear_cache();
    assert!(eval.cache().is_empty());
    assert!(eval.lookup(42, &first.params).is_none());
}

#[test]
fn dropping_the_evaluator_stops_its_server() {
    let seen = Arc::new(Seen::default());
    let eval = Evaluator::new(Box::new(Stub::new(&seen)), config());
    let clone = eval.clone();
    clone
        .evaluate(request(
            position(5, 5, &[], &[]),
            Player::Black,
            1,
            fixed(1),
        ))
        .unwrap();
    drop(eval);
    assert!(
        !seen.dropped.load(Ordering::SeqCst),
        "a clone is still alive"
    );
    drop(clone);
    assert!(
        seen.dropped.load(Ordering::SeqCst),
        "server joined and model dropped"
    );
}

#[test]
fn several_servers_share_the_queue() {
    let seen = Arc::new(Seen::default());
    let models: Vec<Box<dyn BatchModel>> = (0..2)
        .map(|_| {
            let mut s = Stub::new(&seen);
            s.delay = Duration::from_micros(200);
            Box::new(s) as Box<dyn BatchModel>
        })
        .collect();
    let eval = Evaluator::with_models(models, config()).unwrap();
    assert_eq!(eval.num_servers(), 2);
    std::thread::scope(|scope| {
        for t in 0..4u128 {
            let eval = eval.clone();
            scope.spawn(move || {
                let mut rng = StdRng::seed_from_u64(100 + t as u64);
                for i in 0..50 {
                    let input = random_position(&mut rng, 9, 9);
                    let one = eval
                        .evaluate(request(
                            input.clone(),
                            Player::White,
                            t * 1000 + i,
                            fixed(0),
                        ))
                        .unwrap();
                    let mut req = request(input, Player::White, t * 1000 + i, fixed(6));
                    req.params.skip_cache = true;
                    assert_eq!(*eval.evaluate(req).unwrap(), *one);
                }
            });
        }
    });
    assert_eq!(eval.stats().rows, 400);
}
