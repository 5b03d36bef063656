//! What a search asks the evaluator for, and what can go wrong.

use crate::game::{Player, MAX_LEN};

use super::batch::ModelError;
use super::symmetry::Symmetry;

/// The network input of one position in its own orientation, as the
/// feature encoder writes it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EncodedInput {
    /// Board width.
    pub x_size: usize,
    /// Board height.
    pub y_size: usize,
    /// `[C, y_size, x_size]` row-major spatial planes.
    pub spatial: Vec<f32>,
    /// `[G]` global features.
    pub global: Vec<f32>,
    /// `[M]` SGF metadata inputs (see [`super::SgfMetadata::fill_row`]);
    /// empty for a net that reads none.
    pub meta: Vec<f32>,
}

/// Which orientation(s) the network sees the position in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SymmetryChoice {
    /// One symmetry drawn at random per evaluation (KataGo's default,
    /// `nnRandomize = true`).
    #[default]
    Random,
    /// One symmetry drawn deterministically from this seed, so that a
    /// seeded single-threaded search repeats exactly. Shares cache entries
    /// with `Random`: any orientation's result is an acceptable answer.
    Seeded(u64),
    /// Exactly this symmetry (KataGo's `nnRandomize = false` with
    /// `defaultSymmetry`, or a fixed symmetry for tests).
    Fixed(Symmetry),
    /// The average of this many distinct random symmetries (1..=8),
    /// evaluated in one batch (KataGo's `rootNumSymmetriesToSample`).
    Average(u8),
}

/// How to evaluate, independently of the position; part of the cache key
/// (except `include_ownership` and `skip_cache`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EvalParams {
    /// Orientation(s) to evaluate in.
    pub symmetry: SymmetryChoice,
    /// Policy softmax temperature (KataGo's `nnPolicyTemperature`), > 0.
    pub policy_temperature: f32,
    /// Blend towards the optimistic policy head, 0..=1 (KataGo's
    /// `policyOptimism`); ignored by nets without that head.
    pub policy_optimism: f32,
    /// Also return ownership.
    pub include_ownership: bool,
    /// Don't read the cache (the result is still stored, as in KataGo).
    pub skip_cache: bool,
    /// Whether "no result" is a possible outcome: true only under simple
    /// ko or territory scoring. When false the no-result probability is
    /// forced to 0, as KataGo does.
    pub allow_no_result: bool,
    /// KataGo's `enablePassingHacks`: cap the pass prior at 19 times the
    /// sum of the other moves.
    pub passing_hacks: bool,
}

impl Default for EvalParams {
    fn default() -> Self {
        EvalParams {
            symmetry: SymmetryChoice::Random,
            policy_temperature: 1.0,
            policy_optimism: 0.0,
            include_ownership: false,
            skip_cache: false,
            allow_no_result: false,
            passing_hacks: false,
        }
    }
}

impl EvalParams {
    /// The cache key for a position whose caller-computed hash is `hash`:
    /// the hash mixed with everything here that changes the output.
    pub fn cache_key(&self, hash: u128) -> u128 {
        let (mode, arg) = match self.symmetry {
            SymmetryChoice::Random | SymmetryChoice::Seeded(_) => (1u64, 0u64),
            SymmetryChoice::Fixed(s) => (2, s.index() as u64),
            SymmetryChoice::Average(n) => (3, u64::from(n)),
        };
        let flags = u64::from(self.allow_no_result) | (u64::from(self.passing_hacks) << 1);
        let a =
            mode | (arg << 4) | (flags << 8) | (u64::from(self.policy_temperature.to_bits()) << 16);
        let b = u64::from(self.policy_optimism.to_bits());
        let lo = splitmix64(a ^ splitmix64(b));
        let hi = splitmix64(lo ^ 0x6a09_e667_f3bc_c908);
        hash ^ (u128::from(lo) | (u128::from(hi) << 64))
    }

    pub(crate) fn validate(&self) -> Result<(), EvalError> {
        let t = self.policy_temperature;
        if !(t.is_finite() && t > 0.0) {
            return Err(EvalError::BadRequest(format!(
                "policy temperature must be positive and finite, got {t}"
            )));
        }
        let o = self.policy_optimism;
        if !(0.0..=1.0).contains(&o) {
            return Err(EvalError::BadRequest(format!(
                "policy optimism must be in [0, 1], got {o}"
            )));
        }
        if let SymmetryChoice::Average(n) = self.symmetry {
            if !(1..=Symmetry::COUNT as u8).contains(&n) {
                return Err(EvalError::BadRequest(format!(
                    "number of symmetries to average must be 1..=8, got {n}"
                )));
            }
        }
        Ok(())
    }
}

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One position to evaluate.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalRequest {
    /// The encoded input in the position's own orientation.
    pub input: EncodedInput,
    /// Legal moves, `y * x_size + x`, then pass: `x_size * y_size + 1`
    /// entries. The policy is a softmax over these only.
    pub legal: Vec<bool>,
    /// The player to move (the net answers from their perspective).
    pub to_move: Player,
    /// Hash of everything the net sees (stones, player, ko, history,
    /// rules, komi...), computed by the caller; the cache key is built
    /// from it and [`EvalParams::cache_key`].
    pub hash: u128,
    /// How to evaluate.
    pub params: EvalParams,
}

impl EvalRequest {
    /// A request with default [`EvalParams`].
    pub fn new(input: EncodedInput, legal: Vec<bool>, to_move: Player, hash: u128) -> Self {
        EvalRequest {
            input,
            legal,
            to_move,
            hash,
            params: EvalParams::default(),
        }
    }

    /// Checks the request against the model's `(spatial, global, meta)`
    /// feature counts.
    pub(crate) fn validate(
        &self,
        (spatial, global, meta): (usize, usize, usize),
    ) -> Result<(), EvalError> {
        self.params.validate()?;
        let EncodedInput { x_size, y_size, .. } = self.input;
        if !(1..=MAX_LEN).contains(&x_size) || !(1..=MAX_LEN).contains(&y_size) {
            return Err(EvalError::BadRequest(format!(
                "board size {x_size}x{y_size} is outside 1..={MAX_LEN}"
            )));
        }
        let area = x_size * y_size;
        let checks = [
            ("spatial input", self.input.spatial.len(), spatial * area),
            ("global input", self.input.global.len(), global),
            ("metadata input", self.input.meta.len(), meta),
            ("legal-move mask", self.legal.len(), area + 1),
        ];
        for (what, got, want) in checks {
            if got != want {
                return Err(EvalError::BadRequest(format!(
                    "{what} has {got} values, expected {want} for {x_size}x{y_size}"
                )));
            }
        }
        if !self.legal.iter().any(|&l| l) {
            return Err(EvalError::BadRequest(
                "no legal move (not even pass)".into(),
            ));
        }
        Ok(())
    }
}

/// Why an evaluation failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EvalError {
    /// The request was malformed (a caller bug).
    #[error("bad evaluation request: {0}")]
    BadRequest(String),
    /// The network failed on the batch holding this request.
    #[error("network evaluation failed: {0}")]
    Model(#[from] ModelError),
    /// The network returned something unusable (wrong shape, NaN).
    #[error("network output unusable: {0}")]
    BadOutput(String),
    /// The evaluator's server threads are gone (a model panicked).
    #[error("the evaluator has stopped")]
    Stopped,
}
