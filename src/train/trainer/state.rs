//! Starting weights and checkpoints: fine-tuning from a KataGo network file,
//! and the net and optimizer state to and from a [`Checkpoint`].

use std::collections::BTreeMap;

use tch::{Device, Tensor};

use crate::train::checkpoint::{Checkpoint, TrainState};
use crate::train::config::{ModelConfig, NormKind};
use crate::train::export::NamedParams;
use crate::train::model::TrainNet;
use crate::train::optim::Optimizer;
use crate::train::TrainError;

/// Whether `p` names a KataGo network file (fine-tuning) rather than one
/// of our checkpoints.
pub(super) fn is_network_file(p: &std::path::Path) -> bool {
    let lower = p.to_string_lossy().to_lowercase();
    lower.ends_with(".bin.gz") || lower.ends_with(".bin") || lower.ends_with(".txt.gz")
}

/// The model kind that fits starting weights from KataGo network `file`:
/// batch-norm nets get a scale at every norm, a 5x5 input convolution is
/// kept, a human-SL net's metadata encoder too.
pub(super) fn fine_tuning_config(
    mut config: ModelConfig,
    file: &crate::nn::ModelFile,
    p: &std::path::Path,
) -> ModelConfig {
    let before = config.name.clone();
    if crate::train::import::needs_scalebias(file) && config.norm == NormKind::Fixup {
        config = config.with_scalebias();
    }
    // A human-SL net keeps its metadata encoder.
    if file.trunk.metadata_encoder.is_some() && config.meta_encoder.is_none() {
        config = config.with_meta_encoder();
    }
    let k = file.trunk.initial_conv.y_size as i64;
    if k != config.initial_conv && file.trunk.initial_conv.x_size as i64 == k {
        config = config.with_initial_conv(k);
    }
    if config.name != before {
        eprintln!(
            "train: {} has {}{}a {k}x{k} input convolution; training it as model kind {}",
            p.display(),
            if config.norm == NormKind::ScaleBias {
                "batch norms and "
            } else {
                ""
            },
            if config.meta_encoder.is_some() {
                "an SGF metadata encoder and "
            } else {
                ""
            },
            config.name
        );
    }
    config
}

pub(in crate::train) fn params_of(net: &TrainNet) -> NamedParams {
    net.params
        .iter()
        .map(|p| (p.name.clone(), p.tensor.shallow_clone()))
        .collect()
}

pub(in crate::train) fn checkpoint_of(
    net: &TrainNet,
    opt: &Optimizer,
    state: &TrainState,
) -> Checkpoint {
    let mut tensors = BTreeMap::new();
    for p in &net.params {
        tensors.insert(format!("model.{}", p.name), p.tensor.shallow_clone());
    }
    for (prefix, map) in [
        ("swa", &opt.swa),
        ("momentum", &opt.momentum),
        ("slow", &opt.slow),
    ] {
        for (k, v) in map {
            tensors.insert(format!("{prefix}.{k}"), v.shallow_clone());
        }
    }
    if let Some(s) = &opt.grad_scaler {
        tensors.insert("grad_scaler.scale".into(), s.scale.shallow_clone());
        tensors.insert(
            "grad_scaler.growth_tracker".into(),
            s.growth_tracker.shallow_clone(),
        );
    }
    Checkpoint {
        state: state.clone(),
        tensors,
    }
}

pub(in crate::train) fn restore(
    net: &mut TrainNet,
    opt: &mut Optimizer,
    ck: &Checkpoint,
    device: Device,
) -> Result<(), TrainError> {
    let model: Vec<(String, Tensor)> = ck.group("model").into_iter().collect();
    net.load_named(&model)?;
    let to_dev = |m: BTreeMap<String, Tensor>| -> BTreeMap<String, Tensor> {
        m.into_iter()
            .map(|(k, v)| (k, v.to_device(device)))
            .collect()
    };
    let swa = to_dev(ck.group("swa"));
    if !swa.is_empty() {
        opt.swa = swa;
    }
    let slow = to_dev(ck.group("slow"));
    if !slow.is_empty() {
        opt.slow = slow;
    }
    opt.momentum = to_dev(ck.group("momentum"));
    // An fp16 run goes on with its loss scale; a run that switches to fp16
    // starts a fresh scaler, one that switches away drops it.
    if let Some(scaler) = &mut opt.grad_scaler {
        let saved = to_dev(ck.group("grad_scaler"));
        if let (Some(scale), Some(tracker)) = (saved.get("scale"), saved.get("growth_tracker")) {
            scaler.scale = scale.shallow_clone();
            scaler.growth_tracker = tracker.shallow_clone();
        }
    }
    Ok(())
}
