//! KataGo model files: `.bin.gz` / `.bin` (text header tokens, float arrays
//! as `@BIN@` + little-endian f32) and the old all-text `.txt` / `.txt.gz`.
//!
//! The layout follows KataGo's `desc.cpp`: a stream of whitespace-separated
//! tokens (names, sizes, flags) in which every weight array is either a run
//! of text numbers or, in binary files, `@BIN@` followed by the raw floats.
//! Compression is recognised by the gzip magic bytes, not the file name.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use flate2::read::GzDecoder;
use flate2::write::GzEncoder;

use super::desc::*;

mod check;
mod count;
mod read;
pub(crate) mod walk;
mod write;

use read::{parse_model, ParseError, Reader};
use write::{write_model, Writer};

/// The most bytes a gzipped model file may unpack to (2 GiB). KataGo's
/// largest released nets unpack to well under 1 GB; the cap stops a corrupt
/// or hostile file (gzip packs zeros about 1000:1) from taking all memory.
pub const MAX_UNPACKED_MODEL_BYTES: u64 = 2 << 30;

/// Unpacks gzip data, refusing output longer than `cap` bytes.
fn gunzip_capped(raw: &[u8], cap: u64) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(raw.len().saturating_mul(2));
    GzDecoder::new(raw)
        .take(cap.saturating_add(1))
        .read_to_end(&mut out)?;
    if out.len() as u64 > cap {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("unpacks to more than {cap} bytes"),
        ));
    }
    Ok(out)
}

/// Why a model file could not be read or written. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum ModelFileError {
    /// The file could not be opened, read or written.
    #[error("model file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The gzip stream is corrupt or truncated.
    #[error("model file {path}: bad gzip data: {source}")]
    Gzip {
        /// The file.
        path: PathBuf,
        /// The decoder's error.
        #[source]
        source: std::io::Error,
    },
    /// The file is a KataGo model of a version this crate does not run.
    #[error(
        "model file {path}: model version {version} is not supported \
         (this engine reads versions {MIN_MODEL_VERSION}..={MAX_MODEL_VERSION}{hint})"
    )]
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// The version the file declares.
        version: i32,
        /// Extra words about the version.
        hint: &'static str,
    },
    /// The content does not follow the format (truncated, wrong sizes, not a model, ...).
    #[error("model file {path}: {problem}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where (layer name or byte offset).
        problem: String,
    },
}

/// A parsed KataGo model file: header facts and every layer's weights.
/// `Default` is an empty placeholder, which the reader fills as it reads.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelFile {
    /// The model's name (first token of the file).
    pub name: String,
    /// Model version (3..=17).
    pub version: i32,
    /// Spatial input planes (22; 13 for model version 6).
    pub num_input_channels: usize,
    /// Global inputs (19 from model version 8; 14, 12 or 16 before, see
    /// [`InputVersion`]).
    pub num_input_global_channels: usize,
    /// Output scaling constants (stored in the file for version >= 13).
    pub post_process: PostProcessParams,
    /// v15+: whether pass-alive input features assume multi-stone suicide is legal.
    pub prefer_pass_alive_under_suicide_rules: bool,
    /// The trunk.
    pub trunk: Trunk,
    /// The policy head.
    pub policy_head: PolicyHead,
    /// The value head.
    pub value_head: ValueHead,
}

impl ModelFile {
    /// Reads a model file (`.bin.gz`, `.bin`, `.txt.gz`, `.txt`; gzip is
    /// detected from the content).
    pub fn load(path: impl AsRef<Path>) -> Result<ModelFile, ModelFileError> {
        let path = path.as_ref();
        let raw = std::fs::read(path).map_err(|source| ModelFileError::Io {
            path: path.to_owned(),
            source,
        })?;
        Self::from_file_contents(&raw, path)
    }

