//! `maxMemoryMB`: one memory budget for what grows with use, the NN cache
//! and the search trees, split between them so that the two together never
//! pass it. KataGo has no such key (its cache is sized by
//! `nnCacheSizePowerOfTwo` and its trees grow with the visits asked for, so a
//! long `kata-analyze` can take all of a machine's memory).
//!
//! The split: the cache keeps the size `nnCacheSizePowerOfTwo` asks for
//! unless that is more than half the budget, when it shrinks by powers of
//! two (a slot counted at 19x19 size: the cache bounds its bytes to that,
//! so bigger boards hold fewer entries rather than more memory, see
//! [`crate::nn::NnCache`]);
//! the rest goes in equal shares to the trees of the searches that can run
//! at once (`searches`). Each search turns its share into a visit cap for
//! its own board ([`crate::search::Search::set_tree_memory_limit`]): a
//! playout adds at most one node, and a node holds at most one network
//! output, so the tree stays within its share. The network's weights and
//! buffers come on top (they do not grow with use).

use super::net_keys::{MAX_MEMORY_MB, NN_CACHE_POWER};
use crate::config::{Config, ConfigError};

/// The budget, from `maxMemoryMB`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MemoryBudget {
    bytes: u64,
}

/// How a budget is spent: the cache size and each search tree's share, and
/// what was trimmed to fit, for the start-up log.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryPlan {
    /// `nnCacheSizePowerOfTwo` after the budget.
    pub cache_power_of_two: u32,
    /// The bytes one search's tree may hold.
    pub tree_bytes: u64,
    /// One line per setting the budget changed, and the split.
    pub notes: Vec<String>,
}

/// The machine's memory (`MemTotal` of `/proc/meminfo`), where the
/// system tells it.
pub fn total_memory_bytes() -> Option<u64> {
    parse_mem_total(&std::fs::read_to_string("/proc/meminfo").ok()?)
}

/// `MemTotal: N kB` of `/proc/meminfo`'s text, in bytes.
fn parse_mem_total(meminfo: &str) -> Option<u64> {
    let kb = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse::<u64>()
        .ok()?;
    kb.checked_mul(1024)
}

/// `nnCacheSizePowerOfTwo` when the config does not set it: KataGo's 20,
/// or less (down to 12) where a full cache would take more than a quarter
/// of `memory` (the machine's, in bytes, when known).
pub fn default_cache_power_of_two(memory: Option<u64>) -> u32 {
    const MOST: u32 = 20;
    const FEWEST: u32 = 12;
    let Some(memory) = memory else {
        return MOST;
    };
    let mut p = MOST;
    while p > FEWEST && (1u64 << p) * cache_slot_bytes() > memory / 4 {
        p -= 1;
    }
    p
}

/// `nnCacheSizePowerOfTwo` from the config, else
/// [`default_cache_power_of_two`] for this machine.
pub fn cache_power_of_two(cfg: &Config) -> Result<u32, ConfigError> {
    Ok(match NN_CACHE_POWER.read(cfg)? {
        Some(p) => p as u32,
        None => default_cache_power_of_two(total_memory_bytes()),
    })
}

/// Bytes of one NN cache slot when full: the slot and the output it keeps
/// alive, counted at 19x19 size (the cache holds no more bytes than that
/// per slot on any board).
pub fn cache_slot_bytes() -> u64 {
    crate::nn::cache_slot_bytes()
}

impl MemoryBudget {
    /// `maxMemoryMB` from the config, if set (1 MB to 16 TB).
    pub fn from_config(cfg: &Config) -> Result<Option<MemoryBudget>, ConfigError> {
        Ok(MAX_MEMORY_MB.read(cfg)?.map(|mb| MemoryBudget {
            bytes: (mb as u64) << 20,
        }))
    }

    /// Each search's tree share when `searches` run at once, from the
    /// config's `maxMemoryMB` and `nnCacheSizePowerOfTwo` (none without a
    /// budget): for commands that build their searches from settings.
    pub fn tree_share(cfg: &Config, searches: usize) -> Result<Option<u64>, ConfigError> {
        let Some(budget) = MemoryBudget::from_config(cfg)? else {
            return Ok(None);
        };
        let asked = cache_power_of_two(cfg)?;
        Ok(Some(budget.plan(asked, searches).tree_bytes))
    }

    /// The start-up lines of the split for `searches` searches at once
    /// (none without a budget, or if the config's values are bad: the
    /// command reports those when it reads them).
    pub fn notes(cfg: &Config, searches: usize) -> Vec<String> {
        let Ok(Some(budget)) = MemoryBudget::from_config(cfg) else {
            return Vec::new();
        };
        let Ok(asked) = cache_power_of_two(cfg) else {
            return Vec::new();
        };
        budget.plan(asked, searches).notes
    }

