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
