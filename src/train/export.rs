//! Export to KataGo's model format, version 15, as KataGo's
//! `export_model_pytorch.py` writes a fixup convnet: fixup norms become batch
//! norms with mean 0, variance `1 - 1e-20`, epsilon `1e-20`, scale `gamma+1`
//! and bias `beta`; the policy head keeps outputs 0 and 5 (policy and
//! short-term optimistic policy); the misc value head keeps score mean,
//! stdev, lead, variance-time and the two short-term error channels.

use std::collections::BTreeMap;

use tch::{Device, Tensor};

use super::config::{BlockKind, ModelConfig};
use super::TrainError;
use crate::nn::desc::*;
use crate::nn::ModelFile;

/// Named parameter tensors (KataGo's state_dict names).
pub type NamedParams = BTreeMap<String, Tensor>;

struct Ex<'a> {
    p: &'a NamedParams,
}

fn floats(t: &Tensor) -> Result<Vec<f32>, TrainError> {
    Vec::<f32>::try_from(t.to_device(Device::Cpu).contiguous().flatten(0, -1))
        .map_err(|e| TrainError::Export(format!("tensor to floats: {e}")))
}

fn relu(name: String) -> ActivationLayer {
    ActivationLayer {
        name,
        activation: Activation::Relu,
    }
}

impl Ex<'_> {
    fn get(&self, key: &str) -> Result<&Tensor, TrainError> {
        self.p
            .get(key)
            .ok_or_else(|| TrainError::Export(format!("missing parameter {key}")))
    }

    fn conv_w(&self, name: String, w: &Tensor) -> Result<ConvLayer, TrainError> {
        let s = w.size();
        Ok(ConvLayer {
            name,
            y_size: s[2] as usize,
            x_size: s[3] as usize,
            in_channels: s[1] as usize,
            out_channels: s[0] as usize,
            dilation_y: 1,
            dilation_x: 1,
            weights: floats(w)?,
        })
    }

    fn conv(&self, name: String, key: &str) -> Result<ConvLayer, TrainError> {
        let w = self.get(key)?;
        self.conv_w(name, w)
    }

    /// `write_bn` for a fixup NormMask (or `write_biasmask` when `key_gamma` is absent).
    fn bn(&self, name: String, prefix: &str) -> Result<BatchNormLayer, TrainError> {
        let beta = floats(self.get(&format!("{prefix}.beta"))?)?;
        let c = beta.len();
        let gamma = self.p.get(&format!("{prefix}.gamma"));
        let (has_scale, scale) = match gamma {
            Some(g) => (true, floats(&(g + 1.0))?),
            None => (false, vec![1.0; c]),
        };
        let eps = 1e-20f32;
        Ok(BatchNormLayer {
            name,
            num_channels: c,
            epsilon: eps,
            has_scale,
            has_bias: true,
            mean: vec![0.0; c],
            variance: vec![1.0 - eps; c],
            scale,
            bias: beta,
        })
    }

    /// `write_matmul`: torch `[out, in]` stored as `[in][out]`.
    fn matmul_w(&self, name: String, w: &Tensor) -> Result<MatMulLayer, TrainError> {
        let s = w.size();
        Ok(MatMulLayer {
            name,
            in_channels: s[1] as usize,
            out_channels: s[0] as usize,
            weights: floats(&w.tr())?,
        })
    }

    fn matmul(&self, name: String, key: &str) -> Result<MatMulLayer, TrainError> {
        let w = self.get(key)?;
        self.matmul_w(name, w)
    }

    fn matbias(&self, name: String, b: &Tensor) -> Result<MatBiasLayer, TrainError> {
        Ok(MatBiasLayer {
            name,
            weights: floats(b)?,
        })
    }

    fn res_block(&self, out: &str, key: &str, gpool: bool) -> Result<Block, TrainError> {
        let n1 = format!("{out}.normactconv1");
        let k1 = format!("{key}.normactconv1");
        let n2 = format!("{out}.normactconv2");
        let k2 = format!("{key}.normactconv2");
        let pre_bn = self.bn(format!("{n1}.norm"), &format!("{k1}.norm"))?;
        let mid_bn = self.bn(format!("{n2}.norm"), &format!("{k2}.norm"))?;
        let final_conv = self.conv(format!("{n2}.conv"), &format!("{k2}.conv.weight"))?;
        if gpool {
            Ok(Block::GlobalPooling(Box::new(GlobalPoolingBlock {
                name: out.to_string(),
                pre_bn,
                pre_activation: relu(format!("{n1}.act")),
                regular_conv: self.conv(
                    format!("{n1}.convpool.conv1r"),
                    &format!("{k1}.convpool.conv1r.weight"),
                )?,
                gpool_conv: self.conv(
                    format!("{n1}.convpool.conv1g"),
                    &format!("{k1}.convpool.conv1g.weight"),
                )?,
                gpool_bn: self.bn(
                    format!("{n1}.convpool.normg"),
                    &format!("{k1}.convpool.normg"),
                )?,
                gpool_activation: relu(format!("{n1}.convpool.actg")),
                gpool_to_bias_mul: self.matmul(
                    format!("{n1}.convpool.linear_g"),
                    &format!("{k1}.convpool.linear_g.weight"),
                )?,
                mid_bn,
                mid_activation: relu(format!("{n2}.act")),
                final_conv,
            })))
        } else {
            Ok(Block::Ordinary(ResidualBlock {
                name: out.to_string(),
                pre_bn,
                pre_activation: relu(format!("{n1}.act")),
                regular_conv: self.conv(format!("{n1}.conv"), &format!("{k1}.conv.weight"))?,
                mid_bn,
                mid_activation: relu(format!("{n2}.act")),
                final_conv,
            }))
        }
    }
}

