//! KataGo's convnet model configs by name (`python/katago/train/modelconfigs.py`).
//!
//! Only what the v15 fixup convnets need: trunk/head widths, the block list
//! and the normalisation kind. Every config here is KataGo's default variant
//! of that name: `norm_kind = "fixup"`, ReLU, version 15,
//! `gamma_weight_decay_center_1`.

use super::TrainError;

/// One block of the trunk, as KataGo's `block_kind` entries name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    /// `regular`: two 3x3 norm-act-convs.
    Regular,
    /// `regulargpool`: the first conv carries global pooling.
    RegularGpool,
    /// `bottlenest2`: 1x1 down, two regular blocks, 1x1 up.
    BottleNest2,
    /// `bottlenest2gpool`: as above, the first inner block with global pooling.
    BottleNest2Gpool,
}

impl BlockKind {
    /// Whether the block (or its first inner block) has a global pooling branch.
    pub fn has_gpool(self) -> bool {
        matches!(self, BlockKind::RegularGpool | BlockKind::BottleNest2Gpool)
    }
}

/// A model config: the shape of the network.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelConfig {
    /// Config name (`b6c96`, ...).
    pub name: String,
    /// Model version (15).
    pub version: i32,
    /// `trunk_num_channels`.
    pub trunk: i64,
    /// `mid_num_channels`.
    pub mid: i64,
    /// `gpool_num_channels`.
    pub gpool: i64,
    /// The trunk's blocks in order.
    pub blocks: Vec<BlockKind>,
    /// `p1_num_channels`.
    pub p1: i64,
    /// `g1_num_channels`.
    pub g1: i64,
    /// `v1_num_channels`.
    pub v1: i64,
    /// `v2_size`.
    pub v2: i64,
    /// `sbv2_num_channels`.
    pub sbv2: i64,
    /// `num_scorebeliefs`.
    pub num_scorebeliefs: i64,
}

/// The names [`ModelConfig::by_name`] knows.
pub const KNOWN_CONFIGS: &[&str] = &[
    "b1c6nbt",
    "b2c16",
    "b4c32",
    "b6c96",
    "b10c128",
    "b18c384nbt",
];

impl ModelConfig {
    /// KataGo's config of that name (fixup variant, as KataGo's plain name means).
    pub fn by_name(name: &str) -> Result<ModelConfig, TrainError> {
        use BlockKind::*;
        let (trunk, mid, gpool, blocks, p1, g1, v1, sbv2, nsb, v2) = match name {
            "b1c6nbt" => (6, 4, 4, vec![BottleNest2], 4, 4, 4, 4, 2, 6),
            "b2c16" => (16, 16, 8, vec![Regular, RegularGpool], 8, 8, 8, 12, 2, 12),
            "b4c32" => (
                32,
                32,
                16,
                vec![Regular, Regular, RegularGpool, Regular],
                12,
                12,
                12,
                24,
                4,
                24,
            ),
            "b6c96" => (
                96,
                96,
                32,
                vec![
                    Regular,
                    Regular,
                    RegularGpool,
                    Regular,
                    RegularGpool,
                    Regular,
                ],
                32,
                32,
                32,
                48,
                4,
                64,
            ),
            "b10c128" => (
                128,
                128,
                32,
                vec![
                    Regular,
                    Regular,
                    Regular,
                    Regular,
                    RegularGpool,
                    Regular,
                    Regular,
                    RegularGpool,
                    Regular,
                    Regular,
                ],
                32,
                32,
                32,
                64,
                6,
                80,
            ),
            "b18c384nbt" => {
                let mut b = Vec::new();
                for i in 1..=18 {
                    b.push(if i % 3 == 0 && i < 18 {
                        BottleNest2Gpool
                    } else {
                        BottleNest2
                    });
                }
                (384, 192, 64, b, 48, 48, 96, 112, 8, 128)
            }
            _ => {
                return Err(TrainError::Config(format!(
                    "unknown model kind {name:?} (known: {})",
                    KNOWN_CONFIGS.join(", ")
                )))
            }
        };
        Ok(ModelConfig {
            name: name.to_string(),
            version: 15,
            trunk,
            mid,
            gpool,
            blocks,
            p1,
            g1,
            v1,
            v2,
            sbv2,
            num_scorebeliefs: nsb,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_names_parse_and_unknown_fails() {
        for n in KNOWN_CONFIGS {
            let c = ModelConfig::by_name(n).expect("known config");
            assert_eq!(&c.name, n);
        }
        let b18 = ModelConfig::by_name("b18c384nbt").expect("b18");
        assert_eq!(b18.blocks.len(), 18);
        let gp: Vec<usize> = (0..18).filter(|&i| b18.blocks[i].has_gpool()).collect();
        assert_eq!(gp, vec![2, 5, 8, 11, 14]);
        assert!(ModelConfig::by_name("b99c1").is_err());
    }
}
