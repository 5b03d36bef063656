//! Tests of the libtorch network: shapes, masking, folding, Winograd, bad
//! inputs.

use super::*;
use crate::nn::testnet::{one_board, synthetic};

fn g170() -> ModelFile {
    let dir = crate::shared_data_dir().unwrap_or_else(|m| panic!("{m}"));
    ModelFile::load(dir.join("models/g170-b6c96-s175395328-d26788732.bin.gz")).expect("g170")
}

/// A deterministic pseudo-position on an `xs x ys` board placed at the
/// top-left of an `s x s` buffer: board plane, some stones of each
/// colour, liberty-ish planes, and komi/rules globals.
fn position(xs: usize, ys: usize, s: usize) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let mut spatial = vec![0f32; NUM_SPATIAL_FEATURES * s * s];
    let mut mask = vec![0f32; s * s];
    for y in 0..ys {
        for x in 0..xs {
            let i = y * s + x;
            mask[i] = 1.0;
            spatial[i] = 1.0;
            let h = (x * 31 + y * 17) % 7;
            if h == 0 || h == 3 {
                spatial[(1 + h % 2) * s * s + i] = 1.0;
                spatial[(3 + (x + y) % 3) * s * s + i] = 1.0;
            }
        }
    }
    let mut global = vec![0f32; NUM_GLOBAL_FEATURES];
    global[5] = -0.375;
    global[6] = 1.0;
    global[7] = 0.5;
    global[18] = -0.5;
    (spatial, global, mask)
}

/// A CPU net with default options, with or without folded ReLU scales and
/// Winograd convs.
fn cpu_model(file: &ModelFile, fold_relu_scales: bool, winograd: bool) -> Model {
    let opts = ModelOptions::default();
    Model::build(file, Device::Cpu, opts, fold_relu_scales, winograd, false).expect("build")
}

fn run(model: &Model, xs: usize, ys: usize, s: usize, masked: bool) -> NetOutputs {
    run_boards(model, &[(xs, ys)], s, masked)
}

/// Compares a 9x9 exact evaluation with the same board in a padded buffer.
fn assert_padded_matches_exact(model: &Model, xs: usize, ys: usize, s: usize, tol: f32) {
    let exact = run(model, xs, ys, ys.max(xs), true);
    let padded = run(model, xs, ys, s, true);
    let (e, p) = (exact.row(0), padded.row(0));
    let es = exact.width;
    let mut worst = 0f32;
    let mut cmp = |a: f32, b: f32| worst = worst.max((a - b).abs());
    for y in 0..ys {
        for x in 0..xs {
            cmp(e.policy[y * es + x], p.policy[y * s + x]);
            cmp(e.ownership[y * es + x], p.ownership[y * s + x]);
            if let (Some(a), Some(b)) = (e.policy_optimistic, p.policy_optimistic) {
                cmp(a[y * es + x], b[y * s + x]);
            }
        }
    }
    cmp(e.policy[es * exact.height], p.policy[s * s]);
    for i in 0..3 {
        cmp(e.value_logits[i], p.value_logits[i]);
    }
    cmp(e.scores.score_mean, p.scores.score_mean);
    cmp(e.scores.score_stdev, p.scores.score_stdev);
    cmp(e.scores.lead, p.scores.lead);
    cmp(e.scores.var_time_left, p.scores.var_time_left);
    cmp(
        e.scores.shortterm_winloss_error,
        p.scores.shortterm_winloss_error,
    );
    assert!(worst < tol, "padded differs from exact by {worst}");
}

#[test]
fn model_is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Model>();
}

