//! `engine_go.Net`: a KataGo network on the pure-Rust CPU backend,
//! evaluating batches of positions to NumPy arrays.
//!
//! The net is loaded as every engine command loads it
//! (`engine::setup::load_network`: model file, backend, one server thread
//! per model, the batching evaluator). A call's positions are handed to
//! the evaluator from a few caller threads at once, so that its servers
//! run full batches; the GIL is released meanwhile.

use std::path::PathBuf;
use std::sync::{Arc, Barrier};

use engine::game::{GameState, KoRule, Move, Player, ScoringRule};
use engine::nn::{
    nn_input_hash, EncodedInput, EvalParams, EvalRequest, FeatureEncoder, InputVersion,
    NnInputParams, NnOutput, Symmetry, SymmetryChoice,
};
use engine::setup::Network;
use numpy::ndarray::{Array1, Array2, Array3};
use numpy::{IntoPyArray, PyReadonlyArray2, PyReadonlyArray4, PyUntypedArrayMethods};
use parking_lot::Mutex;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::errors::{check_exists, runtime_error, setup_error, value_error};
use crate::position::Position;

thread_local! {
    /// Ladder-search buffers of this thread's encoder, kept between rows.
    static ENCODER: std::cell::RefCell<FeatureEncoder> =
        std::cell::RefCell::new(FeatureEncoder::new());
}

/// How each position is oriented for the net.
#[derive(Clone, Copy)]
enum SymArg {
    /// Exactly this symmetry (0 = as given).
    Fixed(usize),
    /// The mean of all 8 symmetries' post-processed outputs (what KataGo's
    /// analysis reports with `rootNumSymmetriesToSample = 8`).
    Average,
}

fn sym_arg(obj: Option<&Bound<'_, PyAny>>) -> PyResult<SymArg> {
    let Some(obj) = obj else {
        return Ok(SymArg::Fixed(0));
    };
    if obj.is_none() {
        return Ok(SymArg::Fixed(0));
    }
    if let Ok(s) = obj.downcast::<PyString>() {
        return match &*s.to_cow()? {
            "average" | "all" => Ok(SymArg::Average),
            other => Err(value_error(format!(
                "symmetry: {other:?} is not 0-7 or \"average\""
            ))),
        };
    }
    match obj.extract::<i64>() {
        Ok(n @ 0..=7) => Ok(SymArg::Fixed(n as usize)),
        Ok(n) => Err(value_error(format!(
            "symmetry: {n} is not 0-7 or \"average\""
        ))),
        Err(_) => Err(PyTypeError::new_err(
            "symmetry is None, an int 0-7 or \"average\"",
        )),
    }
}

/// A KataGo network (``.bin.gz``/``.bin``, any model version the engine
/// reads) on the CPU.
///
/// ``Net(model, threads=None, max_batch=64, precision=None)``: ``threads``
/// is the number of network server threads, each running whole batches on
/// one core (default: one per core, at most 16); ``max_batch`` the most
/// positions in one forward pass; ``precision`` the engine's
/// ``nnPrecision`` (``"fp32"``, KataGo's arithmetic; ``"bf16"``,
/// ``"int8"``; ``None`` or ``"auto"``: the engine's default, which picks
/// bf16 for a wide net where the CPU runs it, else fp32, and says so in
/// ``device``). Raises ``FileNotFoundError`` for a missing file and
/// ``ValueError`` for one that is not a KataGo network, or for a precision
/// this CPU does not run.
#[pyclass(module = "engine_go", frozen)]
pub struct Net {
    net: Network,
    inputs: InputVersion,
}

impl Net {
    /// The evaluator's request for one position, encoded as the search's
    /// evaluator encodes it (`engine::search::NnSearchEvaluator`: the same
    /// features, hash, legal moves and no-result rule) with KataGo's
    /// default input parameters.
    fn request(&self, state: &GameState, sym: SymArg, history: bool) -> EvalRequest {
        let params = NnInputParams {
            max_history: if history { 1000 } else { 0 },
            ..NnInputParams::default()
        };
        let (board, hist, next) = (&state.board, &state.hist, state.next);
        let hash = nn_input_hash(board, hist, next, &params).0;
        let (x, y) = (board.x_size(), board.y_size());
        let mut input = EncodedInput {
            x_size: x,
            y_size: y,
            spatial: vec![0.0; self.inputs.num_spatial_features() * x * y],
            global: vec![0.0; self.inputs.num_global_features()],
            meta: Vec::new(),
        };
        ENCODER.with(|enc| {
            enc.borrow_mut().fill_row(
                self.inputs,
                board,
                hist,
                next,
                &params,
                &mut input.spatial,
                &mut input.global,
            )
        });
        let mut legal: Vec<bool> = board
            .locs()
            .map(|loc| hist.is_legal(board, Move::Play(loc), next))
            .collect();
        legal.push(true);
        let rules = hist.rules();
        let mut req = EvalRequest::new(input, legal, next, hash);
        req.params = EvalParams {
            symmetry: match sym {
                SymArg::Fixed(s) => SymmetryChoice::Fixed(Symmetry::ALL[s]),
                SymArg::Average => SymmetryChoice::Average(Symmetry::COUNT as u8),
            },
            include_ownership: true,
            // A fixed symmetry bypasses the cache, as GTP's kata-raw-nn.
            skip_cache: matches!(sym, SymArg::Fixed(_)),
            // KataGo: no result only under simple ko or territory scoring.
            allow_no_result: rules.ko_rule == KoRule::Simple
                || rules.scoring_rule == ScoringRule::Territory,
            ..EvalParams::default()
        };
        req
    }

