//! The `-meta` model kinds (KataGo's SGF metadata encoder, as in its
//! human-SL nets): names, the encoder's effect, export to the engine's
//! inference net and import back, fine-tuning between plain and `-meta`
//! nets, training on metadata rows. Loss and export parity with KataGo's
//! trainer are in `tests.rs` (`b2c16-silu-meta`).

use rand::rngs::StdRng;
use rand::SeedableRng;
use tch::{Device, Kind, Tensor};

use super::tests::{
    assert_same_outputs, export_and_load, our_export, parity_batch, parity_net, parity_rows,
    tensor_vec, QuickTrainer,
};
use super::*;

const META_CFG: &str = "b2c16-silu-meta";

/// Largest absolute difference of two nets' outputs that an export keeps
/// (policy, value, score mean).
fn max_output_diff(a: &model::NetOutput, b: &model::NetOutput) -> f64 {
    let policy = |o: &model::NetOutput| o.policy_logits.narrow(1, 0, 1);
    [
        (&policy(a), &policy(b)),
        (&a.value_logits, &b.value_logits),
        (&a.pred_scoremean, &b.pred_scoremean),
    ]
    .iter()
    .map(|(x, y)| (*x - *y).abs().max().double_value(&[]))
    .fold(0.0, f64::max)
}

#[test]
fn meta_kinds_parse_keep_their_suffix_and_stay_version_15() {
    assert_eq!(
        crate::data::NUM_METADATA_INPUTS,
        crate::nn::metadata::METADATA_INPUT_NUM_CHANNELS
    );
    let c = ModelConfig::by_name("b6c96-meta").expect("b6c96-meta");
    assert_eq!((c.meta_encoder, c.version), (Some(96), 15));
    let c = ModelConfig::by_name("b18c384nbt-mish-meta").expect("b18 human kind");
    assert_eq!(c.meta_encoder, Some(384));
    assert_eq!(c.activation, crate::nn::desc::Activation::Mish);
    let c5 = c.with_initial_conv(5);
    assert_eq!(c5.name, "b18c384nbt-initconv5-mish-meta");
    assert_eq!(ModelConfig::by_name(&c5.name).expect("round trip"), c5);
    let plain = ModelConfig::by_name("b2c16").expect("b2c16");
    assert_eq!(plain.meta_encoder, None);
    assert_eq!(plain.with_meta_encoder().name, "b2c16-meta");
    // The encoder's 5 parameters: 192x16 + 16 + 16x16 + 16 + 16x16.
    let with = TrainNet::new(&plain.with_meta_encoder(), 19, Device::Cpu).expect("net");
    let without = TrainNet::new(&plain, 19, Device::Cpu).expect("net");
    assert_eq!(
        with.num_parameters() - without.num_parameters(),
        192 * 16 + 16 + 16 * 16 + 16 + 16 * 16
    );
}

/// The metadata moves the outputs, except for the board-area feature,
/// which KataGo's encoder masks.
#[test]
fn metadata_moves_the_outputs_but_not_the_masked_feature() {
    tch::set_num_threads(1);
    let net = parity_net(META_CFG);
    let b = parity_batch();
    let meta = b.meta_input.as_ref().expect("metadata");
    let base = tch::no_grad(|| net.forward(&b.binary_input, &b.global_input, Some(meta)));
    let zero = meta.zeros_like();
    let other = tch::no_grad(|| net.forward(&b.binary_input, &b.global_input, Some(&zero)));
    assert!(
        max_output_diff(&base, &other) > 1e-3,
        "metadata has no effect"
    );
    let area = Tensor::from_slice(&[model::META_MASKED_FEATURE]);
    let moved_area = meta.index_fill(1, &area, 123.0);
    let same = tch::no_grad(|| net.forward(&b.binary_input, &b.global_input, Some(&moved_area)));
    assert_eq!(max_output_diff(&base, &same), 0.0);
}

