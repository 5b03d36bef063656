//! Counting a model's weights with the walk ([`super::walk`]).

use std::convert::Infallible;

use super::super::desc::*;
use super::walk::{shared, ModelVisitor, Ref, Shared};
use super::ModelFile;

/// What the count visitor tallies.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Counts {
    /// Learned parameters, as KataGo counts them: batch norms count their
    /// stored scale and bias, not their running statistics.
    pub(super) parameters: usize,
    /// Every float the file stores (batch-norm statistics included).
    pub(super) stored_floats: usize,
}

impl Counts {
    fn add(&mut self, parameters: usize, stored_floats: usize) {
        self.parameters += parameters;
        self.stored_floats += stored_floats;
    }
}

impl ModelVisitor for Counts {
    type Access = Shared;
    type Error = Infallible;

    fn version(&mut self, _: &i32) -> Result<(), Infallible> {
        Ok(())
    }
    fn name(&mut self, _: &str, _: &String) -> Result<(), Infallible> {
        Ok(())
    }
    fn size(&mut self, _: &str, _: &usize) -> Result<(), Infallible> {
        Ok(())
    }
    fn flag(&mut self, _: &str, _: &bool) -> Result<(), Infallible> {
        Ok(())
    }
    fn reserved(&mut self, _: &str) -> Result<(), Infallible> {
        Ok(())
    }
    fn multiplier(&mut self, _: &str, _: &f64) -> Result<(), Infallible> {
        Ok(())
    }
    fn trunk_norm(&mut self, _: &str, _: &Option<RmsNormLayer>) -> Result<(), Infallible> {
        Ok(())
    }
    fn rms_norm(&mut self, layer: &RmsNormLayer) -> Result<(), Infallible> {
        let n = layer.gamma.len() + layer.beta.len();
        self.add(n, n);
        Ok(())
    }
    fn transformer_norm(&mut self, layer: &TransformerNorm) -> Result<(), Infallible> {
        self.add(layer.weight.len(), layer.weight.len());
        Ok(())
    }
    fn rope(&mut self, block: &AttentionBlock) -> Result<(), Infallible> {
        // Learned frequencies count (KataGo's getNumParameters); theta not.
        let n = block.rope_freqs.len();
        self.add(n, n);
        Ok(())
    }
    fn meta_encoder(&mut self, _: &Option<MetadataEncoder>) -> Result<(), Infallible> {
        Ok(())
    }
    fn implied(&mut self, _: &usize, _: usize) -> Result<(), Infallible> {
        Ok(())
    }
    fn optional<T: Default + 'static>(&mut self, _: &Option<T>, _: bool) -> Result<(), Infallible> {
        Ok(())
    }
    fn block_count(&mut self, _: &str, blocks: &Vec<Block>) -> Result<usize, Infallible> {
        Ok(blocks.len())
    }
    fn block<'a>(
        &mut self,
        _: &str,
        blocks: Ref<'a, Self, Vec<Block>>,
        index: usize,
    ) -> Result<Ref<'a, Self, Block>, Infallible> {
        // The walk asks only for indices below `block_count`.
        Ok(&blocks[index])
    }
    fn conv(&mut self, layer: &ConvLayer) -> Result<(), Infallible> {
        self.add(layer.num_parameters(), layer.weights.len());
        Ok(())
    }
    fn batch_norm(&mut self, layer: &BatchNormLayer) -> Result<(), Infallible> {
        let stats = 2 * layer.num_channels;
        self.add(layer.num_parameters(), stats + layer.num_parameters());
        Ok(())
    }
    fn activation(&mut self, _: &ActivationLayer, _: i32) -> Result<(), Infallible> {
        Ok(())
    }
    fn matmul(&mut self, layer: &MatMulLayer) -> Result<(), Infallible> {
        self.add(layer.weights.len(), layer.weights.len());
        Ok(())
    }
    fn matbias(&mut self, layer: &MatBiasLayer) -> Result<(), Infallible> {
        self.add(layer.weights.len(), layer.weights.len());
        Ok(())
    }
}