    /// Evaluates every state, many at once; results in order.
    fn run(
        &self,
        states: &[GameState],
        sym: SymArg,
        history: bool,
    ) -> Result<Vec<Arc<NnOutput>>, String> {
        self.run_each(states.len(), |i| self.request(&states[i], sym, history))
    }

    /// Evaluates the requests `make(i)` for `i in 0..n` from enough
    /// threads that the evaluator's servers get full batches; results in
    /// order, the first error wins.
    ///
    /// Each caller thread takes rows `k, k + callers, ...`, builds all its
    /// requests first (encoding runs on every core at once), waits for the
    /// others, then queues them one at a time (each blocks until its
    /// batch is done). Queueing together matters: a server starts as soon
    /// as a row arrives, and while dozens of threads still encode it would
    /// run many small batches (a row costs 1.8 times as much alone as in a
    /// batch of 64 on the CPU) with the encoders taking its core.
    fn run_each<F>(&self, n: usize, make: F) -> Result<Vec<Arc<NnOutput>>, String>
    where
        F: Fn(usize) -> EvalRequest + Sync,
    {
        let ev = self.net.evaluator.evaluator();
        let slots: Vec<Mutex<Option<Arc<NnOutput>>>> = (0..n).map(|_| Mutex::new(None)).collect();
        let error: Mutex<Option<String>> = Mutex::new(None);
        let callers = n.min(self.net.max_batch_size * self.net.server_threads.max(1));
        let start = Barrier::new(callers);
        let slots_ref = &slots;
        let error_ref = &error;
        let (make, start) = (&make, &start);
        std::thread::scope(|scope| {
            for k in 0..callers {
                scope.spawn(move || {
                    let mine: Vec<(usize, EvalRequest)> =
                        (k..n).step_by(callers).map(|i| (i, make(i))).collect();
                    start.wait();
                    for (i, req) in mine {
                        if error_ref.lock().is_some() {
                            return;
                        }
                        match ev.evaluate(req) {
                            Ok(out) => *slots_ref[i].lock() = Some(out),
                            Err(e) => {
                                error_ref.lock().get_or_insert(e.to_string());
                                return;
                            }
                        }
                    }
                });
            }
        });
        if let Some(e) = error.into_inner() {
            return Err(e);
        }
        slots
            .into_iter()
            .map(|s| {
                s.into_inner()
                    .ok_or_else(|| "a row was not evaluated".to_string())
            })
            .collect()
    }
}

/// The outputs of `n` rows of one board size as a dict of arrays, each
/// row from the point of view of its player to move.
fn to_arrays<'py>(
    py: Python<'py>,
    outs: &[Arc<NnOutput>],
    to_move: &[Player],
    (w, h): (usize, usize),
) -> PyResult<Bound<'py, PyDict>> {
    let n = outs.len();
    let area = w * h;
    let mut policy = Vec::with_capacity(n * (area + 1));
    let mut value = Vec::with_capacity(n * 3);
    let mut lead = Vec::with_capacity(n);
    let mut score_mean = Vec::with_capacity(n);
    let mut score_stdev = Vec::with_capacity(n);
    let mut ownership = Vec::with_capacity(n * area);
    for (o, &pla) in outs.iter().zip(to_move) {
        if o.policy.len() != area + 1 {
            return Err(runtime_error("the network's policy has the wrong length"));
        }
        // NnOutput is white's view; the API is the player to move's.
        let sign = if pla == Player::White { 1.0 } else { -1.0 };
        policy.extend_from_slice(&o.policy);
        let (win, loss) = if pla == Player::White {
            (o.white_win_prob, o.white_loss_prob)
        } else {
            (o.white_loss_prob, o.white_win_prob)
        };
        value.extend_from_slice(&[win, loss, o.white_no_result_prob]);
        lead.push(sign * o.white_lead);
        score_mean.push(sign * o.white_score_mean);
        score_stdev.push(o.white_score_stdev());
        match &o.white_ownership {
            Some(own) if own.len() == area => ownership.extend(own.iter().map(|v| sign * v)),
            _ => return Err(runtime_error("the network gave no ownership")),
        }
    }
    let d = PyDict::new(py);
    let shape_err = |e: numpy::ndarray::ShapeError| runtime_error(e);
    d.set_item(
        "policy",
        Array2::from_shape_vec((n, area + 1), policy)
            .map_err(shape_err)?
            .into_pyarray(py),
    )?;
    d.set_item(
        "value",
        Array2::from_shape_vec((n, 3), value)
            .map_err(shape_err)?
            .into_pyarray(py),
    )?;
    d.set_item("score_lead", Array1::from(lead).into_pyarray(py))?;
    d.set_item("score_mean", Array1::from(score_mean).into_pyarray(py))?;
    d.set_item("score_stdev", Array1::from(score_stdev).into_pyarray(py))?;
    d.set_item(
        "ownership",
        Array3::from_shape_vec((n, h, w), ownership)
            .map_err(shape_err)?
            .into_pyarray(py),
    )?;
    Ok(d)
}

