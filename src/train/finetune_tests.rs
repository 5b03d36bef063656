//! Fine-tuning from older KataGo nets: g170's b6c96 (version 8, fixup) and a
//! batch-norm net load exactly (the `-scalebias` trainable net holds folded
//! batch norms), and their exports (version 15) give the same outputs again.

use std::path::{Path, PathBuf};

use rand::rngs::StdRng;
use rand::SeedableRng;
use tch::{Device, Tensor};

use super::tests::{assert_same_outputs, export_and_load, parity_batch, parity_rows, QuickTrainer};
use super::*;
use crate::nn::desc::{BatchNormLayer, Block};

fn g170_path() -> PathBuf {
    let shared = crate::shared_data_dir().unwrap_or_else(|e| panic!("shared test data: {e}"));
    shared.join("models/g170-b6c96-s175395328-d26788732.bin.gz")
}

/// Loads `file` into a fresh net of `config`, checks the trainable net's
/// outputs against the inference net's (`model_path` is the file on disk),
/// exports the loaded net (version 15), and checks the export's outputs.
fn load_compare_export(config: &ModelConfig, file: &crate::nn::ModelFile, model_path: &Path) {
    let mut net = TrainNet::new(config, 19, Device::Cpu).expect("net");
    let n = import::load_model_file(&mut net, file).expect("import");
    assert!(n > 50, "only {n} parameters set");
    let model = crate::nn::Model::load(model_path, Device::Cpu).expect("engine loads the file");
    let rows = parity_rows();
    let idx: Vec<usize> = (0..rows.num_rows.min(8)).collect();
    let mut rng = StdRng::seed_from_u64(0);
    let b = Batch::from_rows(&rows, &idx, Augment::NONE, &mut rng, Device::Cpu);
    let worst = assert_same_outputs(&net, &model, &b);
    eprintln!(
        "{}: trainable vs inference net, max |diff| {worst:e}",
        config.name
    );

    let tag = format!("ft-{}", config.name);
    let (exported, dir) = export_and_load(&net, config, "finetune", &tag);
    assert_eq!(exported.version(), 15);
    let worst = assert_same_outputs(&net, &exported, &b);
    eprintln!(
        "{}: trainable vs its export, max |diff| {worst:e}",
        config.name
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every batch norm of a model file, to edit.
fn norms_mut(file: &mut crate::nn::ModelFile) -> Vec<&mut BatchNormLayer> {
    let mut v: Vec<&mut BatchNormLayer> = vec![
        &mut file.trunk.tip_bn,
        &mut file.policy_head.g1_bn,
        &mut file.policy_head.p1_bn,
        &mut file.value_head.v1_bn,
    ];
    for b in &mut file.trunk.blocks {
        match b {
            Block::Ordinary(r) => v.extend([&mut r.pre_bn, &mut r.mid_bn]),
            Block::GlobalPooling(g) => v.extend([&mut g.pre_bn, &mut g.gpool_bn, &mut g.mid_bn]),
            other => panic!("no {} in b6c96", other.kind_keyword()),
        }
    }
    v
}

/// g170's b6c96 (version 8, fixup: `use_fixup` in its info file, and a
/// 5x5 input convolution) loads into `b6c96-initconv5` exactly, and its
/// export (version 15) gives the same outputs.
#[test]
fn g170_version8_net_loads_exactly_and_exports_back() {
    tch::set_num_threads(1);
    let path = g170_path();
    let file = crate::nn::ModelFile::load(&path).expect("g170 file");
    assert_eq!(file.version, 8);
    assert!(!import::needs_scalebias(&file));
    // Its input convolution is 5x5 (KataGo's configs now use 3x3).
    let mut plain = TrainNet::new(
        &ModelConfig::by_name("b6c96").expect("b6c96"),
        19,
        Device::Cpu,
    )
    .expect("net");
    let err = import::load_model_file(&mut plain, &file).expect_err("3x3 net refuses g170");
    assert!(err.to_string().contains("b6c96-initconv5"), "{err}");
    let config = ModelConfig::by_name("b6c96-initconv5").expect("config");
    load_compare_export(&config, &file, &path);
}

/// A batch-norm net (g170's b6c96 with real batch-norm statistics and
/// scales put into every norm): a fixup `b6c96` refuses it clearly, a
/// `b6c96-scalebias` holds it exactly and exports it back.
#[test]
fn batchnorm_net_loads_exactly_into_scalebias_and_exports_back() {
    tch::set_num_threads(1);
    let mut file = crate::nn::ModelFile::load(g170_path()).expect("g170 file");
    for (k, bn) in norms_mut(&mut file).into_iter().enumerate() {
        for c in 0..bn.num_channels {
            let x = (k * 31 + c) as f32;
            bn.mean[c] = 0.1 * x.sin();
            bn.variance[c] = 0.6 + 0.5 * x.cos().powi(2);
            bn.scale[c] *= 1.0 + 0.2 * (0.7 * x).sin();
            bn.bias[c] += 0.05 * (1.3 * x).cos();
        }
        bn.has_scale = true;
        bn.epsilon = 1e-5;
    }
    let dir = std::env::temp_dir().join(format!("engine-train-bn-{}", std::process::id()));
    let path = dir.join("bn.bin.gz");
    std::fs::create_dir_all(&dir).expect("dir");
    file.write(&path).expect("write the batch-norm net");
    let file = crate::nn::ModelFile::load(&path).expect("reload");
    assert!(import::needs_scalebias(&file));

    let fixup = ModelConfig::by_name("b6c96-initconv5").expect("config");
    let mut plain = TrainNet::new(&fixup, 19, Device::Cpu).expect("net");
    let err = import::load_model_file(&mut plain, &file).expect_err("fixup net refuses it");
    assert!(
        err.to_string().contains("b6c96-initconv5-scalebias"),
        "{err}"
    );

    load_compare_export(&fixup.with_scalebias(), &file, &path);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A `-scalebias` net has a gamma at every norm and head bias, and one
/// training step moves them (they are trained, not fixed).
#[test]
fn scalebias_gammas_exist_and_train() {
    tch::set_num_threads(1);
    tch::manual_seed(1);
    let config = ModelConfig::by_name("b2c16-scalebias").expect("config");
    let net = TrainNet::new(&config, 19, Device::Cpu).expect("net");
    let names: Vec<&str> = net.params.iter().map(|p| p.name.as_str()).collect();
    for k in [
        "blocks.0.normactconv1.norm.gamma",
        "blocks.1.normactconv1.convpool.normg.gamma",
        "norm_trunkfinal.gamma",
        "policy_head.biasg.gamma",
        "policy_head.bias2.gamma",
        "value_head.bias1.gamma",
    ] {
        assert!(names.contains(&k), "no {k}");
    }
    let before: Vec<Tensor> = net.params.iter().map(|p| p.tensor.copy()).collect();
    // An SWA period so long that averaging never starts: only the update
    // itself matters here.
    QuickTrainer::new(&net).step(&net, &parity_batch(), 1 << 40);
    for (p, b) in net.params.iter().zip(&before) {
        if p.name == "policy_head.bias2.gamma" || p.name == "value_head.bias1.gamma" {
            assert!(!p.tensor.equal(b), "{} did not move", p.name);
        }
    }
}

/// KataGo's own export of a human-SL kind (the random `b6c96-fson-mish-meta`
/// test net, made by KataGo's trainer): its metadata encoder and norms load
/// into `b6c96-mish-meta-scalebias`, whose outputs on rows with metadata
/// equal the engine's inference net's, before and after our export.
#[test]
fn katagos_human_sl_net_loads_and_exports() {
    tch::set_num_threads(1);
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("models/test-human-sl/b6c96-fson-mish-meta.bin.gz");
    let file = crate::nn::ModelFile::load(&path).expect("the test net");
    assert!(file.trunk.metadata_encoder.is_some());
    let config = ModelConfig::by_name("b6c96-mish-meta")
        .expect("config")
        .with_scalebias();
    load_compare_export(&config, &file, &path);
}