#[test]
fn g170_output_shapes_and_facts() {
    let model = Model::from_file(&g170(), Device::Cpu, false).expect("build");
    assert_eq!(model.version(), 8);
    assert_eq!(model.num_parameters(), 1_027_911);
    assert!(!model.has_optimistic_policy());
    let (s1, g1, _) = position(19, 19, 19);
    let spatial = [s1.clone(), s1].concat();
    let global = [g1.clone(), g1].concat();
    let out = model
        .forward(&NetInput::square(2, 19, &spatial, &global, None))
        .expect("forward");
    assert_eq!(out.policy.len(), 2 * 362);
    assert_eq!(out.ownership.len(), 2 * 361);
    assert_eq!(out.value_logits.len(), 6);
    assert_eq!(out.scores.len(), 2);
    assert!(out.policy_optimistic.is_none());
    assert!(out.ownership.iter().all(|v| v.abs() <= 1.0));
    // Identical rows give identical outputs.
    assert_eq!(out.row(0).policy, out.row(1).policy);
    assert_eq!(out.row(0).scores.var_time_left, -1.0);
}

#[test]
fn g170_masked_padding_equals_exact_size() {
    let model = Model::from_file(&g170(), Device::Cpu, false).expect("build");
    assert_padded_matches_exact(&model, 9, 9, 19, 1e-4);
    assert_padded_matches_exact(&model, 13, 7, 19, 1e-4);
    // An all-ones mask gives the same as no mask.
    let a = run(&model, 19, 19, 19, true);
    let b = run(&model, 19, 19, 19, false);
    for (x, y) in a.policy.iter().zip(&b.policy) {
        assert!((x - y).abs() < 1e-5);
    }
}

#[test]
fn folded_and_unfolded_batch_norms_agree() {
    for file in [g170(), synthetic(15, Activation::Relu, 7)] {
        let folded = cpu_model(&file, true, true);
        let plain = cpu_model(&file, false, true);
        let a = run(&folded, 9, 9, 11, true);
        let b = run(&plain, 9, 9, 11, true);
        for (x, y) in a.policy.iter().zip(&b.policy) {
            assert!((x - y).abs() < 1e-4, "{}: {x} vs {y}", file.name);
        }
        for (x, y) in a.value_logits.iter().zip(&b.value_logits) {
            assert!((x - y).abs() < 1e-4, "{}: {x} vs {y}", file.name);
        }
    }
}

#[test]
fn winograd_and_libtorch_convolutions_agree() {
    for file in [g170(), synthetic(15, Activation::Relu, 9)] {
        let wino = cpu_model(&file, true, true);
        let torch = cpu_model(&file, true, false);
        for (xs, ys, s, masked) in [(19, 19, 19, false), (9, 9, 11, true), (13, 7, 13, true)] {
            let a = run(&wino, xs, ys, s, masked);
            let b = run(&torch, xs, ys, s, masked);
            // Policy, ownership and value within 1e-4, the lead within 1e-3.
            let diff = max_diff(&a, &b);
            assert!(diff < 1e-4, "{}: {diff}", file.name);
            let (sa, sb) = (a.row(0).scores, b.row(0).scores);
            assert!((sa.score_mean - sb.score_mean).abs() < 1e-3);
        }
    }
}

#[test]
fn synthetic_nets_of_every_version_run_and_mask_correctly() {
    for version in MIN_MODEL_VERSION..=MAX_MODEL_VERSION {
        let file = synthetic(version, Activation::Mish, 100 + version as u64);
        let model = Model::from_file(&file, Device::Cpu, false).expect("build");
        assert_eq!(model.has_optimistic_policy(), version >= 12);
        let out = run(&model, 9, 9, 9, false);
        assert_eq!(out.policy_optimistic.is_some(), version >= 12, "v{version}");
        let sc = out.row(0).scores;
        if version >= 9 {
            assert!(
                sc.var_time_left > 0.0 && sc.shortterm_score_error > 0.0,
                "v{version}"
            );
        } else {
            assert_eq!(sc.var_time_left, -1.0);
        }
        assert!(out.policy.iter().all(|v| v.is_finite()), "v{version}");
        assert_padded_matches_exact(&model, 9, 9, 13, 1e-4);
    }
}