/// Export, load with the engine's inference net (its metadata encoder) and
/// import back: the same outputs all the way.
#[test]
fn meta_net_round_trips_through_export_and_import() {
    tch::set_num_threads(1);
    let net = parity_net(META_CFG);
    let b = parity_batch();
    let (model, dir) = export_and_load(&net, &net.config, "meta", "meta-roundtrip");
    assert_eq!(model.num_meta_features(), crate::data::NUM_METADATA_INPUTS);
    let worst = assert_same_outputs(&net, &model, &b);
    eprintln!("{META_CFG}: trainable vs engine inference, max |diff| {worst:e}");
    let _ = std::fs::remove_dir_all(&dir);

    let file = our_export(&net, META_CFG);
    let mut back = TrainNet::new(&net.config, 19, Device::Cpu).expect("net");
    import::load_model_file(&mut back, &file).expect("import");
    for p in &net.params {
        if !p.name.starts_with("metadata_encoder.") {
            continue;
        }
        let mut want = p.tensor.detach().copy();
        if p.name.ends_with("linear1.weight") {
            // The file holds the masked weight: column 86 is 0.
            let area = Tensor::from_slice(&[model::META_MASKED_FEATURE]);
            want = want.index_fill(1, &area, 0.0);
        }
        let got = back.param_map()[p.name.as_str()].detach();
        let d = (got - want).abs().max().double_value(&[]);
        assert!(
            d < 1e-6,
            "{}: differs by {d} after export and import",
            p.name
        );
    }
    let d = tch::no_grad(|| max_output_diff(&net.forward_batch(&b), &back.forward_batch(&b)));
    assert!(d < 1e-4, "import changed the outputs by {d}");
}

/// A human-SL file does not go into a net without an encoder (its encoder
/// would be dropped); a plain file goes into a `-meta` net, whose encoder
/// keeps its fresh values.
#[test]
fn fine_tuning_between_plain_and_meta_nets() {
    tch::set_num_threads(1);
    let meta_file = our_export(&parity_net(META_CFG), META_CFG);
    let plain_cfg = ModelConfig::by_name("b2c16-silu").expect("config");
    let mut plain = TrainNet::new(&plain_cfg, 19, Device::Cpu).expect("net");
    let e = import::load_model_file(&mut plain, &meta_file).expect_err("encoder dropped");
    assert!(e.to_string().contains("b2c16-silu-meta"), "{e}");

    let plain_file = our_export(&plain, "b2c16-silu");
    let n_plain = import::load_model_file(&mut plain, &plain_file).expect("plain into plain");
    let mut meta = TrainNet::new(&plain_cfg.with_meta_encoder(), 19, Device::Cpu).expect("net");
    let fresh = tensor_vec::<f32>(meta.param_map()["metadata_encoder.linear1.weight"]);
    let n = import::load_model_file(&mut meta, &plain_file).expect("plain into -meta");
    assert_eq!(n, n_plain, "the same parameters set, none of the encoder's");
    let after = tensor_vec::<f32>(meta.param_map()["metadata_encoder.linear1.weight"]);
    assert_eq!(fresh, after);
}

/// Training a `-meta` net on rows with metadata moves the encoder and
/// lowers the loss; rows without metadata are refused with the reason.
#[test]
fn a_meta_net_trains_on_metadata_rows_and_refuses_rows_without() {
    tch::set_num_threads(1);
    tch::manual_seed(11);
    let config = ModelConfig::by_name("b2c16-meta").expect("config");
    let net = TrainNet::new(&config, 19, Device::Cpu).expect("net");
    let before = net.param_map()["metadata_encoder.linear2.weight"].copy();
    let rows = parity_rows();
    let idx: Vec<usize> = (0..rows.num_rows).collect();
    let mut rng = StdRng::seed_from_u64(5);
    let mut trainer = QuickTrainer::new(&net);
    let mut losses = Vec::new();
    for _ in 0..25 {
        let b = Batch::from_rows(&rows, &idx, Augment::KATAGO, &mut rng, Device::Cpu);
        losses.push(trainer.step(&net, &b, 64).values["loss_sum"]);
    }
    assert!(losses.iter().all(|l| l.is_finite()));
    assert!(
        losses[24] < losses[0],
        "loss {} -> {}",
        losses[0],
        losses[24]
    );
    let moved = (net.param_map()["metadata_encoder.linear2.weight"] - &before)
        .abs()
        .sum(Kind::Double)
        .double_value(&[]);
    assert!(moved > 0.0, "the encoder did not train");

    let mut plain_rows = rows.clone();
    plain_rows.drop_metadata();
    let e = net
        .check_rows_fit(plain_rows.has_metadata, "the window")
        .expect_err("rows without metadata");
    assert!(e.to_string().contains("metadataInputNC"), "{e}");
    assert!(e.to_string().contains("-include-meta"), "{e}");
}
