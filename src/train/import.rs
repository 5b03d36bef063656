//! Starting weights from a KataGo model file (`-initial-checkpoint NET.bin.gz`):
//! the inverse of [`super::export`]. Heads the file lacks (opponent and soft
//! policies, long-term optimistic policy, TD values, scoring, future
//! positions, seki, score belief) keep their fresh initialisation.
//!
//! Files of versions 8 to 15+ load. A fixup net holds a file only where
//! every norm's folded scale is 1 at the norms without gamma (true of
//! KataGo's v15 fixup exports and of g170's version-8 fixup nets);
//! batch-norm nets need a net with [`NormKind::ScaleBias`] norms, which
//! hold a folded batch norm exactly ([`needs_scalebias`] tells which). Older heads map onto the v15
//! heads exactly: a version-8..14 pass logit `w·g` becomes the pass MLP
//! `relu(w·g) - relu(-w·g)`, and a file with one policy channel also seeds
//! the short-term optimistic policy (row 5, the export's second channel).

use std::collections::BTreeMap;

use tch::{Device, Kind, Tensor};

use super::config::{BlockKind, NormKind};
use super::model::TrainNet;
use super::TrainError;
use crate::nn::desc::*;
use crate::nn::ModelFile;

struct Im<'a> {
    net: &'a TrainNet,
    out: BTreeMap<String, Tensor>,
}

fn t(v: &[f32], shape: &[i64]) -> Tensor {
    Tensor::from_slice(v).view(shape)
}

impl Im<'_> {
    fn current(&self, key: &str) -> Result<Tensor, TrainError> {
        self.net
            .params
            .iter()
            .find(|p| p.name == key)
            .map(|p| p.tensor.detach().to_device(Device::Cpu).copy())
            .ok_or_else(|| TrainError::Checkpoint(format!("no parameter {key}")))
    }

    fn conv(&mut self, key: &str, c: &ConvLayer) {
        let shape = [
            c.out_channels as i64,
            c.in_channels as i64,
            c.y_size as i64,
            c.x_size as i64,
        ];
        self.out.insert(key.to_string(), t(&c.weights, &shape));
    }

    fn matmul_t(m: &MatMulLayer) -> Tensor {
        t(&m.weights, &[m.in_channels as i64, m.out_channels as i64])
            .tr()
            .contiguous()
    }

    fn matmul(&mut self, key: &str, m: &MatMulLayer) {
        self.out.insert(key.to_string(), Self::matmul_t(m));
    }

    fn bn(&mut self, prefix: &str, b: &BatchNormLayer) -> Result<(), TrainError> {
        let (s, bias) = b.merged();
        let c = b.num_channels as i64;
        let gamma_key = format!("{prefix}.gamma");
        let has_gamma = self.net.params.iter().any(|p| p.name == gamma_key);
        if has_gamma {
            let g: Vec<f32> = s.iter().map(|x| x - 1.0).collect();
            self.out.insert(gamma_key, t(&g, &[1, c, 1, 1]));
        } else if s.iter().any(|x| (x - 1.0).abs() > 1e-4) {
            return Err(TrainError::Checkpoint(format!(
                "{}: a scaled norm (a batch-norm net), which a fixup net cannot hold; use model kind {}-scalebias",
                b.name, self.net.config.name
            )));
        }
        self.out
            .insert(format!("{prefix}.beta"), t(&bias, &[1, c, 1, 1]));
        Ok(())
    }

    fn res(&mut self, key: &str, b: &Block) -> Result<(), TrainError> {
        let (k1, k2) = (format!("{key}.normactconv1"), format!("{key}.normactconv2"));
        match b {
            Block::Ordinary(r) => {
                self.bn(&format!("{k1}.norm"), &r.pre_bn)?;
                self.conv(&format!("{k1}.conv.weight"), &r.regular_conv);
                self.bn(&format!("{k2}.norm"), &r.mid_bn)?;
                self.conv(&format!("{k2}.conv.weight"), &r.final_conv);
            }
            Block::GlobalPooling(g) => {
                self.bn(&format!("{k1}.norm"), &g.pre_bn)?;
                self.conv(&format!("{k1}.convpool.conv1r.weight"), &g.regular_conv);
                self.conv(&format!("{k1}.convpool.conv1g.weight"), &g.gpool_conv);
                self.bn(&format!("{k1}.convpool.normg"), &g.gpool_bn)?;
                self.matmul(
                    &format!("{k1}.convpool.linear_g.weight"),
                    &g.gpool_to_bias_mul,
                );
                self.bn(&format!("{k2}.norm"), &g.mid_bn)?;
                self.conv(&format!("{k2}.conv.weight"), &g.final_conv);
            }
            Block::NestedBottleneck(_) => {
                return Err(TrainError::Checkpoint(format!(
                    "{key}: unexpected nested block"
                )));
            }
        }
        Ok(())
    }

    /// Overwrites rows `rows` (dim 0) of parameter `key` with `src`'s rows in order.
    fn rows(&mut self, key: &str, rows: &[i64], src: &Tensor) -> Result<(), TrainError> {
        let cur = self.current(key)?;
        let idx = Tensor::from_slice(rows);
        let cur = cur.index_copy(0, &idx, &src.to_kind(Kind::Float));
        self.out.insert(key.to_string(), cur);
        Ok(())
    }
}