#[test]
fn bad_inputs_are_errors_not_panics() {
    let model =
        Model::from_file(&synthetic(8, Activation::Relu, 3), Device::Cpu, false).expect("build");
    let (spatial, global, mask) = position(9, 9, 9);
    let ok = one_board(9, &spatial, &global, &mask);
    assert!(model.forward(&ok).is_ok());
    let cases = [
        NetInput {
            batch_size: 2,
            ..ok
        },
        NetInput {
            batch_size: 0,
            ..ok
        },
        NetInput { height: 8, ..ok },
        NetInput {
            global: &global[..5],
            ..ok
        },
        NetInput {
            height: 0,
            width: 0,
            spatial: &[],
            mask: None,
            ..ok
        },
    ];
    for c in cases {
        assert!(matches!(model.forward(&c), Err(NetError::BadInput(_))));
    }
    let zeros = vec![0f32; 81];
    let empty_mask = NetInput {
        mask: Some(&zeros),
        ..ok
    };
    assert!(matches!(
        model.forward(&empty_mask),
        Err(NetError::BadInput(_))
    ));
}

#[test]
fn metadata_encoder_nets_need_metadata_and_answer_by_it() {
    let mut file = synthetic(15, Activation::Mish, 5);
    crate::nn::testnet::with_metadata_encoder(&mut file, 6);
    // The file format writes and reads it back unchanged.
    let again = ModelFile::from_bytes(&file.to_bytes(), Path::new("meta.bin")).expect("parse");
    assert_eq!(again, file);
    let model = Model::from_file(&file, Device::Cpu, false).expect("build");
    assert_eq!(model.num_meta_features(), 192);
    let (one, one_global, one_mask) = position(5, 5, 5);
    let (spatial, global, mask) = (one.repeat(2), one_global.repeat(2), one_mask.repeat(2));
    let without = NetInput::square(2, 5, &spatial, &global, Some(&mask));
    let err = model.forward(&without).expect_err("no metadata");
    assert!(err.to_string().contains("humanSLProfile"), "{err}");
    // Two profiles on the same position: the outputs follow the profile.
    let mut meta = vec![f32::NAN; 2 * 192];
    for (row, name) in meta.chunks_mut(192).zip(["rank_20k", "rank_9d"]) {
        let profile = crate::nn::SgfMetadata::profile(name).unwrap().unwrap();
        profile.fill_row(row, crate::game::Player::Black, 25);
    }
    let with = NetInput {
        meta: Some(&meta),
        ..without
    };
    let out = model.forward(&with).expect("forward");
    let (a, b) = (out.row(0), out.row(1));
    let policy_diff = a
        .policy
        .iter()
        .zip(b.policy)
        .map(|(x, y)| (x - y).abs())
        .fold(0f32, f32::max);
    assert!(
        policy_diff > 1e-3,
        "profiles change the policy by {policy_diff}"
    );
    // Metadata for a net without an encoder is refused too.
    let plain = Model::from_file(&synthetic(15, Activation::Mish, 5), Device::Cpu, false).unwrap();
    let err = plain.forward(&with).expect_err("no encoder");
    assert!(err.to_string().contains("metadata"), "{err}");
}

/// A batch of `n` rows of [`position`]s (row `r` on a board of side
/// `sides[r % len]`) in an `s x s` buffer.
fn run_batch(model: &Model, n: usize, sides: &[usize], s: usize, masked: bool) -> NetOutputs {
    let boards: Vec<(usize, usize)> = (0..n)
        .map(|r| sides[r % sides.len()])
        .map(|side| (side, side))
        .collect();
    run_boards(model, &boards, s, masked)
}

