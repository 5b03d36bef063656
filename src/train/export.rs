//! Export to KataGo's model format as KataGo's `export_model_pytorch.py`
//! writes a fixup net (version 15; 17 for transformers and RMSNorm trunk
//! tips): fixup norms become batch norms with mean 0, variance `1 - 1e-20`,
//! epsilon `1e-20`, scale `gamma+1` and bias `beta`; transformer layers and
//! RMSNorms are written as they are; the policy head keeps outputs 0 and 5
//! (policy and short-term optimistic policy); the misc value head keeps
//! score mean, stdev, lead, variance-time and the two short-term error
//! channels.
//!
//! The model-file walk lays the file out; which parameter each layer holds
//! comes from the key table ([`super::keys`]) that the import shares.

use std::collections::BTreeMap;

use tch::{Device, Tensor};

use super::config::{ModelConfig, TrunkTip};
use super::keys::{key_table, Entry, Step, Transform};
use super::model::{META_MASKED_FEATURE, META_OUT_SCALE};
use super::TrainError;
use crate::nn::desc::*;
use crate::nn::model_file::walk::{
    exclusive, Exclusive, ModelVisitor, Ref, MODEL_NAME, NUM_INPUT_CHANNELS,
    NUM_INPUT_GLOBAL_CHANNELS, PREFER_PASS_ALIVE,
};
use crate::nn::ModelFile;

/// The epsilon KataGo's exporter writes for every RMSNorm
/// (`torch.nn.RMSNorm(eps=1e-6)` and `RMSNormMask`).
const RMS_EPSILON: f32 = 1e-6;

/// Named parameter tensors (KataGo's state_dict names).
pub type NamedParams = BTreeMap<String, Tensor>;

struct Ex<'a> {
    p: &'a NamedParams,
}

fn floats(t: &Tensor) -> Result<Vec<f32>, TrainError> {
    Vec::<f32>::try_from(t.to_device(Device::Cpu).contiguous().flatten(0, -1))
        .map_err(|e| TrainError::Export(format!("tensor to floats: {e}")))
}

/// The first `N` sizes of a torch weight (`[out, in, ...]`).
fn dims<const N: usize>(w: &Tensor) -> [usize; N] {
    let s = w.size();
    std::array::from_fn(|i| s[i] as usize)
}

impl Ex<'_> {
    fn get(&self, key: &str) -> Result<&Tensor, TrainError> {
        self.p
            .get(key)
            .ok_or_else(|| TrainError::Export(format!("missing parameter {key}")))
    }

    fn conv_w(&self, name: String, w: &Tensor) -> Result<ConvLayer, TrainError> {
        Ok(ConvLayer::new(name, dims(w), floats(w)?))
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
        let [out_channels, in_channels] = dims(w);
        Ok(MatMulLayer {
            name,
            in_channels,
            out_channels,
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
}

/// The exporting visitor: answers the walk's questions from the key table
/// (names, block kinds, counts) and the config (header sizes), and builds
/// every layer from the parameters.
struct Export<'a> {
    ex: Ex<'a>,
    config: &'a ModelConfig,
    model_name: &'a str,
    steps: std::vec::IntoIter<Step>,
}

impl Export<'_> {
    fn step(&mut self, expected: &str) -> Result<Step, TrainError> {
        self.steps.next().ok_or_else(|| {
            TrainError::Export(format!("key table ends where {expected} was expected"))
        })
    }

    fn entry(&mut self, kind: &str) -> Result<Entry, TrainError> {
        match self.step(kind)? {
            Step::Layer(e) => Ok(e),
            other => Err(TrainError::Export(format!(
                "key table has {other:?} where a {kind} layer was expected"
            ))),
        }
    }

    fn mismatch<T>(e: &Entry, kind: &str) -> Result<T, TrainError> {
        Err(TrainError::Export(format!(
            "{}: {:?} in the key table, but the file has a {kind} here",
            e.layer, e.transform
        )))
    }

    /// Rows 0 and 5 of `key` (policy and short-term optimistic policy).
    fn policy_rows(&self, key: &str) -> Result<Tensor, TrainError> {
        let w = self.ex.get(key)?;
        Ok(Tensor::stack(&[w.get(0), w.get(5)], 0))
    }

    /// Score mean, stdev, lead and variance time, then the two short-term errors.
    fn score_values(&self, key: &str, more: &str) -> Result<Tensor, TrainError> {
        Ok(Tensor::cat(
            &[
                self.ex.get(key)?.narrow(0, 0, 4),
                self.ex.get(more)?.narrow(0, 0, 2),
            ],
            0,
        ))
    }
}

