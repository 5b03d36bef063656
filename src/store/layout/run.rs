//! A training run's root and the learner's own objects.

use bytes::Bytes;

use super::{ModelsDir, SelfplayOut, ShuffledData};
use crate::store::{Created, Store, StoreError, StoreUrl};

/// A training run's root (`engine learn -store URL`): its folders, by
/// KataGo's layout (see the module docs).
#[derive(Debug, Clone)]
pub struct Run {
    pub(super) store: Store,
}

impl Run {
    /// The run at `url` (a folder or `s3://bucket/prefix`).
    pub fn open(url: &StoreUrl) -> Result<Run, StoreError> {
        Ok(Run {
            store: Store::open(url)?,
        })
    }

    /// Where it is.
    pub fn url(&self) -> &StoreUrl {
        self.store.url()
    }

    fn models_dir(&self, sub: &str) -> Result<ModelsDir, StoreError> {
        Ok(ModelsDir::new(self.store.child(sub)?))
    }

    /// `models/`: accepted nets; self-play follows the newest.
    pub fn models(&self) -> Result<ModelsDir, StoreError> {
        self.models_dir("models")
    }

    /// `modelstobetested/`: trained nets waiting for the gatekeeper.
    pub fn candidates(&self) -> Result<ModelsDir, StoreError> {
        self.models_dir("modelstobetested")
    }

    /// `rejectedmodels/`: nets the gatekeeper turned down.
    pub fn rejected(&self) -> Result<ModelsDir, StoreError> {
        self.models_dir("rejectedmodels")
    }

    /// `selfplay/` (`engine selfplay -output-dir`).
    pub fn selfplay(&self) -> Result<SelfplayOut, StoreError> {
        Ok(SelfplayOut {
            store: self.store.child("selfplay")?,
        })
    }

    /// `shuffleddata/`: the shuffled windows.
    pub fn shuffled(&self) -> Result<ShuffledData, StoreError> {
        Ok(ShuffledData {
            store: self.store.child("shuffleddata")?,
        })
    }

    /// The shuffle output of window `name` (`shuffleddata/NAME/train`).
    pub fn shuffle_output(&self, name: &str) -> StoreUrl {
        self.url().join("shuffleddata").join(name).join("train")
    }

    /// `gatekeeper/`: gating games and `gatekeeper_log.tsv`.
    pub fn gatekeeper_log(&self) -> Result<Store, StoreError> {
        self.store.child("gatekeeper")
    }

    /// `train/`: the learner's trainer (checkpoint, metrics, loss plot).
    pub fn train_dir(&self) -> Result<Store, StoreError> {
        self.store.child("train")
    }

    /// `learn/`: the learner's ledger, lease and plot.
    pub fn learn(&self) -> Result<LearnFiles, StoreError> {
        Ok(LearnFiles {
            store: self.store.child("learn")?,
        })
    }
}

/// The learner's own objects (`RUN/learn/`): one ledger object per
/// generation, its leases and the progress plot.
#[derive(Debug, Clone)]
pub struct LearnFiles {
    pub(super) store: Store,
}

/// Digits of the generation and lease numbers in keys (sortable names).
const SEQUENCE_DIGITS: usize = 6;

fn sequence_key(dir: &str, n: u64, ext: &str) -> String {
    format!("{dir}/{n:0w$}{ext}", w = SEQUENCE_DIGITS)
}

impl LearnFiles {
    /// Where it is.
    pub fn url(&self) -> &StoreUrl {
        self.store.url()
    }

    /// The numbers of the objects `DIR/<NNNNNN>EXT`, ascending.
    fn numbers(&self, dir: &str, ext: &str) -> Result<Vec<u64>, StoreError> {
        let mut out: Vec<u64> = self
            .store
            .list_level(dir)?
            .objects
            .iter()
            .filter_map(|o| o.name().strip_suffix(ext)?.parse().ok())
            .collect();
        out.sort_unstable();
        Ok(out)
    }

    /// Generations with a ledger object, ascending.
    pub fn generations(&self) -> Result<Vec<u64>, StoreError> {
        self.numbers("generations", ".json")
    }

    /// The ledger object of generation `g`.
    pub fn read_generation(&self, g: u64) -> Result<Bytes, StoreError> {
        self.store.get(&sequence_key("generations", g, ".json"))
    }

    /// Writes the ledger object of generation `g`, create-if-absent.
    pub fn write_generation(&self, g: u64, bytes: impl Into<Bytes>) -> Result<Created, StoreError> {
        self.store
            .put_new(&sequence_key("generations", g, ".json"), bytes)
    }

    /// The URL of generation `g`'s ledger object, for messages.
    pub fn describe_generation(&self, g: u64) -> String {
        self.store
            .describe(&sequence_key("generations", g, ".json"))
    }

    /// Lease numbers taken so far, ascending.
    pub fn leases(&self) -> Result<Vec<u64>, StoreError> {
        self.numbers("lease", ".json")
    }

    /// Takes lease `n`, create-if-absent: of two learners taking the same
    /// number, one gets [`StoreErrorKind::AlreadyExists`].
    pub fn create_lease(&self, n: u64, bytes: impl Into<Bytes>) -> Result<Created, StoreError> {
        self.store
            .put_new(&sequence_key("lease", n, ".json"), bytes)
    }

    /// Lease `n`'s object.
    pub fn read_lease(&self, n: u64) -> Result<Bytes, StoreError> {
        self.store.get(&sequence_key("lease", n, ".json"))
    }

    /// Writes lease `n`'s heartbeat.
    pub fn write_heartbeat(&self, n: u64, bytes: impl Into<Bytes>) -> Result<(), StoreError> {
        self.store.put(&sequence_key("lease", n, ".alive"), bytes)
    }

    /// Lease `n`'s heartbeat, if it has one.
    pub fn read_heartbeat(&self, n: u64) -> Result<Option<Bytes>, StoreError> {
        self.store.get_opt(&sequence_key("lease", n, ".alive"))
    }

    /// Writes the progress plot; returns its URL.
    pub fn write_plot(&self, svg: impl Into<Bytes>) -> Result<String, StoreError> {
        self.store.put("progress.svg", svg)?;
        Ok(self.store.describe("progress.svg"))
    }
}
