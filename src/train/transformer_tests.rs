//! The transformer kinds, RMSNorm tips and SiLU/Mish activations against
//! KataGo's trainer and exporter (figures from
//! `scripts/train_parity.py` in `tests/data/train/parity.json`).
//!
//! Their weights are not committed: `formula_weights` gives every parameter
//! from its name and shape, and the script set KataGo's model from the same
//! formula before computing its figures.

use rand::rngs::StdRng;
use rand::SeedableRng;
use tch::{Device, Tensor};

use super::config::{BlockKind, Rope, TrunkTip, TRANSFORMER_CONFIGS};
use super::tests::{
    assert_same_outputs, check_parity_of, export_and_load, our_export, parity_batch,
    parity_figures, parity_rows, QuickTrainer,
};
use super::*;

/// `formula_weights` of `scripts/train_parity.py`: element `i` of `name` is
/// `base + amp·(2u − 1)` with `u` from splitmix64 of `fnv1a64(name) + i`,
/// in f64, rounded to f32 once.
fn formula_weights(name: &str, shape: &[i64]) -> Vec<f32> {
    let n: i64 = shape.iter().product();
    let (base, amp) = if name.ends_with("rope_freqs") {
        (0.0, 0.5)
    } else if name.ends_with(".beta")
        || name.ends_with(".bias")
        || (name.ends_with(".gamma") && shape.len() == 4)
    {
        (0.0, 0.1)
    } else if shape.len() >= 2 {
        let fan_in: i64 = shape[1..].iter().product();
        (0.0, 1.0 / (fan_in as f64).sqrt())
    } else {
        (1.0, 0.2)
    };
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for b in name.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3);
    }
    (0..n as u64)
        .map(|i| {
            let mut z = h.wrapping_add(i).wrapping_add(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            let u = (z >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
            (base + amp * (2.0 * u - 1.0)) as f32
        })
        .collect()
}

/// The net of `cfg` with every parameter from [`formula_weights`].
fn formula_net(cfg: &str) -> TrainNet {
    let config = ModelConfig::by_name(cfg).expect("config");
    let mut net = TrainNet::new(&config, 19, Device::Cpu).expect("net");
    let named: Vec<(String, Tensor)> = net
        .params
        .iter()
        .map(|p| {
            let shape = p.tensor.size();
            let w = formula_weights(&p.name, &shape);
            (
                p.name.clone(),
                Tensor::from_slice(&w).view(shape.as_slice()),
            )
        })
        .collect();
    net.load_named(&named).expect("load");
    net
}

fn formula_configs() -> Vec<String> {
    parity_figures()["formula_configs"]
        .as_array()
        .expect("formula_configs in parity.json")
        .iter()
        .map(|c| c.as_str().expect("name").to_string())
        .collect()
}

/// The first values of the formula, fixed here so that a change of the
/// formula on one side only fails this test, not just the parity tests.
#[test]
fn formula_weights_are_pinned() {
    let w = formula_weights("blocks.0.norm1.weight", &[3]);
    let again = formula_weights("blocks.0.norm1.weight", &[3]);
    assert_eq!(w, again);
    assert!(w.iter().all(|x| (0.8..=1.2).contains(x)), "{w:?}");
    let other = formula_weights("blocks.1.norm1.weight", &[3]);
    assert_ne!(w, other);
    let lin = formula_weights("blocks.0.q_proj.weight", &[4, 16]);
    assert!(lin.iter().all(|x| x.abs() <= 0.25), "{lin:?}");
}

/// Every transformer config of KataGo's `modelconfigs.py` is built with
/// KataGo's shape or refused with the reason; none is unknown.
#[test]
fn transformer_table_matches_katagos_configs() {
    let figures = parity_figures();
    let theirs = figures["transformer_configs"]
        .as_object()
        .expect("transformer_configs in parity.json");
    let mut built = 0;
    for (name, c) in theirs {
        let int = |k: &str| c[k].as_i64().unwrap_or_else(|| panic!("{name}: {k}"));
        let ours = match ModelConfig::by_name(name) {
            Ok(ours) => ours,
            Err(e) => {
                assert!(e.to_string().contains("refused"), "{name}: {e}");
                assert!(!TRANSFORMER_CONFIGS.contains(&name.as_str()));
                continue;
            }
        };
        built += 1;
        assert_eq!(i64::from(ours.version), int("version"), "{name}");
        assert_eq!(ours.trunk, int("trunk_num_channels"), "{name}");
        assert_eq!(ours.mid, int("mid_num_channels"), "{name}");
        assert_eq!(ours.gpool, int("gpool_num_channels"), "{name}");
        assert_eq!(ours.p1, int("p1_num_channels"), "{name}");
        assert_eq!(ours.g1, int("g1_num_channels"), "{name}");
        assert_eq!(ours.v1, int("v1_num_channels"), "{name}");
        assert_eq!(ours.v2, int("v2_size"), "{name}");
        assert_eq!(ours.sbv2, int("sbv2_num_channels"), "{name}");
        assert_eq!(ours.num_scorebeliefs, int("num_scorebeliefs"), "{name}");
        let t = ours.transformer.expect("transformer settings");
        assert_eq!(t.heads, int("transformer_heads"), "{name}");
        assert_eq!(t.kv_heads, int("transformer_kv_heads"), "{name}");
        assert_eq!(t.ffn, int("transformer_ffn_channels"), "{name}");
        assert_eq!(
            t.q_head_dim,
            c["attention_query_head_dim"].as_i64(),
            "{name}"
        );
        assert_eq!(
            t.v_head_dim,
            c["attention_value_head_dim"].as_i64(),
            "{name}"
        );
        let learnable = c["learnable_rope"].as_bool().unwrap_or(false);
        assert_eq!(t.rope == Rope::Learnable, learnable, "{name}");
        let kinds: Vec<&str> = ours
            .blocks
            .iter()
            .flat_map(|k| match k {
                BlockKind::Regular => vec!["regular"],
                BlockKind::RegularGpool => vec!["regulargpool"],
                BlockKind::BottleNest2 => vec!["bottlenest2"],
                BlockKind::BottleNest2Gpool => vec!["bottlenest2gpool"],
                BlockKind::Attention => vec!["attnrope"],
                BlockKind::FfnSwiGlu => vec!["ffnsg"],
                BlockKind::BottleNestTransformer(2) => vec!["bottlenest2transformerropesg"],
                BlockKind::BottleNestTransformer(3) => vec!["bottlenest3transformerropesg"],
                BlockKind::BottleNestTransformer(_) => vec!["?"],
            })
            .collect();
        let want: Vec<&str> = c["block_kind"]
            .as_array()
            .expect("block_kind")
            .iter()
            .map(|k| k.as_str().expect("kind"))
            .collect();
        assert_eq!(kinds, want, "{name}");
    }
    assert_eq!(built, TRANSFORMER_CONFIGS.len());
    let tip = ModelConfig::by_name("b7c96h3tfrs-rsnh").expect("suffix");
    assert_eq!(tip.tip, TrunkTip::RmsNorm { spatial: true });
    let conv_tip = ModelConfig::by_name("b2c16-rnh").expect("convnet with an RMSNorm tip");
    assert_eq!(conv_tip.version, 17);
    assert!(ModelConfig::by_name("b5c48h3tfr").is_err());
}

/// The nets register KataGo's parameters: every one of `named_parameters()`,
/// the trunk's (transformer blocks and RMSNorm tips included) in its order
/// (the heads follow KataGo's `add_reg_dict` order instead).
#[test]
fn parameters_are_katagos() {
    let figures = parity_figures();
    let mut configs = formula_configs();
    configs.extend(["b1c6nbt".to_string(), "b2c16".to_string()]);
    for cfg in configs {
        let want: Vec<&str> = figures["configs"][&cfg]["param_names"]
            .as_array()
            .expect("param_names")
            .iter()
            .map(|n| n.as_str().expect("name"))
            .collect();
        let config = ModelConfig::by_name(&cfg).expect("config");
        let net = TrainNet::new(&config, 19, Device::Cpu).expect("net");
        let ours: Vec<&str> = net.params.iter().map(|p| p.name.as_str()).collect();
        let trunk = |names: &[&str]| -> Vec<String> {
            names
                .iter()
                .take_while(|n| !n.contains("_head."))
                .map(|n| n.to_string())
                .collect()
        };
        assert_eq!(trunk(&ours), trunk(&want), "{cfg}: the trunk");
        let (mut ours, mut want) = (ours, want);
        ours.sort_unstable();
        want.sort_unstable();
        assert_eq!(ours, want, "{cfg}");
    }
}

/// Every loss term and the gradient norm equal KataGo's trainer on the
/// same weights and rows (7x7 to 13x13 boards in 19x19 tensors, so the
/// attention masks off-board keys), for grouped-query attention with
/// learned RoPE, nested bottlenecks with fixed RoPE and an RMSNorm tip,
/// regular blocks before pairs with a spatial RMSNorm tip, and convnets
/// with SiLU and with Mish (and a spatial RMSNorm tip).
#[test]
fn transformer_loss_terms_match_katago() {
    tch::set_num_threads(1);
    for cfg in formula_configs() {
        check_parity_of(&cfg, &formula_net(&cfg));
    }
}

/// `engine export` writes the same bytes as KataGo's exporter for the same
/// weights, for each of those configs.
#[test]
fn transformer_export_matches_katagos_exporter() {
    use md5::{Digest, Md5};
    let figures = parity_figures();
    for cfg in formula_configs() {
        let theirs = figures["configs"][&cfg]["katago_export_md5"]
            .as_str()
            .expect("katago_export_md5");
        let ours = format!(
            "{:x}",
            Md5::digest(our_export(&formula_net(&cfg), &cfg).to_bytes())
        );
        assert_eq!(ours, theirs, "{cfg}: export differs from KataGo's");
    }
}

/// A few training steps of a transformer kind, then export: the engine's
/// inference net gives the trainable net's outputs, and the file loads
/// back as starting weights with the same outputs.
#[test]
fn trained_transformer_round_trips_through_export_and_import() {
    tch::set_num_threads(1);
    tch::manual_seed(11);
    let cfg = "b7c96h6kv3qk32v16tflrs";
    let config = ModelConfig::by_name(cfg).expect("config");
    let net = TrainNet::new(&config, 19, Device::Cpu).expect("net");
    let mut trainer = QuickTrainer::new(&net);
    let rows = parity_rows();
    let idx: Vec<usize> = (0..rows.num_rows).collect();
    let mut rng = StdRng::seed_from_u64(5);
    let before: Vec<Tensor> = net.params.iter().map(|p| p.tensor.copy()).collect();
    for _ in 0..3 {
        let batch = Batch::from_rows(&rows, &idx, Augment::KATAGO, &mut rng, Device::Cpu);
        let r = trainer.step(&net, &batch, 64);
        assert!(r.values["loss_sum"].is_finite(), "loss went non-finite");
    }
    // Every trunk parameter learns (some head biases, such as the score
    // belief's shared offset, have no gradient at all).
    for (p, b) in net.params.iter().zip(&before) {
        if p.name.starts_with("blocks.") {
            assert!(!p.tensor.equal(b), "{} did not move", p.name);
        }
    }

    let (model, dir) = export_and_load(&net, &config, "tf-roundtrip", "tf");
    let _ = std::fs::remove_dir_all(&dir);
    let batch = parity_batch();
    assert_same_outputs(&net, &model, &batch);

    let file = crate::nn::ModelFile::from_bytes(
        &our_export(&net, cfg).to_bytes(),
        std::path::Path::new("tf.bin"),
    )
    .expect("file");
    let mut fresh = TrainNet::new(&config, 19, Device::Cpu).expect("net");
    import::load_model_file(&mut fresh, &file).expect("import");
    let (x, y) = tch::no_grad(|| (net.forward_batch(&batch), fresh.forward_batch(&batch)));
    let d = |a: &Tensor, b: &Tensor| f64::try_from((a - b).abs().max()).unwrap_or(f64::MAX);
    assert!(d(&x.policy_logits.select(1, 0), &y.policy_logits.select(1, 0)) < 1e-4);
    assert!(d(&x.value_logits, &y.value_logits) < 1e-4);
    assert!(d(&x.ownership_pretanh, &y.ownership_pretanh) < 1e-4);

    // A net of another tip or RoPE refuses the file, naming why.
    let other = ModelConfig::by_name(&format!("{cfg}-rnh")).expect("config");
    let mut wrong = TrainNet::new(&other, 19, Device::Cpu).expect("net");
    let err = import::load_model_file(&mut wrong, &file).expect_err("tip differs");
    assert!(
        err.to_string().contains("-rnh") || err.to_string().contains("trunk tip"),
        "{err}"
    );
}

/// KaTrain's bundled net (`setup.sh` fetches it into `.venv/katrain`;
/// version 15 with a spatial RMSNorm tip, batch-normed) loads as the
/// starting weights of `b10c384h6nbttflrs-silu-rsnh-scalebias` (SiLU
/// everywhere), and the trainable net then gives the outputs
/// of the engine's inference net (checked against KataGo in
/// `tests/nn_parity.rs`) on a 9x9 and a 13x13 row.
#[test]
fn katrain_net_loads_as_starting_weights() {
    tch::set_num_threads(1);
    let path = super::tests::data_dir().join("../../../.venv/katrain/b10c384h6nbttflrs.bin.gz");
    assert!(
        path.exists(),
        "{} is missing: run the tests through ./setup.sh, which fetches it",
        path.display()
    );
    let file = crate::nn::ModelFile::load(&path).expect("KaTrain's net");
    let config = ModelConfig::by_name("b10c384h6nbttflrs-silu-rsnh-scalebias").expect("config");
    let mut net = TrainNet::new(&config, 19, Device::Cpu).expect("net");
    let set = import::load_model_file(&mut net, &file).expect("import");
    assert!(set > 200, "only {set} parameters set");
    let model = crate::nn::Model::load(&path, Device::Cpu).expect("inference net");
    let rows = parity_rows();
    let mut rng = StdRng::seed_from_u64(0);
    let batch = Batch::from_rows(&rows, &[0, 12], Augment::NONE, &mut rng, Device::Cpu);
    assert_same_outputs(&net, &model, &batch);

    // Without the suffix the tip differs, and the error says which to use.
    let plain = ModelConfig::by_name("b10c384h6nbttflrs-silu-scalebias").expect("config");
    let mut wrong = TrainNet::new(&plain, 19, Device::Cpu).expect("net");
    let err = import::load_model_file(&mut wrong, &file).expect_err("tip differs");
    assert!(err.to_string().contains("-rsnh"), "{err}");
}