fn block_norms(b: &Block) -> Vec<&BatchNormLayer> {
    match b {
        Block::Ordinary(r) => vec![&r.pre_bn, &r.mid_bn],
        Block::GlobalPooling(g) => vec![&g.pre_bn, &g.gpool_bn, &g.mid_bn],
        Block::NestedBottleneck(nb) => {
            let mut v = vec![&nb.pre_bn, &nb.post_bn];
            for inner in &nb.blocks {
                v.extend(block_norms(inner));
            }
            v
        }
    }
}

/// Whether the file has a norm whose folded scale is not 1 anywhere but at
/// the end of a residual branch (a batch-norm net such as g170's), so that
/// only a [`NormKind::ScaleBias`] net holds it.
pub fn needs_scalebias(file: &ModelFile) -> bool {
    let mut norms: Vec<&BatchNormLayer> = vec![
        &file.trunk.tip_bn,
        &file.policy_head.g1_bn,
        &file.policy_head.p1_bn,
        &file.value_head.v1_bn,
    ];
    for b in &file.trunk.blocks {
        match b {
            Block::Ordinary(r) => norms.push(&r.pre_bn),
            Block::GlobalPooling(g) => norms.extend([&g.pre_bn, &g.gpool_bn]),
            Block::NestedBottleneck(nb) => {
                // Only the post norm and inner mid norms carry a fixup gamma.
                norms.push(&nb.pre_bn);
                for inner in &nb.blocks {
                    let all = block_norms(inner);
                    norms.extend(all.iter().take(all.len() - 1));
                }
            }
        }
    }
    norms
        .iter()
        .any(|b| b.merged().0.iter().any(|x| (x - 1.0).abs() > 1e-4))
}

fn check_activations(file: &ModelFile) -> Result<(), TrainError> {
    let mut acts = vec![
        &file.trunk.tip_activation,
        &file.policy_head.g1_activation,
        &file.policy_head.p1_activation,
        &file.value_head.v1_activation,
        &file.value_head.v2_activation,
    ];
    for b in &file.trunk.blocks {
        match b {
            Block::Ordinary(r) => acts.extend([&r.pre_activation, &r.mid_activation]),
            Block::GlobalPooling(g) => {
                acts.extend([&g.pre_activation, &g.gpool_activation, &g.mid_activation])
            }
            Block::NestedBottleneck(nb) => acts.extend([&nb.pre_activation, &nb.post_activation]),
        }
    }
    match acts.iter().find(|a| a.activation != Activation::Relu) {
        Some(a) => Err(TrainError::Checkpoint(format!(
            "{}: activation {:?} (the trainable net is ReLU only)",
            a.name, a.activation
        ))),
        None => Ok(()),
    }
}

