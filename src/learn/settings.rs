//! `configs/learn.toml`: what the learner trains and how often, with the
//! names of KataGo's loop scripts' settings where they have one.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::{Config, Vocabulary};
use crate::train::{Augment, Precision, TrainOptions};

/// Every key of `configs/learn.toml` (camelCase, as KataGo's configs).
/// Paths are relative to the config file's folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LearnSettings {
    /// The net trained (`engine train -model-kind`).
    pub model_kind: String,
    /// Data board side of the rows (`dataBoardLen` of self-play).
    pub pos_len: usize,
    /// Seed of the first net's weights and of training.
    pub seed: u64,
    /// Prefix of exported nets' names (default: the model kind).
    pub export_prefix: String,
    /// A trainer checkpoint (`engine train`'s `checkpoint.safetensors`) or
    /// a KataGo net file that the run's first net and its training start
    /// from, instead of random weights: how a new run keeps growing an
    /// earlier run's net. Empty: random weights. Read until the run's first
    /// generation is in its ledger (for its net and for generation 1's
    /// sample target); a restart after that ignores it.
    pub initial_checkpoint: String,
    /// Stop after this many generations (0: never).
    pub max_generations: u64,
    /// Without `-synchronous`: a generation starts once self-play wrote
    /// this many rows since the last one's window.
    pub new_rows_per_generation: u64,
    /// Seconds between looks at the store while waiting for data.
    pub poll_seconds: f64,
    /// Seconds without a heartbeat after which a learner counts as dead and
    /// another may take the run over.
    pub lease_seconds: f64,

    /// `shuffle.py -min-rows`: no window below this many rows.
    pub shuffle_min_rows: u64,
    /// `-max-rows` (0: none).
    pub shuffle_max_rows: u64,
    /// `-keep-target-rows` (0: all).
    pub shuffle_keep_target_rows: u64,
    /// `-expand-window-per-row`.
    pub shuffle_expand_window_per_row: f64,
    /// `-taper-window-exponent`.
    pub shuffle_taper_window_exponent: f64,
    /// `-taper-window-scale` (0: the minimum rows).
    pub shuffle_taper_window_scale: f64,
    /// `-approx-rows-per-out-file`.
    pub shuffle_rows_per_file: u64,
    /// `-num-processes`.
    pub shuffle_threads: usize,

    /// `train.py -batch-size`.
    pub train_batch_size: usize,
    /// Samples trained per generation.
    pub train_samples_per_generation: u64,
    /// `-lr-scale`.
    pub train_lr_scale: f64,
    /// `-swa-scale`.
    pub train_swa_scale: f64,
    /// SWA snapshot period in samples (0: half a generation).
    pub train_swa_period_samples: u64,
    /// KataGo's learning-rate warm-up over the first 2M samples.
    pub train_lr_warmup: bool,
    /// Checkpoint every this many samples (and at each generation's end).
    pub train_checkpoint_every_samples: u64,
    /// Train on CUDA.
    pub train_cuda: bool,
    /// `fp32`, `fp16` or `bf16` (the trunk's arithmetic).
    pub train_precision: String,

    /// Test each new net against the newest accepted one; `false` accepts
    /// every net (KataGo's synchronous loop without gatekeeper).
    pub gating: bool,
    /// The gatekeeper's config (KataGo's gatekeeper keys).
    pub gatekeeper_config: String,
    /// `key=value,...` overrides of it.
    pub gatekeeper_overrides: String,

    /// With `-synchronous`: the self-play config `engine learn` plays with.
    pub selfplay_config: String,
    /// `key=value,...` overrides of it.
    pub selfplay_overrides: String,
}