impl ModelVisitor for Export<'_> {
    type Access = Exclusive;
    type Error = TrainError;

    fn version(&mut self, version: &mut i32) -> Result<(), TrainError> {
        *version = self.config.version;
        Ok(())
    }

    fn name(&mut self, what: &str, name: &mut String) -> Result<(), TrainError> {
        if what == MODEL_NAME {
            *name = self.model_name.to_string();
            return Ok(());
        }
        match self.step(what)? {
            Step::Name(n) => *name = n,
            other => {
                return Err(TrainError::Export(format!(
                    "key table has {other:?} where {what} was expected"
                )))
            }
        }
        Ok(())
    }

    fn size(&mut self, what: &str, value: &mut usize) -> Result<(), TrainError> {
        *value = match what {
            NUM_INPUT_CHANNELS => NUM_SPATIAL_FEATURES,
            NUM_INPUT_GLOBAL_CHANNELS => NUM_GLOBAL_FEATURES,
            _ => match self.step(what)? {
                Step::Size(n) => n,
                other => {
                    return Err(TrainError::Export(format!(
                        "key table has {other:?} where {what} was expected"
                    )))
                }
            },
        };
        Ok(())
    }

    fn flag(&mut self, what: &str, value: &mut bool) -> Result<(), TrainError> {
        *value = match what {
            // KataGo's exporter writes 0 unless the config asks for
            // pass-alive features under suicide rules, which none here does.
            PREFER_PASS_ALIVE => false,
            _ => match self.step(what)? {
                Step::Flag(f) => f,
                other => {
                    return Err(TrainError::Export(format!(
                        "key table has {other:?} where {what} was expected"
                    )))
                }
            },
        };
        Ok(())
    }

    fn reserved(&mut self, _: &str) -> Result<(), TrainError> {
        Ok(())
    }

    fn multiplier(&mut self, _: &str, _: &mut f64) -> Result<(), TrainError> {
        // Set as a whole by `to_model_file`.
        Ok(())
    }

    fn trunk_norm(&mut self, _: &str, tip: &mut Option<RmsNormLayer>) -> Result<(), TrainError> {
        *tip = match self.config.tip {
            TrunkTip::Norm => None,
            TrunkTip::RmsNorm { .. } => Some(RmsNormLayer::default()),
        };
        Ok(())
    }

    fn rms_norm(&mut self, layer: &mut RmsNormLayer) -> Result<(), TrainError> {
        let e = self.entry("RMSNorm")?;
        let Transform::RmsTip { spatial } = e.transform else {
            return Self::mismatch(&e, "RMSNorm");
        };
        let gamma_key = if spatial {
            format!("{}.gamma", e.key)
        } else {
            format!("{}.norm.weight", e.key)
        };
        let beta = floats(self.ex.get(&format!("{}.beta", e.key))?)?;
        *layer = RmsNormLayer {
            name: e.layer,
            num_channels: beta.len(),
            epsilon: RMS_EPSILON,
            spatial,
            gamma: floats(self.ex.get(&gamma_key)?)?,
            beta,
        };
        Ok(())
    }

    fn transformer_norm(&mut self, layer: &mut TransformerNorm) -> Result<(), TrainError> {
        let e = self.entry("transformer norm")?;
        if e.transform != Transform::TransformerNorm {
            return Self::mismatch(&e, "transformer norm");
        }
        let weight = floats(self.ex.get(&e.key)?)?;
        *layer = TransformerNorm {
            name: e.layer,
            num_channels: weight.len(),
            epsilon: RMS_EPSILON,
            weight,
        };
        Ok(())
    }

    fn rope(&mut self, block: &mut AttentionBlock) -> Result<(), TrainError> {
        let e = self.entry("RoPE")?;
        match e.transform {
            Transform::RopeFreqs => block.rope_freqs = floats(self.ex.get(&e.key)?)?,
            Transform::RopeTheta => {
                block.rope_theta = e.key.parse().map_err(|_| {
                    TrainError::Export(format!("{}: theta {:?} is not a number", e.layer, e.key))
                })?
            }
            _ => return Self::mismatch(&e, "RoPE"),
        }
        block.rope_name = e.layer;
        Ok(())
    }

    fn meta_encoder(&mut self, encoder: &mut Option<MetadataEncoder>) -> Result<(), TrainError> {
        // KataGo's exporter writes `meta_encoder_version` 1 for every
        // `-meta` kind.
        *encoder = self.config.meta_encoder.map(|_| MetadataEncoder {
            version: 1,
            ..MetadataEncoder::default()
        });
        Ok(())
    }

    fn implied(&mut self, slot: &mut usize, value: usize) -> Result<(), TrainError> {
        *slot = value;
        Ok(())
    }

    fn optional<T: Default + 'static>(
        &mut self,
        slot: &mut Option<T>,
        present: bool,
    ) -> Result<(), TrainError> {
        *slot = present.then(T::default);
        Ok(())
    }

    fn block_count(&mut self, what: &str, blocks: &mut Vec<Block>) -> Result<usize, TrainError> {
        blocks.clear();
        match self.step(what)? {
            Step::Count(n) => Ok(n),
            other => Err(TrainError::Export(format!(
                "key table has {other:?} where {what} was expected"
            ))),
        }
    }

    fn block<'b>(
        &mut self,
        owner: &str,
        blocks: Ref<'b, Self, Vec<Block>>,
        _index: usize,
    ) -> Result<Ref<'b, Self, Block>, TrainError> {
        let block = match self.step("a block")? {
            Step::Block { keyword, .. } => match keyword {
                "gpool_block" => Block::GlobalPooling(Box::default()),
                "nested_bottleneck_block" => Block::NestedBottleneck(Default::default()),
                "transformer_attention_block" => Block::Attention(Default::default()),
                "transformer_ffn_block" => Block::Ffn(Default::default()),
                _ => Block::Ordinary(ResidualBlock::default()),
            },
            other => {
                return Err(TrainError::Export(format!(
                    "{owner}: key table has {other:?} where a block was expected"
                )))
            }
        };
        let at = blocks.len();
        blocks.push(block);
        Ok(&mut blocks[at])
    }

    fn conv(&mut self, layer: &mut ConvLayer) -> Result<(), TrainError> {
        let e = self.entry("conv")?;
        *layer = match &e.transform {
            Transform::Conv => self.ex.conv(e.layer, &e.key)?,
            Transform::PolicyConvRows => self.ex.conv_w(e.layer, &self.policy_rows(&e.key)?)?,
            _ => return Self::mismatch(&e, "conv"),
        };
        Ok(())
    }

    fn batch_norm(&mut self, layer: &mut BatchNormLayer) -> Result<(), TrainError> {
        let e = self.entry("batch norm")?;
        if e.transform != Transform::Norm {
            return Self::mismatch(&e, "batch norm");
        }
        *layer = self.ex.bn(e.layer, &e.key)?;
        Ok(())
    }

    fn activation(&mut self, layer: &mut ActivationLayer, _: i32) -> Result<(), TrainError> {
        let e = self.entry("activation")?;
        if e.transform != Transform::Act {
            return Self::mismatch(&e, "activation");
        }
        *layer = ActivationLayer {
            name: e.layer,
            activation: self.config.activation,
        };
        Ok(())
    }

    fn matmul(&mut self, layer: &mut MatMulLayer) -> Result<(), TrainError> {
        let e = self.entry("matmul")?;
        *layer = match &e.transform {
            Transform::MatMul | Transform::PassMatMul => self.ex.matmul(e.layer, &e.key)?,
            Transform::PolicyMatMulRows => self.ex.matmul_w(e.layer, &self.policy_rows(&e.key)?)?,
            Transform::MetaInputMatMul => {
                let w = self.ex.get(&e.key)?;
                let mask = Tensor::ones([w.size()[1]], (w.kind(), w.device())).index_fill(
                    0,
                    &Tensor::from_slice(&[META_MASKED_FEATURE]).to_device(w.device()),
                    0.0,
                );
                self.ex.matmul_w(e.layer, &(w * mask.unsqueeze(0)))?
            }
            Transform::MetaOutputMatMul => {
                let w = self.ex.get(&e.key)?;
                self.ex.matmul_w(e.layer, &(w * META_OUT_SCALE))?
            }
            Transform::ScoreValues { more, bias: false } => {
                let w = self.score_values(&e.key, more)?;
                self.ex.matmul_w(e.layer, &w)?
            }
            _ => return Self::mismatch(&e, "matmul"),
        };
        Ok(())
    }

    fn matbias(&mut self, layer: &mut MatBiasLayer) -> Result<(), TrainError> {
        let e = self.entry("matbias")?;
        *layer = match &e.transform {
            Transform::Bias => self.ex.matbias(e.layer, self.ex.get(&e.key)?)?,
            Transform::ScoreValues { more, bias: true } => {
                let b = self.score_values(&e.key, more)?;
                self.ex.matbias(e.layer, &b)?
            }
            _ => return Self::mismatch(&e, "matbias"),
        };
        Ok(())
    }
}

/// Builds KataGo's model file (version 15, or 17 as `config` says) from
/// named parameters: the walk lays the file out, the key table
/// ([`super::keys`]) says which parameter each layer holds.
pub fn to_model_file(
    config: &ModelConfig,
    params: &NamedParams,
    model_name: &str,
) -> Result<ModelFile, TrainError> {
    let mut visitor = Export {
        ex: Ex { p: params },
        config,
        model_name,
        steps: key_table(config).into_iter(),
    };
    let mut m = ModelFile::default();
    exclusive::walk(&mut visitor, &mut m)?;
    if let Some(step) = visitor.steps.next() {
        return Err(TrainError::Export(format!(
            "key table has {step:?} after the file's last layer"
        )));
    }
    m.post_process = crate::train::model::OUTPUT_MULTIPLIERS;
    Ok(m)
}