    /// Parses the bytes of a model file as [`ModelFile::load`] does: `path`
    /// decides text or binary weights by its extension and names the file
    /// in errors. Gzip is detected from the content, and the unpacked size
    /// is capped at [`MAX_UNPACKED_MODEL_BYTES`] so that a corrupt or
    /// hostile file cannot take unbounded memory.
    pub fn from_file_contents(raw: &[u8], path: &Path) -> Result<ModelFile, ModelFileError> {
        let unpacked;
        let data = if raw.starts_with(&[0x1f, 0x8b]) {
            unpacked = gunzip_capped(raw, MAX_UNPACKED_MODEL_BYTES).map_err(|source| {
                ModelFileError::Gzip {
                    path: path.to_owned(),
                    source,
                }
            })?;
            &unpacked[..]
        } else {
            raw
        };
        let lower = path.to_string_lossy().to_lowercase();
        let text_floats = lower.ends_with(".txt") || lower.ends_with(".txt.gz");
        let ambiguous = !text_floats && !lower.ends_with(".bin") && !lower.ends_with(".bin.gz");
        match Self::parse(data, text_floats) {
            Ok(m) => Ok(m),
            // Like KataGo, a file with an unknown extension may be either kind.
            Err(e @ ParseError::Format(_)) if ambiguous => {
                Self::parse(data, true).map_err(|_| e.with_path(path))
            }
            Err(e) => Err(e.with_path(path)),
        }
    }

    /// Parses the uncompressed content of a model file.
    fn parse(data: &[u8], text_floats: bool) -> Result<ModelFile, ParseError> {
        let mut r = Reader {
            data,
            pos: 0,
            text_floats,
        };
        parse_model(&mut r)
    }

    /// Parses uncompressed binary-format content (what [`ModelFile::to_bytes`] gives).
    pub fn from_bytes(data: &[u8], path_for_errors: &Path) -> Result<ModelFile, ModelFileError> {
        Self::parse(data, false).map_err(|e| e.with_path(path_for_errors))
    }

    /// Writes the model in binary format, gzipped when the name ends in `.gz`.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), ModelFileError> {
        let path = path.as_ref();
        let bytes = self.to_bytes();
        let io_err = |source| ModelFileError::Io {
            path: path.to_owned(),
            source,
        };
        let out = if path.to_string_lossy().to_lowercase().ends_with(".gz") {
            gzip(&bytes).map_err(io_err)?
        } else {
            bytes
        };
        std::fs::write(path, out).map_err(io_err)
    }

    /// The bytes of a `.bin.gz` file of this model (what a run store
    /// writes as `NAME/model.bin.gz`).
    pub fn to_bin_gz(&self) -> Vec<u8> {
        // Compressing into memory cannot fail.
        gzip(&self.to_bytes()).unwrap_or_default()
    }

    /// The uncompressed binary-format content of this model, laid out as
    /// KataGo's exporter writes it (one token per line).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer {
            out: Vec::new(),
            floats_written: 0,
        };
        write_model(&mut w, self);
        w.out
    }

    /// Learned parameters, counted as KataGo counts them.
    pub fn num_parameters(&self) -> usize {
        count::count_model(self).parameters
    }

    /// Number of blocks at the top level of the trunk.
    pub fn num_blocks(&self) -> usize {
        self.trunk.blocks.len()
    }
}

// ---------------------------------------------------------------------------
#[cfg(test)]
mod tests {
    use super::*;

    fn shared(rel: &str) -> PathBuf {
        match crate::shared_data_dir() {
            Ok(d) => d.join(rel),
            Err(msg) => panic!("{msg}"),
        }
    }

    fn g170_path() -> PathBuf {
        shared("models/g170-b6c96-s175395328-d26788732.bin.gz")
    }