/// Builds KataGo's version-15 model file from named parameters.
pub fn to_model_file(
    config: &ModelConfig,
    params: &NamedParams,
    model_name: &str,
) -> Result<ModelFile, TrainError> {
    let ex = Ex { p: params };
    let mut blocks = Vec::new();
    for (i, kind) in config.blocks.iter().enumerate() {
        let out = format!("model.blocks.{i}");
        let key = format!("blocks.{i}");
        let b = match kind {
            BlockKind::Regular => ex.res_block(&out, &key, false)?,
            BlockKind::RegularGpool => ex.res_block(&out, &key, true)?,
            BlockKind::BottleNest2 | BlockKind::BottleNest2Gpool => {
                let mut inner = Vec::new();
                for j in 0..2 {
                    inner.push(ex.res_block(
                        &format!("{out}.blockstack.{j}"),
                        &format!("{key}.blockstack.{j}"),
                        j == 0 && kind.has_gpool(),
                    )?);
                }
                Block::NestedBottleneck(NestedBottleneckBlock {
                    name: out.clone(),
                    pre_bn: ex.bn(
                        format!("{out}.normactconvp.norm"),
                        &format!("{key}.normactconvp.norm"),
                    )?,
                    pre_activation: relu(format!("{out}.normactconvp.act")),
                    pre_conv: ex.conv(
                        format!("{out}.normactconvp.conv"),
                        &format!("{key}.normactconvp.conv.weight"),
                    )?,
                    blocks: inner,
                    post_bn: ex.bn(
                        format!("{out}.normactconvq.norm"),
                        &format!("{key}.normactconvq.norm"),
                    )?,
                    post_activation: relu(format!("{out}.normactconvq.act")),
                    post_conv: ex.conv(
                        format!("{out}.normactconvq.conv"),
                        &format!("{key}.normactconvq.conv.weight"),
                    )?,
                })
            }
        };
        blocks.push(b);
    }
    let trunk = Trunk {
        name: "trunk".to_string(),
        trunk_num_channels: config.trunk as usize,
        mid_num_channels: config.mid as usize,
        regular_num_channels: (config.mid - config.gpool) as usize,
        dilated_num_channels: config.gpool as usize,
        gpool_num_channels: config.gpool as usize,
        initial_conv: ex.conv("model.conv_spatial".into(), "conv_spatial.weight")?,
        initial_matmul: ex.matmul("model.linear_global".into(), "linear_global.weight")?,
        metadata_encoder: None,
        blocks,
        tip_bn: ex.bn("model.norm_trunkfinal".into(), "norm_trunkfinal")?,
        tip_activation: relu("model.act_trunkfinal".into()),
    };

    let ph = "model.policy_head";
    let pick = |key: &str| -> Result<Tensor, TrainError> {
        let w = ex.get(key)?;
        Ok(Tensor::stack(&[w.get(0), w.get(5)], 0))
    };
    let policy_head = PolicyHead {
        name: ph.to_string(),
        policy_out_channels: 2,
        p1_conv: ex.conv(format!("{ph}.conv1p"), "policy_head.conv1p.weight")?,
        g1_conv: ex.conv(format!("{ph}.conv1g"), "policy_head.conv1g.weight")?,
        g1_bn: ex.bn(format!("{ph}.biasg"), "policy_head.biasg")?,
        g1_activation: relu(format!("{ph}.actg")),
        gpool_to_bias_mul: ex.matmul(format!("{ph}.linear_g"), "policy_head.linear_g.weight")?,
        p1_bn: ex.bn(format!("{ph}.bias2"), "policy_head.bias2")?,
        p1_activation: relu(format!("{ph}.act2")),
        p2_conv: ex.conv_w(format!("{ph}.conv2p"), &pick("policy_head.conv2p.weight")?)?,
        gpool_to_pass_mul: ex.matmul(
            format!("{ph}.linear_pass"),
            "policy_head.linear_pass.weight",
        )?,
        pass_mlp: Some((
            ex.matbias(
                format!("{ph}.linear_pass_bias"),
                ex.get("policy_head.linear_pass.bias")?,
            )?,
            relu(format!("{ph}.act_pass")),
            ex.matmul_w(
                format!("{ph}.linear_pass2"),
                &pick("policy_head.linear_pass2.weight")?,
            )?,
        )),
    };

    let vh = "model.value_head";
    let misc_w = Tensor::cat(
        &[
            ex.get("value_head.linear_miscvaluehead.weight")?
                .narrow(0, 0, 4),
            ex.get("value_head.linear_moremiscvaluehead.weight")?
                .narrow(0, 0, 2),
        ],
        0,
    );
    let misc_b = Tensor::cat(
        &[
            ex.get("value_head.linear_miscvaluehead.bias")?
                .narrow(0, 0, 4),
            ex.get("value_head.linear_moremiscvaluehead.bias")?
                .narrow(0, 0, 2),
        ],
        0,
    );
    let value_head = ValueHead {
        name: vh.to_string(),
        v1_conv: ex.conv(format!("{vh}.conv1"), "value_head.conv1.weight")?,
        v1_bn: ex.bn(format!("{vh}.bias1"), "value_head.bias1")?,
        v1_activation: relu(format!("{vh}.act1")),
        v2_mul: ex.matmul(format!("{vh}.linear2"), "value_head.linear2.weight")?,
        v2_bias: ex.matbias(format!("{vh}.bias2"), ex.get("value_head.linear2.bias")?)?,
        v2_activation: relu(format!("{vh}.act2")),
        v3_mul: ex.matmul(
            format!("{vh}.linear_valuehead"),
            "value_head.linear_valuehead.weight",
        )?,
        v3_bias: ex.matbias(
            format!("{vh}.bias_valuehead"),
            ex.get("value_head.linear_valuehead.bias")?,
        )?,
        sv3_mul: ex.matmul_w(format!("{vh}.linear_miscvaluehead"), &misc_w)?,
        sv3_bias: ex.matbias(format!("{vh}.bias_miscvaluehead"), &misc_b)?,
        ownership_conv: ex.conv(
            format!("{vh}.conv_ownership"),
            "value_head.conv_ownership.weight",
        )?,
    };
    let post_process = PostProcessParams {
        shortterm_score_error_multiplier: 150.0,
        ..PostProcessParams::default()
    };
    Ok(ModelFile {
        name: model_name.to_string(),
        version: 15,
        num_input_channels: 22,
        num_input_global_channels: 19,
        post_process,
        prefer_pass_alive_under_suicide_rules: false,
        trunk,
        policy_head,
        value_head,
    })
}