#[pymethods]
impl Net {
    #[new]
    #[pyo3(signature = (model, threads=None, max_batch=64, precision=None))]
    fn new(
        py: Python<'_>,
        model: PathBuf,
        threads: Option<usize>,
        max_batch: usize,
        precision: Option<String>,
    ) -> PyResult<Net> {
        check_exists(&model, "model file")?;
        if !(1..=4096).contains(&max_batch) {
            return Err(value_error(format!("max_batch: {max_batch} is not 1-4096")));
        }
        let mut overrides = vec![
            format!("nnMaxBatchSize={max_batch}"),
            // Calls choose their symmetry; a small cache (repeated
            // positions of one call) rather than the engine's
            // memory-sized one.
            "nnCacheSizePowerOfTwo=10".to_string(),
            "nnRandomize=false".to_string(),
        ];
        if let Some(t) = threads {
            if !(1..=1024).contains(&t) {
                return Err(value_error(format!("threads: {t} is not 1-1024")));
            }
            overrides.push(format!("numNNServerThreadsPerModel={t}"));
        }
        if let Some(p) = precision {
            // Parsed by the engine's own rule and passed on as its name, so
            // the override's syntax (`,` and `=`) never reaches the config.
            let word = if p.trim().eq_ignore_ascii_case("auto") {
                "auto"
            } else {
                engine::nn::device::Precision::parse(&p)
                    .ok_or_else(|| {
                        value_error(format!(
                            "precision: {p:?} is not fp32, fp16, bf16, int8 or auto"
                        ))
                    })?
                    .name()
            };
            overrides.push(format!("nnPrecision={word}"));
        }
        let net = py.allow_threads(|| {
            let cfg = engine::setup::load_config(None, &overrides)
                .map_err(|e| setup_error(engine::setup::SetupError::Config(Box::new(e))))?;
            engine::setup::load_network(&model, &cfg, max_batch).map_err(setup_error)
        })?;
        if net.uses_human_sl_profile {
            return Err(value_error(
                "this is a human-style net (it reads SGF metadata): Net does not take a \
                 profile yet; use Analyzer with humanSLProfile",
            ));
        }
        let inputs = InputVersion::of_model_version(net.model_version).ok_or_else(|| {
            value_error(format!(
                "model version {} has no known input features",
                net.model_version
            ))
        })?;
        Ok(Net { net, inputs })
    }

    /// The network's name (from the model file).
    #[getter]
    fn name(&self) -> String {
        self.net.model_name.clone()
    }

    /// KataGo's model version of the network.
    #[getter]
    fn version(&self) -> i32 {
        self.net.model_version
    }

    /// Where the network runs (backend, threads, precision).
    #[getter]
    fn device(&self) -> String {
        self.net.device.clone()
    }

    /// Spatial input planes and global inputs the net reads (22 and 19
    /// for KataGo's V7 inputs).
    #[getter]
    fn num_inputs(&self) -> (usize, usize) {
        (
            self.inputs.num_spatial_features(),
            self.inputs.num_global_features(),
        )
    }

