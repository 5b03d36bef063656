//! Parity with KataGo's trainer and export round trips (figures from
//! `scripts/train_parity.py`, committed under `tests/data/train/`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use rand::rngs::StdRng;
use rand::SeedableRng;
use tch::{Device, Kind, Tensor};

use super::*;
use crate::data::TrainingRows;

pub(super) fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/train")
}

pub(super) fn tensor_vec<T: tch::kind::Element + Copy>(t: &Tensor) -> Vec<T> {
    Vec::<T>::try_from(t.flatten(0, -1)).expect("tensor data")
}

/// A fresh optimiser and train state for a test net, with a large learning
/// rate so that a few steps move every weight visibly.
pub(super) struct QuickTrainer {
    opt: Optimizer,
    pub(super) state: TrainState,
    sched: Schedule,
}

impl QuickTrainer {
    pub(super) fn new(net: &TrainNet) -> QuickTrainer {
        QuickTrainer {
            opt: Optimizer::new(net),
            state: TrainState::default(),
            sched: Schedule {
                lr_scale: 50.0,
                batch_size: 16,
                no_warmup: true,
            },
        }
    }

    /// One training step on `batch` with the default loss scales and an
    /// SWA scale of 8, averaging every `swa_period` samples.
    pub(super) fn step(&mut self, net: &TrainNet, batch: &Batch, swa_period: u64) -> StepReport {
        train_step(
            net,
            &mut self.opt,
            &mut self.state,
            &self.sched,
            &LossScales::default(),
            8.0,
            swa_period,
            batch,
        )
    }
}

/// Exports `net` (of `config`, named `name` in the file) into a fresh temp
/// folder `engine-train-{tag}-{pid}` and loads it with the engine's inference
/// net; returns the model and the folder, for the caller to remove.
pub(super) fn export_and_load(
    net: &TrainNet,
    config: &ModelConfig,
    name: &str,
    tag: &str,
) -> (crate::nn::Model, PathBuf) {
    let params: export::NamedParams = net
        .params
        .iter()
        .map(|p| (p.name.clone(), p.tensor.shallow_clone()))
        .collect();
    let file = export::to_model_file(config, &params, name).expect("export");
    let dir = std::env::temp_dir().join(format!("engine-train-{tag}-{}", std::process::id()));
    let path = dir.join("model.bin.gz");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(&path, file.to_bin_gz()).expect("write");
    let model = crate::nn::Model::load(&path, Device::Cpu).expect("engine loads the export");
    (model, dir)
}

/// Asserts that the inference `model`'s outputs on the batch equal the
/// trainable `net`'s in eval mode; returns the largest difference. Heads a
/// model version lacks (variance time and short-term errors before 9) are
/// not compared.
pub(super) fn assert_same_outputs(net: &TrainNet, model: &crate::nn::Model, b: &Batch) -> f32 {
    let want = tch::no_grad(|| net.forward_batch(b));
    let spatial: Vec<f32> = tensor_vec(&b.binary_input);
    let global: Vec<f32> = tensor_vec(&b.global_input);
    let mask: Vec<f32> = tensor_vec(&b.binary_input.narrow(1, 0, 1).contiguous());
    let meta: Option<Vec<f32>> = net
        .reads_metadata()
        .then(|| b.meta_input.as_ref().map(tensor_vec))
        .flatten();
    let n = b.binary_input.size()[0] as usize;
    let got = model
        .forward(&crate::nn::NetInput {
            batch_size: n,
            height: 19,
            width: 19,
            spatial: &spatial,
            global: &global,
            meta: meta.as_deref(),
            mask: Some(&mask),
        })
        .expect("engine forward");
    let mut worst = 0f32;
    let mut close = |a: f32, b: f32, what: &str| {
        let d = (a - b).abs();
        assert!(
            d <= 2e-4 * (1.0 + b.abs()),
            "{what}: engine {a} trainer {b}"
        );
        worst = worst.max(d);
    };
    let pol: Vec<f32> = tensor_vec(&want.policy_logits);
    let val: Vec<f32> = tensor_vec(&want.value_logits);
    let own: Vec<f32> = tensor_vec(&want.ownership_pretanh.tanh());
    let sm: Vec<f32> = tensor_vec(&want.pred_scoremean);
    let sd: Vec<f32> = tensor_vec(&want.pred_scorestdev);
    let lead: Vec<f32> = tensor_vec(&want.pred_lead);
    let vt: Vec<f32> = tensor_vec(&want.pred_variance_time);
    let stv: Vec<f32> = tensor_vec(&want.pred_shortterm_value_error);
    let sts: Vec<f32> = tensor_vec(&want.pred_shortterm_score_error);
    for r in 0..n {
        let row = got.row(r);
        for p in 0..362 {
            let on_board = p == 361 || mask[r * 361 + p] > 0.5;
            if !on_board {
                continue;
            }
            close(row.policy[p], pol[(r * 6) * 362 + p], "policy");
            if let Some(opt_pol) = row.policy_optimistic {
                close(opt_pol[p], pol[(r * 6 + 5) * 362 + p], "optimistic policy");
            }
            if p < 361 {
                close(row.ownership[p], own[r * 361 + p], "ownership");
            }
        }
        for k in 0..3 {
            close(row.value_logits[k], val[r * 3 + k], "value");
        }
        close(row.scores.score_mean, sm[r], "score mean");
        close(row.scores.score_stdev, sd[r], "score stdev");
        close(row.scores.lead, lead[r], "lead");
        if model.version() >= 9 {
            close(row.scores.var_time_left, vt[r], "variance time");
            close(
                row.scores.shortterm_winloss_error,
                stv[r].sqrt(),
                "shortterm value error",
            );
            close(
                row.scores.shortterm_score_error,
                sts[r].sqrt(),
                "shortterm score error",
            );
        }
    }
    worst
}