impl Default for LearnSettings {
    fn default() -> Self {
        LearnSettings {
            model_kind: "b6c96".into(),
            pos_len: 19,
            seed: 0,
            export_prefix: String::new(),
            initial_checkpoint: String::new(),
            max_generations: 0,
            new_rows_per_generation: 250_000,
            poll_seconds: 30.0,
            lease_seconds: 300.0,
            shuffle_min_rows: 250_000,
            shuffle_max_rows: 0,
            shuffle_keep_target_rows: 1_200_000,
            shuffle_expand_window_per_row: 0.4,
            shuffle_taper_window_exponent: 0.65,
            shuffle_taper_window_scale: 0.0,
            shuffle_rows_per_file: 70_000,
            shuffle_threads: 2,
            train_batch_size: 256,
            train_samples_per_generation: 1_000_000,
            train_lr_scale: 1.0,
            train_swa_scale: 8.0,
            train_swa_period_samples: 0,
            train_lr_warmup: true,
            train_checkpoint_every_samples: 100_000,
            train_cuda: false,
            train_precision: "fp32".into(),
            gating: true,
            gatekeeper_config: "gatekeeper.toml".into(),
            gatekeeper_overrides: String::new(),
            selfplay_config: "selfplay.toml".into(),
            selfplay_overrides: String::new(),
        }
    }
}

/// Why the learner's settings are not usable.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// The config file or an override could not be read.
    #[error(transparent)]
    Config(#[from] Box<crate::config::ConfigError>),
    /// Keys that are not the learner's: the start-up report
    /// ([`crate::config::KeyReport`]) that every command prints, which the
    /// learner refuses to start on, a run being too long to spend on a typo.
    #[error("{}\nengine learn: refusing to start with keys it does not use", .0.join("\n"))]
    UnknownKeys(Vec<String>),
    /// A value out of range.
    #[error("{0}")]
    Invalid(String),
}

impl LearnSettings {
    /// The settings of `cfg`; every key must be the learner's.
    pub fn from_config(cfg: &Config) -> Result<LearnSettings, SettingsError> {
        let s: LearnSettings = cfg.deserialize().map_err(Box::new)?;
        let known = known_keys();
        let known: Vec<&str> = known.iter().map(String::as_str).collect();
        let report = cfg.key_report("engine learn", Vocabulary::new(&known));
        if !report.is_empty() {
            return Err(SettingsError::UnknownKeys(report.lines()));
        }
        s.validate()?;
        Ok(s)
    }

    fn validate(&self) -> Result<(), SettingsError> {
        let bad = |what: &str| Err(SettingsError::Invalid(what.to_string()));
        if !(2..=32).contains(&self.pos_len) {
            return bad("posLen must be in 2..32");
        }
        if self.train_batch_size == 0 || self.train_samples_per_generation == 0 {
            return bad("trainBatchSize and trainSamplesPerGeneration must be positive");
        }
        if self.shuffle_rows_per_file == 0 {
            return bad("shuffleRowsPerFile must be positive");
        }
        if !(self.poll_seconds > 0.0 && self.lease_seconds >= 2.0 * self.poll_seconds.min(30.0)) {
            return bad("pollSeconds must be positive and leaseSeconds at least twice as long");
        }
        self.precision()?;
        // A GPU asked for must be there at start-up, not an hour later.
        self.train_options(None)?;
        crate::train::ModelConfig::by_name(&self.model_kind)
            .map_err(|e| SettingsError::Invalid(format!("modelKind: {e}")))?;
        Ok(())
    }

    /// `trainPrecision` as the trainer's type.
    pub fn precision(&self) -> Result<Precision, SettingsError> {
        match self.train_precision.as_str() {
            "fp32" => Ok(Precision::F32),
            "fp16" => Ok(Precision::F16),
            "bf16" => Ok(Precision::BF16),
            other => Err(SettingsError::Invalid(format!(
                "trainPrecision {other:?}: expected fp32, fp16 or bf16"
            ))),
        }
    }

    /// Prefix of exported names.
    pub fn prefix(&self) -> &str {
        if self.export_prefix.is_empty() {
            &self.model_kind
        } else {
            &self.export_prefix
        }
    }

    /// `initialCheckpoint` resolved against the config file's folder.
    pub fn initial_checkpoint(&self, config_file: Option<&Path>) -> Option<PathBuf> {
        (!self.initial_checkpoint.is_empty())
            .then(|| resolve(config_file, &self.initial_checkpoint))
    }