    /// Evaluates ``positions`` (a list of ``Position`` of one board size, or
    /// one ``Position``) in batches and returns NumPy arrays, every row
    /// from the point of view of its player to move:
    ///
    /// - ``policy``: ``float32 [N, H*W+1]``, probabilities over the legal
    ///   moves, index ``y * W + x`` (row 0 at the top), pass last; illegal
    ///   points are -1;
    /// - ``value``: ``float32 [N, 3]``: win, loss, no result;
    /// - ``score_lead``, ``score_mean``, ``score_stdev``: ``float32 [N]``,
    ///   points;
    /// - ``ownership``: ``float32 [N, H, W]``, +1 owned by the player to move.
    ///
    /// ``symmetry``: ``None`` or 0 the position as given, 1-7 one of the
    /// other board symmetries, ``"average"`` the mean over all 8 (what
    /// KataGo's analysis reports with ``rootNumSymmetriesToSample=8``).
    /// ``history=False`` hides the previous moves from the net, as KataGo's
    /// analysis does at the root (``ignorePreRootHistory``).
    #[pyo3(signature = (positions, symmetry=None, history=true))]
    fn evaluate<'py>(
        &self,
        py: Python<'py>,
        positions: &Bound<'py, PyAny>,
        symmetry: Option<&Bound<'py, PyAny>>,
        history: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let sym = sym_arg(symmetry)?;
        let states: Vec<GameState> = if let Ok(p) = positions.downcast::<Position>() {
            vec![p.borrow().state.clone()]
        } else {
            let mut v = Vec::new();
            for item in positions.try_iter()? {
                let item = item?;
                let p = item.downcast::<Position>().map_err(|_| {
                    PyTypeError::new_err("positions is a list of engine_go.Position")
                })?;
                v.push(p.borrow().state.clone());
            }
            v
        };
        let size = states
            .first()
            .map_or((19, 19), |s| (s.x_size(), s.y_size()));
        if states.iter().any(|s| (s.x_size(), s.y_size()) != size) {
            return Err(value_error(
                "all positions of one evaluate() call must have the same board size",
            ));
        }
        let outs = py
            .allow_threads(|| self.run(&states, sym, history))
            .map_err(runtime_error)?;
        let to_move: Vec<Player> = states.iter().map(|s| s.next).collect();
        to_arrays(py, &outs, &to_move, size)
    }

    /// Evaluates input features built by the caller: ``spatial``
    /// ``float32 [N, C, H, W]`` and ``global_`` ``float32 [N, G]`` (KataGo's
    /// V7 inputs: ``C = 22``, ``G = 19``, as ``Position.features()`` or a
    /// training ``.npz`` gives them), in the given orientation. Returns the
    /// same arrays as ``evaluate``, from the point of view of the player
    /// the features were written for. No legality is known here: the
    /// policy is a softmax over every board point and pass, and the
    /// no-result probability is the net's own.
    fn evaluate_features<'py>(
        &self,
        py: Python<'py>,
        spatial: PyReadonlyArray4<'py, f32>,
        global_: PyReadonlyArray2<'py, f32>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (c, g) = self.num_inputs();
        let s_shape = spatial.shape().to_vec();
        let g_shape = global_.shape().to_vec();
        let (n, h, w) = (s_shape[0], s_shape[2], s_shape[3]);
        if s_shape[1] != c || g_shape != [n, g] {
            return Err(value_error(format!(
                "inputs of shape {s_shape:?} and {g_shape:?}: this net takes [N, {c}, H, W] and [N, {g}]"
            )));
        }
        if !(1..=engine::nn::MAX_BOARD_LEN).contains(&w)
            || !(1..=engine::nn::MAX_BOARD_LEN).contains(&h)
        {
            return Err(value_error(format!(
                "board {w}x{h}: each side must be 1-{}",
                engine::nn::MAX_BOARD_LEN
            )));
        }
        // Copies (also of non-contiguous arrays) taken with the GIL held.
        let spatial: Vec<f32> = spatial.as_array().iter().copied().collect();
        let global: Vec<f32> = global_.as_array().iter().copied().collect();
        let row = c * h * w;
        let params = EvalParams {
            symmetry: SymmetryChoice::Fixed(Symmetry::ALL[0]),
            include_ownership: true,
            skip_cache: true,
            allow_no_result: true,
            ..EvalParams::default()
        };
        let outs = py
            .allow_threads(|| {
                self.run_each(n, |i| {
                    let input = EncodedInput {
                        x_size: w,
                        y_size: h,
                        spatial: spatial[i * row..(i + 1) * row].to_vec(),
                        global: global[i * g..(i + 1) * g].to_vec(),
                        meta: Vec::new(),
                    };
                    // "White" to move: the evaluator then leaves the net's
                    // own (player to move) view as it is.
                    let mut req = EvalRequest::new(input, vec![true; w * h + 1], Player::White, 0);
                    req.params = params;
                    req
                })
            })
            .map_err(runtime_error)?;
        to_arrays(py, &outs, &vec![Player::White; n], (w, h))
    }

    fn __repr__(&self) -> String {
        format!(
            "Net({:?}, version={}, device={:?})",
            self.net.model_name, self.net.model_version, self.net.device
        )
    }
}