/// One row of [`position`] per board (`x_len`, `y_len`) in an `s x s` buffer.
fn run_boards(model: &Model, boards: &[(usize, usize)], s: usize, masked: bool) -> NetOutputs {
    let (mut spatial, mut global, mut mask) = (Vec::new(), Vec::new(), Vec::new());
    for &(xs, ys) in boards {
        let (sp, gl, m) = position(xs, ys, s);
        // Nets before version 8 read fewer planes and globals: the first.
        spatial.extend_from_slice(&sp[..model.num_spatial_features() * s * s]);
        global.extend_from_slice(&gl[..model.num_global_features()]);
        mask.extend(m);
    }
    let n = boards.len();
    let input = NetInput::square(n, s, &spatial, &global, masked.then_some(&mask[..]));
    model.forward(&input).expect("forward")
}

fn max_diff(a: &NetOutputs, b: &NetOutputs) -> f32 {
    let pairs = a
        .policy
        .iter()
        .zip(&b.policy)
        .chain(a.ownership.iter().zip(&b.ownership))
        .chain(a.value_logits.iter().zip(&b.value_logits));
    let mut worst = 0f32;
    for (x, y) in pairs {
        assert!(x.is_finite() && y.is_finite(), "{x} vs {y}");
        worst = worst.max((x - y).abs());
    }
    for i in 0..a.batch_size {
        let (sa, sb) = (a.row(i).scores, b.row(i).scores);
        worst = worst.max((sa.lead - sb.lead).abs() / 10.0);
    }
    worst
}

/// The CUDA way of building and feeding the net (explicit convolution
/// flags, the unfused add-ReLU, batches padded to a bucket with padding
/// rows of a whole board, inputs staged in one buffer and outputs
/// gathered in one copy), run on the CPU, gives the CPU way's outputs:
/// everything of the CUDA path but the device itself is checked here.
#[test]
fn cuda_way_on_the_cpu_equals_the_cpu_way() {
    // Version 6 reads 13 planes and 12 globals: the staging buffer's
    // layout follows the net's own input sizes.
    let old = synthetic(6, Activation::Relu, 11);
    for file in [g170(), synthetic(15, Activation::Mish, 11), old] {
        let cpu = cpu_model(&file, true, false);
        for channels_last in [false, true] {
            let opts = ModelOptions {
                precision: Precision::F32,
                channels_last: Some(channels_last),
            };
            let cuda_way = Model::build(&file, Device::Cpu, opts, true, true, true).expect("build");
            // 3 rows pad to 4, 11 to 16; masked mixed sizes and full boards.
            for (n, sides, s, masked) in [
                (3, &[9usize, 7][..], 11, true),
                (11, &[13][..], 13, false),
                (1, &[19][..], 19, true),
            ] {
                let a = run_batch(&cpu, n, sides, s, masked);
                let b = run_batch(&cuda_way, n, sides, s, masked);
                assert_eq!(b.batch_size, n);
                let d = max_diff(&a, &b);
                assert!(d < 1e-4, "{} n={n} nhwc={channels_last}: {d}", file.name);
            }
        }
    }
}

/// fp16 and bf16 through libtorch (on the CPU here; on CUDA in use) stay
/// close to fp32 and finite, the CUDA way included.
#[test]
fn half_precisions_stay_close_to_fp32() {
    let file = g170();
    let f32_model = Model::from_file(&file, Device::Cpu, false).expect("build");
    let reference = run_batch(&f32_model, 3, &[19, 9], 19, true);
    for (precision, tol) in [(Precision::F16, 0.05), (Precision::BF16, 0.4)] {
        for cuda_way in [false, true] {
            let opts = ModelOptions {
                precision,
                channels_last: Some(true),
            };
            let m = Model::build(&file, Device::Cpu, opts, true, false, cuda_way).expect("build");
            assert_eq!(m.precision(), precision);
            let out = run_batch(&m, 3, &[19, 9], 19, true);
            let d = max_diff(&reference, &out);
            assert!(d < tol, "{precision} cuda_way={cuda_way}: {d}");
        }
    }
}