    /// The trainer's settings; `config_file` resolves `initialCheckpoint`.
    pub fn train_options(&self, config_file: Option<&Path>) -> Result<TrainOptions, SettingsError> {
        Ok(TrainOptions {
            model_kind: self.model_kind.clone(),
            pos_len: self.pos_len,
            batch_size: self.train_batch_size,
            lr_scale: self.train_lr_scale,
            swa_scale: self.train_swa_scale,
            swa_period_samples: if self.train_swa_period_samples == 0 {
                (self.train_samples_per_generation / 2).max(1)
            } else {
                self.train_swa_period_samples
            },
            no_lr_warmup: !self.train_lr_warmup,
            augment: Augment::KATAGO,
            checkpoint_every_samples: self.train_checkpoint_every_samples.max(1),
            device: crate::nn::device::train_device(self.train_cuda)
                .map_err(|e| SettingsError::Invalid(format!("trainCuda: {e}")))?,
            precision: self.precision()?,
            seed: self.seed,
            initial_checkpoint: self.initial_checkpoint(config_file),
            loss_scales: crate::train::LossScales::default(),
        })
    }
}

/// The learner's keys.
fn known_keys() -> Vec<String> {
    match serde_json::to_value(LearnSettings::default()) {
        Ok(serde_json::Value::Object(m)) => m.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

/// A path of the config resolved against the config file's folder.
pub fn resolve(config_file: Option<&Path>, path: &str) -> PathBuf {
    let p = PathBuf::from(path);
    match config_file.and_then(Path::parent) {
        Some(dir) if p.is_relative() => dir.join(p),
        _ => p,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_overrides_parse() {
        let cfg = Config::from_toml_str(
            "modelKind = \"b4c32\"\nposLen = 9\ntrainPrecision = \"bf16\"\ngating = false\n",
            "t.toml",
        )
        .expect("config");
        let s = LearnSettings::from_config(&cfg).expect("settings");
        assert_eq!(s.model_kind, "b4c32");
        assert_eq!(s.pos_len, 9);
        assert!(!s.gating);
        assert_eq!(s.precision().expect("precision"), Precision::BF16);
        assert_eq!(s.prefix(), "b4c32");
        assert_eq!(s.train_batch_size, 256);
    }

    #[test]
    fn a_typo_is_an_error_with_a_hint() {
        let cfg =
            Config::from_toml_str("trainBatchSise = 64\nfoo = 1\n", "t.toml").expect("config");
        let e = LearnSettings::from_config(&cfg)
            .expect_err("typo")
            .to_string();
        assert!(
            e.contains("unknown config key 'trainBatchSise' in config file 't.toml', line 1 (did you mean 'trainBatchSize'?)"),
            "{e}"
        );
        assert!(e.contains("'foo'"), "{e}");
    }

    #[test]
    fn bad_values_are_errors() {
        for text in [
            "trainPrecision = \"fp8\"",
            "modelKind = \"b99c1\"",
            "posLen = 40",
            "trainBatchSize = 0",
        ] {
            let cfg = Config::from_toml_str(text, "t.toml").expect("config");
            assert!(LearnSettings::from_config(&cfg).is_err(), "{text}");
        }
    }

    #[test]
    fn paths_are_relative_to_the_config() {
        let p = resolve(Some(Path::new("/a/b/learn.toml")), "selfplay.toml");
        assert_eq!(p, PathBuf::from("/a/b/selfplay.toml"));
        assert_eq!(
            resolve(Some(Path::new("/a/learn.toml")), "/x/y.toml"),
            PathBuf::from("/x/y.toml")
        );
        // No initialCheckpoint: random weights; one given: resolved like the others.
        let cfg = Config::from_toml_str("modelKind = \"b4c32\"\n", "t.toml").expect("config");
        let s = LearnSettings::from_config(&cfg).expect("settings");
        let file = Some(Path::new("/a/b/learn.toml"));
        assert_eq!(
            s.train_options(file).expect("options").initial_checkpoint,
            None
        );
        let cfg = Config::from_toml_str("initialCheckpoint = \"../ck.safetensors\"\n", "t.toml")
            .expect("config");
        let s = LearnSettings::from_config(&cfg).expect("settings");
        assert_eq!(
            s.train_options(file).expect("options").initial_checkpoint,
            Some(PathBuf::from("/a/b/../ck.safetensors"))
        );
    }
}
