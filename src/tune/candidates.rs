//! The settings `engine tune` tries: the values it sets, and the
//! candidates of each stage.

use super::Target;
use crate::nn::device::Precision;

/// A value the tuner sets.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Value {
    Int(i64),
    Word(&'static str),
}

impl Value {
    /// The value as a config line spells it.
    pub(super) fn text(&self, toml: bool) -> String {
        match (self, toml) {
            (Value::Int(n), _) => n.to_string(),
            (Value::Word(w), true) => format!("\"{w}\""),
            (Value::Word(w), false) => (*w).to_string(),
        }
    }

    pub(super) fn toml(&self) -> toml::Value {
        match self {
            Value::Int(n) => toml::Value::Integer(*n),
            Value::Word(w) => toml::Value::String((*w).to_string()),
        }
    }
}

/// The CPU forward pass a candidate runs: `nnCpuBackend`, and
/// `nnPrecision` where the candidate sets it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct NetBackend {
    /// `nnCpuBackend`: `rust` or `libtorch`.
    pub(super) cpu_backend: &'static str,
    /// `nnPrecision`; `None` leaves the config's.
    pub(super) precision: Option<&'static str>,
}

impl NetBackend {
    /// The Rust backend in the config's precision.
    pub(super) const RUST: NetBackend = NetBackend {
        cpu_backend: "rust",
        precision: None,
    };
    /// The Rust backend in `precision` (fp32, or its bf16 or int8 kernels).
    pub(super) fn rust_in(precision: Precision) -> NetBackend {
        NetBackend {
            cpu_backend: "rust",
            precision: Some(precision.name()),
        }
    }
    /// libtorch on the CPU.
    pub(super) const LIBTORCH: NetBackend = NetBackend {
        cpu_backend: "libtorch",
        precision: None,
    };
}

/// One setting tried: threads, batch and (on the CPU) backend.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Candidate {
    /// `nnCpuBackend` (and `nnPrecision`); `None` leaves the config's.
    pub(super) backend: Option<NetBackend>,
    /// Searches at once: `numAnalysisThreads` (analysis), 1 for play.
    pub(super) analysis_threads: usize,
    /// Search threads of each search: `numSearchThreads` (play) or
    /// `numSearchThreadsPerAnalysisThread` (analysis).
    pub(super) search_threads: usize,
    /// `nnMaxBatchSize`.
    pub(super) max_batch: usize,
}

impl Candidate {
    /// The keys this candidate sets, in the order the config shows them.
    /// `threads_key` is the search-thread key (analysis configs may spell
    /// it either way).
    pub(super) fn settings(
        &self,
        target: Target,
        threads_key: &'static str,
    ) -> Vec<(&'static str, Value)> {
        let mut out = Vec::new();
        if let Some(b) = self.backend {
            out.push(("nnCpuBackend", Value::Word(b.cpu_backend)));
            if let Some(p) = b.precision {
                out.push(("nnPrecision", Value::Word(p)));
            }
        }
        if target == Target::Analysis {
            out.push((
                "numAnalysisThreads",
                Value::Int(self.analysis_threads as i64),
            ));
        }
        out.push((threads_key, Value::Int(self.search_threads as i64)));
        out.push(("nnMaxBatchSize", Value::Int(self.max_batch as i64)));
        out
    }

    pub(super) fn label(&self, target: Target, threads_key: &'static str) -> String {
        self.settings(target, threads_key)
            .iter()
            .map(|(k, v)| format!("{k} = {}", v.text(false)))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Search thread counts for play: doublings from `low` up to `high`.
pub(super) fn doublings(low: usize, high: usize) -> Vec<usize> {
    std::iter::successors(Some(low.max(1)), |&t| t.checked_mul(2))
        .take_while(|&t| t <= high.max(low.max(1)))
        .collect()
}

/// Batch sizes worth trying for `threads` search threads in all over
/// `servers` evaluator servers: the threads shared out (each server takes
/// its own rows) and all of them (one server may take every waiting row).
pub(super) fn batch_choices(threads: usize, servers: usize) -> Vec<usize> {
    let shared = threads.div_ceil(servers.max(1)).max(1);
    let mut out = vec![shared];
    if threads.max(1) != shared {
        out.push(threads.max(1));
    }
    out
}

/// The candidates of stage 2 for `backend` with `servers` evaluator
/// servers, on `cores` cores (or a GPU).
pub(super) fn thread_candidates(
    target: Target,
    backend: Option<NetBackend>,
    servers: usize,
    cores: usize,
    gpu: bool,
) -> Vec<Candidate> {
    let shapes: Vec<(usize, usize)> = match (target, gpu) {
        (Target::Play, false) => doublings(1, (2 * cores).min(32))
            .into_iter()
            .map(|t| (1, t))
            .collect(),
        (Target::Play, true) => doublings(8, 128).into_iter().map(|t| (1, t)).collect(),
        (Target::Analysis, false) => vec![(cores, 1), (2 * cores, 1), (4 * cores, 1), (cores, 2)],
        (Target::Analysis, true) => vec![(4, 8), (8, 8), (8, 16), (16, 8)],
    };
    let mut out = Vec::new();
    for (analysis_threads, search_threads) in shapes {
        let all = analysis_threads * search_threads;
        let batches = if gpu {
            vec![all]
        } else {
            batch_choices(all, servers)
        };
        for max_batch in batches {
            out.push(Candidate {
                backend,
                analysis_threads,
                search_threads,
                max_batch,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_cover_threads_and_batches() {
        assert_eq!(doublings(1, 4), [1, 2, 4]);
        assert_eq!(doublings(8, 128), [8, 16, 32, 64, 128]);
        assert_eq!(batch_choices(1, 2), [1]);
        assert_eq!(batch_choices(2, 2), [1, 2]);
        assert_eq!(batch_choices(4, 2), [2, 4]);
        assert_eq!(batch_choices(4, 1), [4]);
        let play = thread_candidates(Target::Play, Some(NetBackend::RUST), 2, 2, false);
        let shapes: Vec<(usize, usize)> = play
            .iter()
            .map(|c| (c.search_threads, c.max_batch))
            .collect();
        assert_eq!(shapes, [(1, 1), (2, 1), (2, 2), (4, 2), (4, 4)]);
        let analysis = thread_candidates(Target::Analysis, Some(NetBackend::RUST), 2, 2, false);
        assert!(analysis
            .iter()
            .all(|c| c.max_batch <= c.analysis_threads * c.search_threads && c.max_batch >= 1));
        assert!(analysis
            .iter()
            .any(|c| c.analysis_threads == 8 && c.search_threads == 1));
        let gpu = thread_candidates(Target::Play, None, 1, 16, true);
        assert!(gpu
            .iter()
            .all(|c| c.backend.is_none() && c.max_batch == c.search_threads));
    }

    /// A bf16 candidate sets `nnPrecision` beside `nnCpuBackend`; the
    /// others leave the config's precision.
    #[test]
    fn bf16_candidates_set_the_precision() {
        let c = |backend| Candidate {
            backend: Some(backend),
            analysis_threads: 1,
            search_threads: 2,
            max_batch: 2,
        };
        assert_eq!(
            c(NetBackend::rust_in(Precision::BF16)).label(Target::Play, "numSearchThreads"),
            "nnCpuBackend = rust, nnPrecision = bf16, numSearchThreads = 2, nnMaxBatchSize = 2"
        );
        assert_eq!(
            c(NetBackend::RUST).label(Target::Play, "numSearchThreads"),
            "nnCpuBackend = rust, numSearchThreads = 2, nnMaxBatchSize = 2"
        );
    }
}