/// Copies every weight a KataGo model file holds into `net` (shapes must
/// match the net's config). Returns how many parameters were set, fully or
/// in part.
pub fn load_model_file(net: &mut TrainNet, file: &ModelFile) -> Result<usize, TrainError> {
    if file.version < 8 || file.num_input_channels != 22 || file.num_input_global_channels != 19 {
        return Err(TrainError::Checkpoint(format!(
            "model version {} with {}+{} inputs (versions 8+ with 22 spatial and 19 global inputs load)",
            file.version, file.num_input_channels, file.num_input_global_channels
        )));
    }
    if net.config.norm == NormKind::Fixup && needs_scalebias(file) {
        return Err(TrainError::Checkpoint(format!(
            "{}: a batch-norm net, which a fixup net cannot hold; use model kind {}-scalebias",
            file.name, net.config.name
        )));
    }
    check_activations(file)?;
    let k = file.trunk.initial_conv.y_size as i64;
    if k != net.config.initial_conv {
        return Err(TrainError::Checkpoint(format!(
            "{}: a {k}x{k} input convolution; use model kind {}",
            file.name,
            net.config.with_initial_conv(k).name
        )));
    }
    let config = net.config.clone();
    if file.trunk.blocks.len() != config.blocks.len() {
        return Err(TrainError::Checkpoint(format!(
            "the file has {} blocks, model kind {} has {}",
            file.trunk.blocks.len(),
            config.name,
            config.blocks.len()
        )));
    }
    let mut im = Im {
        net,
        out: BTreeMap::new(),
    };
    im.conv("conv_spatial.weight", &file.trunk.initial_conv);
    im.matmul("linear_global.weight", &file.trunk.initial_matmul);
    for (i, (kind, b)) in config.blocks.iter().zip(&file.trunk.blocks).enumerate() {
        let key = format!("blocks.{i}");
        match (kind, b) {
            (BlockKind::BottleNest2 | BlockKind::BottleNest2Gpool, Block::NestedBottleneck(nb)) => {
                im.bn(&format!("{key}.normactconvp.norm"), &nb.pre_bn)?;
                im.conv(&format!("{key}.normactconvp.conv.weight"), &nb.pre_conv);
                for (j, inner) in nb.blocks.iter().enumerate() {
                    im.res(&format!("{key}.blockstack.{j}"), inner)?;
                }
                im.bn(&format!("{key}.normactconvq.norm"), &nb.post_bn)?;
                im.conv(&format!("{key}.normactconvq.conv.weight"), &nb.post_conv);
            }
            (BlockKind::Regular | BlockKind::RegularGpool, b) => im.res(&key, b)?,
            _ => {
                return Err(TrainError::Checkpoint(format!(
                    "{key}: block kind differs from {}",
                    config.name
                )))
            }
        }
    }
    im.bn("norm_trunkfinal", &file.trunk.tip_bn)?;
    let p = &file.policy_head;
    im.conv("policy_head.conv1p.weight", &p.p1_conv);
    im.conv("policy_head.conv1g.weight", &p.g1_conv);
    im.bn("policy_head.biasg", &p.g1_bn)?;
    im.matmul("policy_head.linear_g.weight", &p.gpool_to_bias_mul);
    im.bn("policy_head.bias2", &p.p1_bn)?;
    let c2 = &p.p2_conv;
    let conv2p = t(
        &c2.weights,
        &[c2.out_channels as i64, c2.in_channels as i64, 1, 1],
    );
    // Trainer rows 0 (policy) and 5 (short-term optimistic policy) are the
    // file's channels 0 and 1; a one-channel file seeds both from channel 0.
    let rows = [0i64, 5];
    let src_rows = if c2.out_channels >= 2 {
        Tensor::from_slice(&[0i64, 1])
    } else {
        Tensor::from_slice(&[0i64, 0])
    };
    im.rows(
        "policy_head.conv2p.weight",
        &rows,
        &conv2p.index_select(0, &src_rows),
    )?;
    if let Some((bias, _, mul2)) = &p.pass_mlp {
        im.matmul("policy_head.linear_pass.weight", &p.gpool_to_pass_mul);
        im.out.insert(
            "policy_head.linear_pass.bias".into(),
            t(&bias.weights, &[bias.weights.len() as i64]),
        );
        let w2 = Im::matmul_t(mul2);
        im.rows(
            "policy_head.linear_pass2.weight",
            &rows,
            &w2.index_select(0, &src_rows),
        )?;
    } else {
        // pass = w·g exactly as relu(w·g) - relu(-w·g) through the MLP.
        let w = Im::matmul_t(&p.gpool_to_pass_mul).narrow(0, 0, 1);
        let hidden = im.current("policy_head.linear_pass.weight")?.size();
        if hidden[0] < 2 || w.size()[1] != hidden[1] {
            return Err(TrainError::Checkpoint(format!(
                "policy pass layer {:?} does not fit the pass MLP {hidden:?}",
                w.size()
            )));
        }
        let lp = Tensor::zeros(hidden.as_slice(), (Kind::Float, Device::Cpu));
        let lp = lp.index_copy(
            0,
            &Tensor::from_slice(&[0i64, 1]),
            &Tensor::cat(&[&w, &w.neg()], 0),
        );
        im.out.insert("policy_head.linear_pass.weight".into(), lp);
        im.out.insert(
            "policy_head.linear_pass.bias".into(),
            Tensor::zeros([hidden[0]], (Kind::Float, Device::Cpu)),
        );
        let mut out = vec![0f32; 2 * hidden[0] as usize];
        out[0] = 1.0;
        out[1] = -1.0;
        let i = hidden[0] as usize;
        out[i] = 1.0;
        out[i + 1] = -1.0;
        im.rows(
            "policy_head.linear_pass2.weight",
            &rows,
            &t(&out, &[2, hidden[0]]),
        )?;
    }
    let v = &file.value_head;
    im.conv("value_head.conv1.weight", &v.v1_conv);
    im.bn("value_head.bias1", &v.v1_bn)?;
    im.matmul("value_head.linear2.weight", &v.v2_mul);
    im.out.insert(
        "value_head.linear2.bias".into(),
        t(&v.v2_bias.weights, &[v.v2_bias.weights.len() as i64]),
    );
    im.matmul("value_head.linear_valuehead.weight", &v.v3_mul);
    im.out.insert(
        "value_head.linear_valuehead.bias".into(),
        t(&v.v3_bias.weights, &[3]),
    );
    let misc_w = Im::matmul_t(&v.sv3_mul);
    let misc_b = t(&v.sv3_bias.weights, &[v.sv3_bias.weights.len() as i64]);
    if misc_w.size()[0] == 4 {
        // Version 8: score mean, stdev, lead, variance-time only.
        im.rows(
            "value_head.linear_miscvaluehead.weight",
            &[0, 1, 2, 3],
            &misc_w,
        )?;
        im.rows(
            "value_head.linear_miscvaluehead.bias",
            &[0, 1, 2, 3],
            &misc_b,
        )?;
    } else if misc_w.size()[0] >= 6 {
        im.rows(
            "value_head.linear_miscvaluehead.weight",
            &[0, 1, 2, 3],
            &misc_w.narrow(0, 0, 4),
        )?;
        im.rows(
            "value_head.linear_miscvaluehead.bias",
            &[0, 1, 2, 3],
            &misc_b.narrow(0, 0, 4),
        )?;
        im.rows(
            "value_head.linear_moremiscvaluehead.weight",
            &[0, 1],
            &misc_w.narrow(0, 4, 2),
        )?;
        im.rows(
            "value_head.linear_moremiscvaluehead.bias",
            &[0, 1],
            &misc_b.narrow(0, 4, 2),
        )?;
    }
    im.conv("value_head.conv_ownership.weight", &v.ownership_conv);

    let named: Vec<(String, Tensor)> = im.out.into_iter().collect();
    net.load_partial(&named)
}