    /// The split for a cache of `2^asked_power` slots and `searches`
    /// searches at once (at least one).
    pub fn plan(&self, asked_power: u32, searches: usize) -> MemoryPlan {
        let mut notes = Vec::new();
        let mut power = asked_power;
        let cache_bytes = |p: u32| (1u64 << p) * cache_slot_bytes();
        while power > 0 && cache_bytes(power) > self.bytes / 2 {
            power -= 1;
        }
        if power < asked_power {
            notes.push(format!(
                "maxMemoryMB: NN cache of 2^{asked_power} entries ({} MB when full) trimmed to 2^{power} ({} MB)",
                cache_bytes(asked_power) >> 20,
                cache_bytes(power) >> 20
            ));
        }
        let searches = searches.max(1) as u64;
        let tree_bytes = self.bytes.saturating_sub(cache_bytes(power)) / searches;
        let per_19 = crate::search::tree_node_bytes(19, 19);
        notes.push(format!(
            "maxMemoryMB = {}: NN cache {} MB, {searches} search tree(s) of {} MB each (about {} visits on 19x19)",
            self.bytes >> 20,
            cache_bytes(power) >> 20,
            tree_bytes >> 20,
            tree_bytes / per_19
        ));
        MemoryPlan {
            cache_power_of_two: power,
            tree_bytes,
            notes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(mb: u64) -> MemoryBudget {
        MemoryBudget { bytes: mb << 20 }
    }

    #[test]
    fn the_default_cache_fits_a_quarter_of_the_memory() {
        assert_eq!(default_cache_power_of_two(None), 20);
        assert_eq!(default_cache_power_of_two(Some(1 << 40)), 20);
        for gib in [1u64, 2, 4, 8, 16, 24] {
            let memory = gib << 30;
            let p = default_cache_power_of_two(Some(memory));
            assert!((12..=20).contains(&p));
            assert!(
                (1u64 << p) * cache_slot_bytes() <= memory / 4,
                "{gib} GiB: 2^{p}"
            );
            if p < 20 {
                assert!(
                    (2u64 << p) * cache_slot_bytes() > memory / 4,
                    "{gib} GiB: 2^{p}"
                );
            }
        }
        assert_eq!(default_cache_power_of_two(Some(1 << 20)), 12);
    }

    #[test]
    fn mem_total_is_read_from_meminfo() {
        let text = "MemFree:  100 kB\nMemTotal:       24570616 kB\nSwapTotal: 0 kB\n";
        assert_eq!(parse_mem_total(text), Some(24570616 * 1024));
        assert_eq!(parse_mem_total("MemTotal: lots\n"), None);
        assert_eq!(parse_mem_total(""), None);
    }

    /// The cache and the trees together stay within the budget, the cache
    /// at most half of it; a roomy budget changes nothing but says the
    /// split.
    #[test]
    fn the_split_fits_the_budget() {
        for (mb, asked, searches) in [
            (4u64, 20u32, 1usize),
            (64, 20, 4),
            (1024, 20, 2),
            (1 << 16, 16, 8),
        ] {
            let plan = budget(mb).plan(asked, searches);
            let cache = (1u64 << plan.cache_power_of_two) * cache_slot_bytes();
            let trees = searches as u64 * plan.tree_bytes;
            assert!(
                cache <= (mb << 20) / 2 || plan.cache_power_of_two == 0,
                "{mb} MB"
            );
            assert!(
                cache + trees <= mb << 20,
                "{mb} MB: cache {cache} + trees {trees}"
            );
            assert!(plan.cache_power_of_two <= asked);
            let trimmed = plan.notes.iter().any(|n| n.contains("trimmed"));
            assert_eq!(trimmed, plan.cache_power_of_two < asked, "{:?}", plan.notes);
        }
        // A 19x19 slot is about 3 KB: 4 MB hold a cache of 512 and a
        // 19x19 tree of several hundred visits.
        let small = budget(4).plan(20, 1);
        assert_eq!(small.cache_power_of_two, 9);
        let visits = small.tree_bytes / crate::search::tree_node_bytes(19, 19);
        assert!((300..2000).contains(&visits), "{visits}");
        // 64 GB: nothing to trim at the default cache size.
        let big = budget(1 << 16).plan(20, 1);
        assert_eq!(big.cache_power_of_two, 20);
        assert_eq!(big.notes.len(), 1);
    }

    #[test]
    fn read_from_the_config() {
        let cfg = Config::from_toml_str("maxMemoryMB = 512", "m.toml").unwrap();
        assert_eq!(MemoryBudget::from_config(&cfg).unwrap(), Some(budget(512)));
        let none = Config::from_toml_str("", "m.toml").unwrap();
        assert_eq!(MemoryBudget::from_config(&none).unwrap(), None);
        let bad = Config::from_toml_str("maxMemoryMB = 0", "m.toml").unwrap();
        assert!(MemoryBudget::from_config(&bad).is_err());
    }
}