    fn tmp_path(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("engine-model-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        dir.join(name)
    }

    #[test]
    fn g170_parses_with_katago_shapes() {
        let m = ModelFile::load(g170_path()).expect("g170 loads");
        assert_eq!(m.name, "g170-b6c96-s175395328-d26788732");
        assert_eq!(m.version, 8);
        assert_eq!(m.num_parameters(), 1_027_911);
        assert_eq!(m.trunk.trunk_num_channels, 96);
        let kinds: Vec<&str> = m.trunk.blocks.iter().map(Block::kind_keyword).collect();
        assert_eq!(
            kinds,
            [
                "ordinary_block",
                "ordinary_block",
                "gpool_block",
                "ordinary_block",
                "gpool_block",
                "ordinary_block"
            ]
        );
        assert_eq!(m.policy_head.policy_out_channels, 1);
        assert_eq!(m.value_head.sv3_mul.out_channels, 4);
        assert_eq!(m.trunk.initial_conv.y_size, 5);
        assert_eq!(m.post_process, PostProcessParams::default());
    }

    #[test]
    fn g170_round_trips_bit_for_bit() {
        let m = ModelFile::load(g170_path()).expect("g170 loads");
        for name in ["g170-copy.bin.gz", "g170-copy.bin"] {
            let p = tmp_path(name);
            m.write(&p).expect("write");
            let again = ModelFile::load(&p).expect("reload");
            assert_eq!(m, again, "{name}");
            let _ = std::fs::remove_file(p);
        }
        // The writer lays the file out as KataGo's exporter does.
        let raw = {
            let mut v = Vec::new();
            GzDecoder::new(&std::fs::read(g170_path()).expect("read")[..])
                .read_to_end(&mut v)
                .expect("gunzip");
            v
        };
        assert_eq!(m.to_bytes(), raw);
    }

    /// The floats the writer puts in a file, and the count of them.
    fn floats_written_and_counted(m: &ModelFile) -> (usize, count::Counts) {
        let mut w = Writer {
            out: Vec::new(),
            floats_written: 0,
        };
        write_model(&mut w, m);
        (w.floats_written, count::count_model(m))
    }

    #[test]
    fn every_shared_net_reads_writes_and_reads_back_the_same_bytes() {
        let dir = shared("models");
        let mut read = 0;
        for entry in std::fs::read_dir(&dir).expect("models dir") {
            let path = entry.expect("dir entry").path();
            let name = path.to_string_lossy().to_string();
            if !(name.ends_with(".bin.gz") || name.ends_with(".bin")) {
                continue;
            }
            let m = match ModelFile::load(&path) {
                Ok(m) => m,
                // Transformer nets (version 17) are refused, as tested above.
                Err(ModelFileError::UnsupportedVersion { version: 17, .. }) => continue,
                Err(e) => panic!("{e}"),
            };
            let bytes = m.to_bytes();
            let again = ModelFile::from_bytes(&bytes, &path).expect("reads back");
            assert_eq!(m, again, "{name}");
            assert_eq!(again.to_bytes(), bytes, "{name}");
            let (written, counts) = floats_written_and_counted(&m);
            assert_eq!(written, counts.stored_floats, "{name}");
            assert_eq!(m.num_parameters(), counts.parameters, "{name}");
            read += 1;
        }
        assert!(read >= 1, "no readable net in {}", dir.display());
    }

    #[test]
    fn count_matches_the_floats_written() {
        let m = ModelFile::load(g170_path()).expect("g170 loads");
        let (written, counts) = floats_written_and_counted(&m);
        assert_eq!(written, counts.stored_floats);
        assert_eq!(counts.parameters, 1_027_911);
        // The rest of the floats are batch-norm statistics (mean and
        // variance): each of g170's 6 blocks normalises 192 channels (96 +
        // 96, or 96 + 64 + 32 with global pooling), the trunk tip 96 and
        // the heads' three norms 32 each.
        assert_eq!(written - counts.parameters, 2 * (6 * 192 + 96 + 3 * 32));
        for version in MIN_MODEL_VERSION..=MAX_MODEL_VERSION {
            let m = super::super::testnet::synthetic(version, Activation::Mish, 7);
            let (written, counts) = floats_written_and_counted(&m);
            assert_eq!(written, counts.stored_floats, "v{version}");
            assert_eq!(m.num_parameters(), counts.parameters, "v{version}");
        }
    }

    #[test]
    fn the_shared_transformer_nets_read_and_write_back() {
        for f in [
            "models/b7c96h3tfrs-test5-cnorm.bin.gz",
            "models/b7c96h6kv3qk32v16tflrs-fson-bnh.bin.gz",
        ] {
            let m = ModelFile::load(shared(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
            assert_eq!(m.version, 17, "{f}");
            assert!(m.trunk.blocks.iter().any(Block::has_transformer), "{f}");
            let again =
                ModelFile::from_bytes(&m.to_bytes(), Path::new("again.bin")).expect("reads");
            assert_eq!(again, m, "{f}");
        }
    }

    #[test]
    fn gzip_output_is_capped() {
        let mut enc = GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(&vec![0u8; 100_000]).expect("gzip");
        let packed = enc.finish().expect("gzip");
        assert_eq!(
            gunzip_capped(&packed, 100_000).expect("fits").len(),
            100_000
        );
        let err = gunzip_capped(&packed, 99_999).expect_err("over the cap");
        assert!(err.to_string().contains("99999"), "{err}");
    }

    #[test]
    fn truncated_gzip_is_an_error() {
        let raw = std::fs::read(g170_path()).expect("read");
        let p = tmp_path("truncated.bin.gz");
        std::fs::write(&p, &raw[..raw.len() / 2]).expect("write");
        let err = ModelFile::load(&p).expect_err("truncated");
        assert!(matches!(err, ModelFileError::Gzip { .. }), "{err}");
        assert!(err.to_string().contains("truncated.bin.gz"));
        let _ = std::fs::remove_file(p);
    }

    #[test]
    fn truncated_content_is_an_error() {
        let m = ModelFile::load(g170_path()).expect("g170 loads");
        let bytes = m.to_bytes();
        for cut in [10, 200, bytes.len() / 3, bytes.len() - 3] {
            let err = ModelFile::from_bytes(&bytes[..cut], Path::new("cut.bin"))
                .expect_err("truncated content");
            assert!(matches!(err, ModelFileError::Format { .. }), "{err}");
            assert!(err.to_string().contains("cut.bin"), "{err}");
        }
    }

    #[test]
    fn garbage_and_wrong_versions_are_errors() {
        let not_model = ModelFile::from_bytes(b"\x00\x01binary junk", Path::new("x.bin"));
        assert!(matches!(not_model, Err(ModelFileError::Format { .. })));
        let text = ModelFile::from_bytes(b"hello world this is text", Path::new("x.bin"));
        assert!(matches!(text, Err(ModelFileError::Format { .. })));
        for v in [0, 2, 18, -1] {
            let content = format!("name {v} 22 19 trunk");
            let err = ModelFile::from_bytes(content.as_bytes(), Path::new("x.bin"))
                .expect_err("bad version");
            assert!(
                matches!(err, ModelFileError::UnsupportedVersion { version, .. } if version == v),
                "{err}"
            );
        }
        let missing = ModelFile::load(tmp_path("does-not-exist.bin.gz"));
        assert!(matches!(missing, Err(ModelFileError::Io { .. })));
    }

    #[test]
    fn nan_weight_is_an_error() {
        let m = ModelFile::load(g170_path()).expect("g170 loads");
        let mut bytes = m.to_bytes();
        // The first weight block follows the first "@BIN@".
        let at = bytes
            .windows(5)
            .position(|w| w == b"@BIN@")
            .expect("binary block");
        bytes[at + 5..at + 9].copy_from_slice(&f32::NAN.to_le_bytes());
        let err = ModelFile::from_bytes(&bytes, Path::new("nan.bin")).expect_err("NaN");
        assert!(err.to_string().contains("NaN"), "{err}");
    }
}

#[cfg(test)]
mod synthetic_tests {
    use super::super::testnet::synthetic;
    use super::*;

    /// Malformed transformer layers are typed errors that name the layer
    /// and what is wrong.
    #[test]
    fn malformed_transformer_layers_are_clear_errors() {
        type Break = fn(&mut AttentionBlock);
        let cases: [(&str, Break); 3] = [
            ("not a multiple of numKVHeads", |a| a.num_kv_heads = 3),
            ("qProj out", |a| a.q_head_dim = 2),
            ("must be even with RoPE", |a| a.q_head_dim = 3),
        ];
        for (want, break_it) in cases {
            let mut m = synthetic(17, Activation::Mish, 3);
            let Some(Block::Attention(a)) = m
                .trunk
                .blocks
                .iter_mut()
                .find(|b| matches!(b, Block::Attention(a) if a.learnable_rope))
            else {
                panic!("the synthetic v17 net has a learned-RoPE attention block");
            };
            break_it(a);
            let err =
                ModelFile::from_bytes(&m.to_bytes(), Path::new("bad.bin")).expect_err("malformed");
            let msg = err.to_string();
            assert!(msg.contains("attn1") && msg.contains(want), "{want}: {msg}");
        }
    }

    /// Files of model versions 3 to 7 that break a rule of their version
    /// are typed errors naming the section and what is wrong.
    #[test]
    fn malformed_old_version_files_are_clear_errors() {
        let load = |m: &ModelFile| {
            ModelFile::from_bytes(&m.to_bytes(), Path::new("old.bin")).expect_err("malformed")
        };
        // A version-3 value head (one score channel) in a version-4 file.
        let mut m = synthetic(3, Activation::Relu, 1);
        m.version = 4;
        let msg = load(&m).to_string();
        assert!(
            msg.contains("value: sv3Mul out (1) != score value outputs (2)"),
            "{msg}"
        );
        // Version 6 reads 13 planes and 12 globals, not version 7's 22 and 16.
        let mut m = synthetic(6, Activation::Relu, 2);
        m.version = 7;
        let msg = load(&m).to_string();
        assert!(
            msg.contains("expected 22 spatial and 16 global inputs for model version 7")
                && msg.contains("file says 13 and 12"),
            "{msg}"
        );
        // A version-8 value head (four score channels) in a version-5 file.
        let mut m = synthetic(5, Activation::Relu, 3);
        let v8 = synthetic(8, Activation::Relu, 3);
        m.value_head.sv3_mul = v8.value_head.sv3_mul;
        m.value_head.sv3_bias = v8.value_head.sv3_bias;
        let msg = load(&m).to_string();
        assert!(
            msg.contains("sv3Mul out (4) != score value outputs (2)"),
            "{msg}"
        );
        // Cut inside a layer: the error names it.
        let bytes = synthetic(5, Activation::Relu, 4).to_bytes();
        let err = ModelFile::from_bytes(&bytes[..bytes.len() / 2], Path::new("cut5.bin"))
            .expect_err("truncated");
        assert!(matches!(err, ModelFileError::Format { .. }), "{err}");
        assert!(err.to_string().contains("cut5.bin"), "{err}");
        // Versions before 3 are refused as KataGo refuses them.
        let err = ModelFile::from_bytes(b"name 2 22 14 trunk", Path::new("v2.bin"))
            .expect_err("version 2");
        assert!(
            matches!(err, ModelFileError::UnsupportedVersion { version: 2, .. }),
            "{err}"
        );
    }

    #[test]
    fn every_supported_version_round_trips() {
        for version in MIN_MODEL_VERSION..=MAX_MODEL_VERSION {
            for act in [Activation::Relu, Activation::Mish] {
                let m = synthetic(version, act, version as u64);
                let bytes = m.to_bytes();
                let again = ModelFile::from_bytes(&bytes, Path::new("synthetic.bin"))
                    .unwrap_or_else(|e| panic!("v{version}: {e}"));
                assert_eq!(m, again, "v{version}");
                assert_eq!(again.to_bytes(), bytes, "v{version}");
            }
        }
    }

    #[test]
    fn nested_blocks_count_parameters_recursively() {
        let m = synthetic(15, Activation::Mish, 1);
        assert_eq!(m.num_blocks(), 3);
        let Block::NestedBottleneck(nbt) = &m.trunk.blocks[2] else {
            panic!("third block should be nested");
        };
        assert_eq!(nbt.blocks.len(), 2);
        let inner: usize = nbt.blocks.iter().map(Block::num_parameters).sum();
        assert!(m.trunk.blocks[2].num_parameters() > inner);
    }
}

fn gzip(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut enc = GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes)?;
    enc.finish()
}