/// The counts of a whole model.
pub(super) fn count_model(m: &ModelFile) -> Counts {
    let mut counts = Counts::default();
    match shared::walk(&mut counts, m) {
        Ok(()) => counts,
        Err(never) => match never {},
    }
}

impl Block {
    /// Learned parameters, as KataGo counts them.
    pub fn num_parameters(&self) -> usize {
        let mut counts = Counts::default();
        // The channel count and version only matter to checks and to
        // activation kinds, neither of which the count looks at.
        match shared::block(&mut counts, self, 0, 0, MAX_MODEL_VERSION) {
            Ok(()) => counts.parameters,
            Err(never) => match never {},
        }
    }
}

impl ModelFile {
    /// Multiply-adds of one evaluation on an `h x w` board: each
    /// convolution `conv` picks at every point (as a direct convolution
    /// counts them), plus the matmuls (projections at every point,
    /// attention's `hw x hw` products, the heads' dense layers) when
    /// `matmuls`. The work the net defines, whatever algorithm runs it.
    pub fn multiply_adds(
        &self,
        h: usize,
        w: usize,
        conv: &dyn Fn(&ConvLayer) -> bool,
        matmuls: bool,
    ) -> f64 {
        let points = (h * w) as f64;
        let conv = |c: &ConvLayer| {
            if conv(c) {
                c.weights.len() as f64 * points
            } else {
                0.0
            }
        };
        let mm = |m: &MatMulLayer| {
            if matmuls {
                m.weights.len() as f64
            } else {
                0.0
            }
        };
        fn blocks(
            bs: &[Block],
            points: f64,
            conv: &dyn Fn(&ConvLayer) -> f64,
            mm: &dyn Fn(&MatMulLayer) -> f64,
            matmuls: bool,
        ) -> f64 {
            bs.iter()
                .map(|b| match b {
                    Block::Ordinary(b) => conv(&b.regular_conv) + conv(&b.final_conv),
                    Block::GlobalPooling(b) => {
                        conv(&b.regular_conv)
                            + conv(&b.gpool_conv)
                            + conv(&b.final_conv)
                            + mm(&b.gpool_to_bias_mul)
                    }
                    Block::NestedBottleneck(b) => {
                        conv(&b.pre_conv)
                            + conv(&b.post_conv)
                            + blocks(&b.blocks, points, conv, mm, matmuls)
                    }
                    // Projections at every point, plus two `hw x hw`
                    // products per head.
                    Block::Attention(a) => {
                        let per_point = [&a.q_proj, &a.k_proj, &a.v_proj, &a.out_proj];
                        let heads = a.num_heads as f64;
                        let dims = (a.q_head_dim + a.v_head_dim) as f64;
                        let products = if matmuls {
                            heads * points * points * dims
                        } else {
                            0.0
                        };
                        per_point.iter().map(|m| mm(m)).sum::<f64>() * points + products
                    }
                    Block::Ffn(f) => (mm(&f.linear1) + mm(&f.gate) + mm(&f.linear2)) * points,
                })
                .sum()
        }
        let t = &self.trunk;
        let p = &self.policy_head;
        let v = &self.value_head;
        conv(&t.initial_conv)
            + mm(&t.initial_matmul)
            + blocks(&t.blocks, points, &conv, &mm, matmuls)
            + conv(&p.p1_conv)
            + conv(&p.g1_conv)
            + conv(&p.p2_conv)
            + mm(&p.gpool_to_bias_mul)
            + mm(&p.gpool_to_pass_mul)
            + p.pass_mlp.as_ref().map_or(0.0, |(_, _, m)| mm(m))
            + conv(&v.v1_conv)
            + mm(&v.v2_mul)
            + mm(&v.v3_mul)
            + mm(&v.sv3_mul)
            + conv(&v.ownership_conv)
    }
}