/// The parity rows as [`TrainingRows`] (raw npz members from the script),
/// with the script's metadata inputs (`parity_meta.safetensors`), which
/// only the `-meta` nets read.
pub(super) fn parity_rows() -> TrainingRows {
    let mut m: BTreeMap<String, Tensor> = BTreeMap::new();
    for file in ["parity_batch.safetensors", "parity_meta.safetensors"] {
        m.extend(Tensor::read_safetensors(data_dir().join(file)).expect("parity batch"));
    }
    let get = |k: &str| m.get(k).unwrap_or_else(|| panic!("member {k}"));
    let n = get("globalInputNC").size()[0] as usize;
    TrainingRows {
        pos_len: 19,
        num_rows: n,
        binary_input_nchw_packed: tensor_vec::<u8>(get("binaryInputNCHWPacked")),
        global_input_nc: tensor_vec::<f32>(get("globalInputNC")),
        policy_targets_nc_move: tensor_vec::<i16>(get("policyTargetsNCMove")),
        global_targets_nc: tensor_vec::<f32>(get("globalTargetsNC")),
        score_distr_n: tensor_vec::<i8>(get("scoreDistrN")),
        value_targets_nchw: tensor_vec::<i8>(get("valueTargetsNCHW")),
        q_value_targets_nc_move: tensor_vec::<i16>(get("qValueTargetsNCMove")),
        has_metadata: true,
        metadata_input_nc: tensor_vec::<f32>(get("metadataInputNC")),
    }
}

/// Every parity row as one batch, without augmentation (which draws
/// nothing from the rng).
pub(super) fn parity_batch() -> Batch {
    let rows = parity_rows();
    let idx: Vec<usize> = (0..rows.num_rows).collect();
    let mut rng = StdRng::seed_from_u64(0);
    Batch::from_rows(&rows, &idx, Augment::NONE, &mut rng, Device::Cpu)
}

pub(super) fn parity_net(cfg: &str) -> TrainNet {
    let config = ModelConfig::by_name(cfg).expect("config");
    let mut net = TrainNet::new(&config, 19, Device::Cpu).expect("net");
    let named = Tensor::read_safetensors(data_dir().join(format!("parity_{cfg}.safetensors")))
        .expect("weights");
    assert_eq!(
        named.len(),
        net.params.len(),
        "parameter count differs from KataGo's"
    );
    net.load_named(&named).expect("load weights");
    net
}

/// `tests/data/train/parity.json`.
pub(super) fn parity_figures() -> serde_json::Value {
    serde_json::from_str(
        &std::fs::read_to_string(data_dir().join("parity.json")).expect("parity.json"),
    )
    .expect("json")
}

fn check_parity(cfg: &str) {
    check_parity_of(cfg, &parity_net(cfg));
}

/// Every loss term and the gradient norm of `net` (config `cfg`) on the
/// parity batch equal KataGo's figures for it.
pub(super) fn check_parity_of(cfg: &str, net: &TrainNet) {
    let figures = parity_figures();
    let want = &figures["configs"][cfg];
    assert_eq!(
        net.num_parameters(),
        want["num_params"].as_i64().expect("num_params")
    );
    check_losses(cfg, net, &LossScales::default(), want);
}

/// Every loss term and the gradient norm of `net` on the parity batch with
/// `scales` equal the figures `want`.
fn check_losses(cfg: &str, net: &TrainNet, scales: &LossScales, want: &serde_json::Value) {
    let batch = parity_batch();
    let out = net.forward_batch(&batch);
    let mut state = LossState::default();
    let losses = compute_losses(&out, &batch, scales, &mut state, true);
    let got = losses.values();
    let mut checked = 0;
    let mut bad = Vec::new();
    let mut worst = (0.0f64, "");
    for (k, v) in &got {
        let Some(w) = want[*k].as_f64() else { continue };
        let rel = (v - w).abs() / w.abs().max(1.0);
        if rel > worst.0 {
            worst = (rel, k);
        }
        let tol = 1e-4 * w.abs().max(1.0);
        if (v - w).abs() > tol {
            bad.push(format!("{k}: engine {v} KataGo {w}"));
        }
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} terms compared");
    eprintln!(
        "{cfg}: {checked} terms compared, largest relative difference {:.2e} ({})",
        worst.0, worst.1
    );
    assert!(bad.is_empty(), "{cfg}: terms differ:\n{}", bad.join("\n"));

    // The gradient of loss_sum (custom-gradient softplus included).
    losses.loss_sum.backward();
    let mut sq = 0.0;
    for p in &net.params {
        sq += p.tensor.grad().square().sum(Kind::Double).double_value(&[]);
    }
    let gnorm = sq.sqrt();
    let want_g = want["gnorm"].as_f64().expect("gnorm");
    eprintln!("{cfg}: gradient norm engine {gnorm} KataGo {want_g}");
    assert!(
        (gnorm - want_g).abs() <= 1e-4 * want_g,
        "{cfg}: gnorm engine {gnorm} KataGo {want_g}"
    );
}

#[test]
fn loss_terms_match_katago_b1c6nbt() {
    check_parity("b1c6nbt");
}

#[test]
fn loss_terms_match_katago_b2c16() {
    check_parity("b2c16");
}

/// A `-meta` kind (SGF metadata encoder) on the parity rows with the
/// script's metadata inputs.
#[test]
fn loss_terms_match_katago_b2c16_silu_meta() {
    check_parity("b2c16-silu-meta");
}

/// KataGo's `-meta-kata-only-soft-policy`: the soft policy losses weighed
/// by each row's KataGo-source metadata input.
#[test]
fn meta_kata_only_soft_policy_matches_katago() {
    let cfg = "b2c16-silu-meta";
    let figures = parity_figures();
    let want = &figures["configs"][cfg]["meta_kata_only_soft_policy"];
    assert!(want.is_object(), "no figures for the flag");
    let scales = LossScales {
        meta_kata_only_soft_policy: true,
        ..LossScales::default()
    };
    check_losses(cfg, &parity_net(cfg), &scales, want);
}

/// The parity net exported by `engine`, as a model file in memory.
fn our_parity_export(cfg: &str) -> crate::nn::ModelFile {
    our_export(&parity_net(cfg), cfg)
}

/// `net` exported by `engine` as `parity-{cfg}`, in memory.
pub(super) fn our_export(net: &TrainNet, cfg: &str) -> crate::nn::ModelFile {
    let params: export::NamedParams = net
        .params
        .iter()
        .map(|p| (p.name.clone(), p.tensor.shallow_clone()))
        .collect();
    export::to_model_file(&net.config, &params, &format!("parity-{cfg}")).expect("export")
}

/// Our export of KataGo's weights is byte for byte KataGo's own export of
/// them: `scripts/train_parity.py` recorded the MD5 of the uncompressed
/// `model.bin` that KataGo's `export_model_pytorch.py` wrote (the file
/// itself is not kept: test networks are not committed).
/// (b1c6nbt's export has zero regular channels, which neither KataGo's C++
/// nor `engine` loads; b2c16 is the smallest loadable config.)
/// The same for a `-meta` kind: the metadata encoder written as KataGo's
/// `write_metadata_encoder` (feature mask and output scale folded in).
#[test]
fn export_matches_katagos_exporter() {
    use md5::{Digest, Md5};
    let figures = parity_figures();
    for cfg in ["b2c16", "b2c16-silu-meta"] {
        let theirs = figures["configs"][cfg]["katago_export_md5"]
            .as_str()
            .expect("katago_export_md5 in parity.json");
        let ours = format!("{:x}", Md5::digest(our_parity_export(cfg).to_bytes()));
        assert_eq!(ours, theirs, "{cfg}: export differs from KataGo's");
    }
}

/// Train b2c16 for 40 steps on the parity rows, export, load with the
/// engine's inference `nn::Model`: its outputs equal the trainable module's.
#[test]
fn trained_net_round_trips_through_export() {
    let config = ModelConfig::by_name("b2c16").expect("config");
    // One intra-op thread: with the other tests running beside it, spinning
    // OpenMP threads make this test many times slower on a 2-core machine.
    tch::set_num_threads(1);
    tch::manual_seed(7);
    let net = TrainNet::new(&config, 19, Device::Cpu).expect("net");
    let mut trainer = QuickTrainer::new(&net);
    let rows = parity_rows();
    let idx: Vec<usize> = (0..rows.num_rows).collect();
    let mut rng = StdRng::seed_from_u64(3);
    let mut first = None;
    let mut last = 0.0;
    for _ in 0..40 {
        let batch = Batch::from_rows(&rows, &idx, Augment::KATAGO, &mut rng, Device::Cpu);
        let r = trainer.step(&net, &batch, 64);
        let l = r.values["loss_sum"];
        assert!(l.is_finite(), "loss went non-finite");
        first.get_or_insert(l);
        last = l;
    }
    assert!(trainer.state.swa_initialized);
    assert!(
        last < first.unwrap_or(f64::MAX),
        "loss did not go down: {first:?} -> {last}"
    );

    let (model, dir) = export_and_load(&net, &config, "roundtrip", "rt");
    let batch = Batch::from_rows(&rows, &idx, Augment::NONE, &mut rng, Device::Cpu);
    assert_same_outputs(&net, &model, &batch);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A checkpoint written and read back restores weights, optimiser buffers
/// and the train state exactly.
#[test]
fn checkpoint_round_trips() {
    let config = ModelConfig::by_name("b1c6nbt").expect("config");
    let net = TrainNet::new(&config, 19, Device::Cpu).expect("net");
    let mut opt = Optimizer::new(&net);
    for p in &net.params {
        opt.momentum.insert(p.name.clone(), p.tensor.rand_like());
    }
    let state = TrainState {
        model_kind: "b1c6nbt".into(),
        global_step_samples: 1234,
        swa_initialized: true,
        ..TrainState::default()
    };
    let mut tensors = BTreeMap::new();
    for p in &net.params {
        tensors.insert(format!("model.{}", p.name), p.tensor.shallow_clone());
        tensors.insert(
            format!("momentum.{}", p.name),
            opt.momentum[&p.name].shallow_clone(),
        );
    }
    let dir = std::env::temp_dir().join(format!("engine-train-ck-{}", std::process::id()));
    let path = dir.join("checkpoint.safetensors");
    Checkpoint {
        state: state.clone(),
        tensors,
    }
    .save(
        &crate::store::Store::open_path(&dir).expect("store"),
        "checkpoint.safetensors",
    )
    .expect("save");
    let back = Checkpoint::load(&path).expect("load");
    assert_eq!(back.state, state);
    let mut net2 = TrainNet::new(&config, 19, Device::Cpu).expect("net");
    let model: Vec<(String, Tensor)> = back.group("model").into_iter().collect();
    net2.load_named(&model).expect("restore");
    for (a, b) in net.params.iter().zip(&net2.params) {
        assert!(a.tensor.equal(&b.tensor), "{} differs", a.name);
        assert!(back.group("momentum")[&a.name].equal(&opt.momentum[&a.name]));
    }
    // No temporary file is left beside it.
    let names: Vec<String> = std::fs::read_dir(&dir)
        .expect("dir")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().to_string()))
        .collect();
    assert_eq!(names, vec!["checkpoint.safetensors".to_string()]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// KataGo's export of the parity net (the same bytes as ours, see
/// [`export_matches_katagos_exporter`]), loaded as starting weights, gives
/// the same main outputs as the net itself (the heads the file holds).
#[test]
fn katago_export_loads_as_starting_weights() {
    let full = parity_net("b2c16");
    let bytes = our_parity_export("b2c16").to_bytes();
    let file = crate::nn::ModelFile::from_bytes(&bytes, std::path::Path::new("parity_b2c16.bin"))
        .expect("file");
    let config = ModelConfig::by_name("b2c16").expect("config");
    let mut net = TrainNet::new(&config, 19, Device::Cpu).expect("net");
    let n = import::load_model_file(&mut net, &file).expect("import");
    assert!(n > 20, "only {n} parameters set");
    let b = parity_batch();
    let (x, y) = tch::no_grad(|| (full.forward_batch(&b), net.forward_batch(&b)));
    let d = |a: &Tensor, b: &Tensor| f64::try_from((a - b).abs().max()).unwrap_or(f64::MAX);
    assert!(d(&x.policy_logits.select(1, 0), &y.policy_logits.select(1, 0)) < 1e-4);
    assert!(d(&x.policy_logits.select(1, 5), &y.policy_logits.select(1, 5)) < 1e-4);
    assert!(d(&x.value_logits, &y.value_logits) < 1e-4);
    assert!(d(&x.pred_scoremean, &y.pred_scoremean) < 1e-3);
    assert!(d(&x.ownership_pretanh, &y.ownership_pretanh) < 1e-4);
}

/// A batch of full boards skips the masking (`Masks::full`); forcing the
/// masked path on it gives the same outputs, and a batch with a smaller
/// board takes the masked path.
#[test]
fn full_board_batches_skip_masking_without_changing_outputs() {
    let net = parity_net("b2c16");
    tch::manual_seed(7);
    let spatial = Tensor::rand([3, 22, 19, 19], (Kind::Float, Device::Cpu))
        .ge(0.7)
        .to_kind(Kind::Float);
    let _ = spatial.narrow(1, 0, 1).fill_(1.0);
    let global = Tensor::rand([3, 19], (Kind::Float, Device::Cpu));
    let full = model::Masks::from_input(&spatial);
    assert!(full.full);
    let forced = model::Masks {
        mask: full.mask.shallow_clone(),
        mask_sum_hw: full.mask_sum_hw.shallow_clone(),
        full: false,
    };
    let a = net.forward_with_masks(&spatial, &global, None, &full);
    let b = net.forward_with_masks(&spatial, &global, None, &forced);
    for (name, x, y) in [
        ("policy", &a.policy_logits, &b.policy_logits),
        ("value", &a.value_logits, &b.value_logits),
        ("ownership", &a.ownership_pretanh, &b.ownership_pretanh),
        ("scoring", &a.pred_scoring, &b.pred_scoring),
        ("futurepos", &a.futurepos_pretanh, &b.futurepos_pretanh),
        ("seki", &a.seki_logits, &b.seki_logits),
        ("lead", &a.pred_lead, &b.pred_lead),
    ] {
        let diff = (x - y).abs().max().double_value(&[]);
        assert!(diff < 1e-5, "{name} differs by {diff}");
    }
    // A 9x9 board in the 19x19 tensor is not full.
    let _ = spatial.narrow(1, 0, 1).fill_(0.0);
    let _ = spatial
        .narrow(1, 0, 1)
        .narrow(2, 0, 9)
        .narrow(3, 0, 9)
        .fill_(1.0);
    assert!(!model::Masks::from_input(&spatial).full);
}

/// The parity batch's loss terms (no augmentation) for KataGo's b2c16
/// parity weights with the trunk at `precision`.
fn parity_losses(precision: Precision) -> (BTreeMap<&'static str, f64>, Tensor) {
    let mut net = parity_net("b2c16");
    net.precision = precision;
    let batch = parity_batch();
    let out = net.forward_batch(&batch);
    let mut state = LossState::default();
    let losses = compute_losses(&out, &batch, &LossScales::default(), &mut state, true);
    (losses.values(), out.policy_logits)
}

/// `-use-bf16` / `-use-fp16`: the trunk's convolutions and matmuls run in
/// the half type (the outputs differ from fp32's), and every loss term
/// stays within the half type's rounding of fp32's.
#[test]
fn mixed_precision_losses_stay_close_to_fp32() {
    tch::set_num_threads(1);
    let (f32_losses, f32_policy) = parity_losses(Precision::F32);
    for (precision, tol) in [(Precision::BF16, 5e-3), (Precision::F16, 5e-4)] {
        let (losses, policy) = parity_losses(precision);
        assert_eq!(
            policy.kind(),
            Kind::Float,
            "{precision:?}: heads run in fp32"
        );
        let diff = (&policy - &f32_policy).abs().max().double_value(&[]);
        assert!(
            diff > 0.0,
            "{precision:?}: the trunk did not run in half precision"
        );
        let mut checked = 0;
        let mut worst = (0.0f64, "");
        for (k, want) in &f32_losses {
            let got = losses[k];
            let rel = (got - want).abs() / want.abs().max(1.0);
            if rel > worst.0 {
                worst = (rel, k);
            }
            assert!(rel <= tol, "{precision:?} {k}: {got} against fp32's {want}");
            checked += 1;
        }
        assert!(checked >= 30, "only {checked} terms compared");
        eprintln!(
            "{precision:?}: {checked} terms, largest relative difference {:.1e} ({})",
            worst.0, worst.1
        );
    }
}

/// fp16 training scales the loss (torch's GradScaler): a step moves the
/// weights as the fp32 step does; a step whose scaled gradients overflow
/// changes no weight and halves the scale; the scale is checkpointed.
#[test]
fn fp16_steps_scale_the_loss_and_skip_overflows() {
    tch::set_num_threads(1);
    let sched = Schedule {
        lr_scale: 1.0,
        batch_size: 16,
        no_warmup: true,
    };
    let batch = parity_batch();
    let step = |net: &TrainNet, opt: &mut Optimizer| {
        let mut state = TrainState::default();
        train_step(
            net,
            opt,
            &mut state,
            &sched,
            &LossScales::default(),
            8.0,
            1 << 40,
            &batch,
        )
    };
    let snapshot = |net: &TrainNet| -> Vec<Tensor> {
        net.params
            .iter()
            .map(|p| p.tensor.detach().copy())
            .collect()
    };
    let update = |net: &TrainNet, before: &[Tensor]| -> Tensor {
        let parts: Vec<Tensor> = net
            .params
            .iter()
            .zip(before)
            .map(|(p, b)| (&p.tensor.detach() - b).flatten(0, -1))
            .collect();
        Tensor::cat(&parts, 0)
    };

    let fp32 = parity_net("b2c16");
    let start = snapshot(&fp32);
    let mut opt32 = Optimizer::new(&fp32);
    assert!(opt32.grad_scaler.is_none());
    assert!(!step(&fp32, &mut opt32).skipped_overflow);
    let d32 = update(&fp32, &start);

    let mut fp16 = parity_net("b2c16");
    fp16.precision = Precision::F16;
    let mut opt16 = Optimizer::new(&fp16);
    let scale_now = |opt: &Optimizer| opt.grad_scaler.as_ref().expect("a scaler").scale_value();
    assert_eq!(scale_now(&opt16), GradScaler::INIT_SCALE);
    // The losses are sums over the batch, so torch's initial scale of 2^16
    // overflows fp16 activation gradients at first: those steps are skipped
    // (no weight moves) and the scale halves until a step fits.
    let mut skipped = 0;
    loop {
        let report = step(&fp16, &mut opt16);
        assert!(report.values["loss_sum"].is_finite());
        if !report.skipped_overflow {
            break;
        }
        skipped += 1;
        assert!(skipped < 30, "fp16 gradients overflow at every scale");
        assert_eq!(
            scale_now(&opt16),
            GradScaler::INIT_SCALE / f64::from(1 << skipped)
        );
        assert!(update(&fp16, &start).abs().max().double_value(&[]) == 0.0);
    }
    eprintln!("fp16: {skipped} steps skipped, scale {}", scale_now(&opt16));
    let d16 = update(&fp16, &start);
    let cosine = (&d16 * &d32).sum(Kind::Double).double_value(&[])
        / (d16.norm().double_value(&[]) * d32.norm().double_value(&[]));
    let ratio = d16.norm().double_value(&[]) / d32.norm().double_value(&[]);
    eprintln!("fp16 step against fp32's: cosine {cosine}, length ratio {ratio}");
    assert!(cosine > 0.999, "fp16 step direction: cosine {cosine}");
    assert!((ratio - 1.0).abs() < 1e-2, "fp16 step size: ratio {ratio}");

    // A scale the fp32 loss cannot be multiplied by without overflowing.
    let scaler = opt16.grad_scaler.as_ref().expect("a scaler");
    let _ = scaler.scale.shallow_clone().fill_(3e38);
    let before = snapshot(&fp16);
    assert!(step(&fp16, &mut opt16).skipped_overflow);
    for (p, b) in fp16.params.iter().zip(&before) {
        assert!(p.tensor.equal(b), "{} moved on a skipped step", p.name);
    }
    let halved = opt16.grad_scaler.as_ref().expect("a scaler").scale_value();
    assert_eq!(halved, 1.5e38_f32 as f64);

    // The checkpoint keeps the scale; restored into a fresh fp16 optimiser.
    let ck = trainer::checkpoint_of(&fp16, &opt16, &TrainState::default());
    let mut again = parity_net("b2c16");
    again.precision = Precision::F16;
    let mut opt_again = Optimizer::new(&again);
    trainer::restore(&mut again, &mut opt_again, &ck, Device::Cpu).expect("restore");
    let restored = opt_again.grad_scaler.as_ref().expect("a scaler");
    assert_eq!(restored.scale_value(), halved);
}

/// Sum, sum of squares and the projection on `cos(0.37 i + 0.1)` of
/// `after - before` (the digest `scripts/train_parity.py` records).
fn delta_digest(after: &Tensor, before: &Tensor) -> [f64; 3] {
    let d: Vec<f64> = tensor_vec(&(after.to_kind(Kind::Double) - before.to_kind(Kind::Double)));
    let mut out = [0.0; 3];
    for (i, x) in d.iter().enumerate() {
        out[0] += x;
        out[1] += x * x;
        out[2] += x * (0.37 * i as f64 + 0.1).cos();
    }
    out
}

/// Checks digests of how far each parameter moved against KataGo's: each
/// within `tol` of the scale a move bounds it by (Cauchy-Schwarz:
/// `sqrt(n * sumsq)` for the sum and the projection), the move being the
/// parameter's own or, for parameters that hardly move (only rounding and
/// tiny gradients), the net's mean move per element; returns the worst
/// relative difference.
fn check_deltas(
    what: &str,
    got: &BTreeMap<String, [f64; 3]>,
    want: &serde_json::Value,
    initial: &BTreeMap<String, Tensor>,
    tol: f64,
) -> f64 {
    let want = want.as_object().expect("digests");
    assert_eq!(want.len(), got.len(), "{what}: parameter count");
    let digest = |v: &serde_json::Value| -> Vec<f64> {
        v.as_array()
            .expect("digest")
            .iter()
            .map(|x| x.as_f64().expect("number"))
            .collect()
    };
    let total_sq: f64 = want.values().map(|v| digest(v)[1]).sum();
    let total_n: f64 = initial.values().map(|t| t.numel() as f64).sum();
    let mean_move = (total_sq / total_n).sqrt();
    let mut worst = 0f64;
    let mut bad = Vec::new();
    for (name, w) in want {
        let w = digest(w);
        let g = got.get(name).unwrap_or_else(|| panic!("{what}: no {name}"));
        let n = initial[name].numel() as f64;
        let step = w[1].sqrt().max(mean_move * n.sqrt());
        let scales = [n.sqrt() * step, step * step, n.sqrt() * step];
        for k in 0..3 {
            let rel = (g[k] - w[k]).abs() / scales[k].max(1e-12);
            worst = worst.max(rel);
            if rel > tol {
                bad.push(format!(
                    "{name} digest {k}: engine {} KataGo {} (relative {rel:.2e})",
                    g[k], w[k]
                ));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{what}: {} differ:\n{}",
        bad.len(),
        bad.join("\n")
    );
    worst
}

/// Our training loop against KataGo's optimiser for 13 steps from the same
/// weights on the parity batch (`scripts/train_parity.py -steps-only`):
/// momentum SGD with the per-group learning rates and weight decay,
/// gradient-norm clipping (it acts in several of the steps), lookahead
/// (k = 6, alpha = 0.5) and SWA (copied at step 6, averaged at step 12).
/// Each step's loss and gradient norm agree, and so does how far every
/// parameter moved, in the fast weights and in the SWA average.
#[test]
fn optimizer_steps_lookahead_and_swa_match_katago() {
    let figures = parity_figures();
    let want = &figures["optimizer_steps"];
    let cfg = want["config"].as_str().expect("config");
    let num = |k: &str| want[k].as_f64().unwrap_or_else(|| panic!("{k}"));
    let list = |k: &str| -> Vec<f64> {
        want[k]
            .as_array()
            .unwrap_or_else(|| panic!("{k}"))
            .iter()
            .map(|v| v.as_f64().expect("number"))
            .collect()
    };
    let net = parity_net(cfg);
    let initial: BTreeMap<String, Tensor> = net
        .params
        .iter()
        .map(|p| (p.name.clone(), p.tensor.detach().copy()))
        .collect();
    let batch = parity_batch();
    let rows = batch.binary_input.size()[0] as usize;
    let sched = Schedule {
        lr_scale: num("lr_scale"),
        batch_size: rows,
        no_warmup: true,
    };
    assert!((sched.gnorm_cap() - num("gnorm_cap")).abs() < 1e-9);
    let mut opt = Optimizer::new(&net);
    let mut state = TrainState::default();
    let (losses, gnorms) = (list("loss_sums"), list("gnorms"));
    let mut swa_steps = Vec::new();
    let mut clipped = 0;
    for step in 0..num("steps") as usize {
        let r = train_step(
            &net,
            &mut opt,
            &mut state,
            &sched,
            &LossScales::default(),
            num("swa_scale"),
            num("swa_period_samples") as u64,
            &batch,
        );
        if state.swa_initialized && state.swa_sample_accum == 0 && !r.in_between_lookaheads {
            swa_steps.push((step + 1) as f64);
        }
        clipped += usize::from(r.gnorm > sched.gnorm_cap());
        let loss = r.values["loss_sum"];
        assert!(
            (loss - losses[step]).abs() <= 1e-4 * losses[step].abs(),
            "step {step}: loss_sum engine {loss} KataGo {}",
            losses[step]
        );
        assert!(
            (r.gnorm - gnorms[step]).abs() <= 1e-3 * gnorms[step],
            "step {step}: gnorm engine {} KataGo {}",
            r.gnorm,
            gnorms[step]
        );
    }
    assert_eq!(swa_steps, list("swa_update_steps"));
    assert!(clipped >= 3, "clipping acted in {clipped} steps only");
    let fast: BTreeMap<String, [f64; 3]> = net
        .params
        .iter()
        .map(|p| (p.name.clone(), delta_digest(&p.tensor, &initial[&p.name])))
        .collect();
    let swa: BTreeMap<String, [f64; 3]> = opt
        .swa
        .iter()
        .map(|(name, t)| (name.clone(), delta_digest(t, &initial[name])))
        .collect();
    let worst_fast = check_deltas("fast weights", &fast, &want["fast_delta"], &initial, 1e-4);
    let worst_swa = check_deltas("SWA weights", &swa, &want["swa_delta"], &initial, 1e-4);
    eprintln!(
        "{cfg}: 13 steps, worst relative difference of the weight moves: fast {worst_fast:.2e}, SWA {worst_swa:.2e}"
    );
}
