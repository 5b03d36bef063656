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
#[derive(Debug, Clone, PartialEq)]
pub struct ModelFile {
    /// The model's name (first token of the file).
    pub name: String,
    /// Model version (8..=16).
    pub version: i32,
    /// Spatial input planes (22).
    pub num_input_channels: usize,
    /// Global inputs (19).
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
        let data = if raw.starts_with(&[0x1f, 0x8b]) {
            let mut out = Vec::with_capacity(raw.len() * 2);
            GzDecoder::new(&raw[..])
                .read_to_end(&mut out)
                .map_err(|source| ModelFileError::Gzip {
                    path: path.to_owned(),
                    source,
                })?;
            out
        } else {
            raw
        };
        let lower = path.to_string_lossy().to_lowercase();
        let text_floats = lower.ends_with(".txt") || lower.ends_with(".txt.gz");
        let ambiguous = !text_floats && !lower.ends_with(".bin") && !lower.ends_with(".bin.gz");
        match Self::parse(&data, text_floats) {
            Ok(m) => Ok(m),
            // Like KataGo, a file with an unknown extension may be either kind.
            Err(e @ ParseError::Format(_)) if ambiguous => {
                Self::parse(&data, true).map_err(|_| e.with_path(path))
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
            let mut enc = GzEncoder::new(Vec::new(), flate2::Compression::default());
            enc.write_all(&bytes).map_err(io_err)?;
            enc.finish().map_err(io_err)?
        } else {
            bytes
        };
        std::fs::write(path, out).map_err(io_err)
    }

    /// The uncompressed binary-format content of this model, laid out as
    /// KataGo's exporter writes it (one token per line).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer { out: Vec::new() };
        write_model(&mut w, self);
        w.out
    }

    /// Learned parameters, counted as KataGo counts them.
    pub fn num_parameters(&self) -> usize {
        self.trunk.num_parameters()
            + self.policy_head.num_parameters()
            + self.value_head.num_parameters()
    }

    /// Number of blocks at the top level of the trunk.
    pub fn num_blocks(&self) -> usize {
        self.trunk.blocks.len()
    }
}

// ---------------------------------------------------------------------------
// Reading

/// A parse failure before the path is known.
#[derive(Debug)]
enum ParseError {
    Format(String),
    Version(i32, &'static str),
}

impl ParseError {
    fn with_path(self, path: &Path) -> ModelFileError {
        match self {
            ParseError::Format(problem) => ModelFileError::Format {
                path: path.to_owned(),
                problem,
            },
            ParseError::Version(version, hint) => ModelFileError::UnsupportedVersion {
                path: path.to_owned(),
                version,
                hint,
            },
        }
    }
}

type PResult<T> = Result<T, ParseError>;

fn bad<T>(msg: impl Into<String>) -> PResult<T> {
    Err(ParseError::Format(msg.into()))
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    text_floats: bool,
}

impl Reader<'_> {
    fn skip_ws(&mut self) {
        while self.pos < self.data.len() && self.data[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    /// The next whitespace-delimited token; `what` names it in errors.
    fn token(&mut self, what: &str) -> PResult<&str> {
        self.skip_ws();
        let start = self.pos;
        while self.pos < self.data.len() && !self.data[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
        if start == self.pos {
            return bad(format!("file ends where {what} was expected (truncated?)"));
        }
        std::str::from_utf8(&self.data[start..self.pos]).or_else(|_| {
            bad(format!(
                "{what} at byte {start} is not text (not a KataGo model, or a .txt model named .bin?)"
            ))
        })
    }

    fn name(&mut self, what: &str) -> PResult<String> {
        Ok(self.token(what)?.to_owned())
    }

    fn int(&mut self, what: &str) -> PResult<i64> {
        let t = self.token(what)?;
        t.parse::<i64>()
            .or_else(|_| bad(format!("{what}: expected an integer, found {:?}", clip(t))))
    }

    /// A positive size.
    fn size(&mut self, what: &str) -> PResult<usize> {
        let v = self.int(what)?;
        if v <= 0 || v > 1 << 20 {
            return bad(format!("{what}: {v} is not a sensible positive size"));
        }
        Ok(v as usize)
    }

    fn flag(&mut self, what: &str) -> PResult<bool> {
        match self.int(what)? {
            0 => Ok(false),
            1 => Ok(true),
            v => bad(format!("{what}: expected 0 or 1, found {v}")),
        }
    }

    fn zero(&mut self, what: &str) -> PResult<()> {
        match self.int(what)? {
            0 => Ok(()),
            v => bad(format!("{what}: unknown option value {v} (expected 0)")),
        }
    }

    fn real(&mut self, what: &str) -> PResult<f64> {
        let t = self.token(what)?;
        match t.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => bad(format!(
                "{what}: expected a finite number, found {:?}",
                clip(t)
            )),
        }
    }

    /// `n` weights, text or `@BIN@` binary.
    fn floats(&mut self, n: usize, what: &str) -> PResult<Vec<f32>> {
        let mut out = Vec::with_capacity(n);
        if self.text_floats {
            for _ in 0..n {
                let t = self.token(what)?;
                match t.parse::<f32>() {
                    Ok(v) => out.push(v),
                    Err(_) => {
                        return bad(format!("{what}: expected a number, found {:?}", clip(t)))
                    }
                }
            }
        } else {
            // KataGo allows a little whitespace before the marker.
            let start = self.pos;
            while self.pos < self.data.len() && self.data[self.pos] != b'@' {
                if self.pos - start > 100 {
                    return bad(format!(
                        "{what}: no @BIN@ weight block at byte {start} (a .txt model named .bin?)"
                    ));
                }
                self.pos += 1;
            }
            if !self.data[self.pos..].starts_with(b"@BIN@") {
                return bad(format!(
                    "{what}: no @BIN@ weight block at byte {start} (truncated or not a binary model?)"
                ));
            }
            self.pos += 5;
            let end = self.pos + 4 * n;
            if end > self.data.len() {
                return bad(format!(
                    "{what}: file ends inside its {n} weights (truncated)"
                ));
            }
            out.extend(
                self.data[self.pos..end]
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            );
            self.pos = end;
        }
        if let Some(i) = out.iter().position(|v| !v.is_finite()) {
            return bad(format!("{what}: weight {i} is NaN or infinite"));
        }
        Ok(out)
    }
}

fn clip(s: &str) -> String {
    s.chars().take(40).collect()
}

fn parse_model(r: &mut Reader) -> PResult<ModelFile> {
    let name = r.name("model name")?;
    let version_tok = r.token("model version")?.to_owned();
    let Ok(version) = version_tok.parse::<i32>() else {
        return bad(format!(
            "not a KataGo model file: second token {:?} is not a version number",
            clip(&version_tok)
        ));
    };
    if version < MIN_MODEL_VERSION {
        return Err(ParseError::Version(
            version,
            "; older nets from before KataGo's g170 run are not supported",
        ));
    }
    if version > MAX_MODEL_VERSION {
        let hint = if version == 17 {
            "; version 17 (transformer nets) is not implemented"
        } else {
            ""
        };
        return Err(ParseError::Version(version, hint));
    }
    let num_input_channels = r.size("numInputChannels")?;
    let num_input_global_channels = r.size("numInputGlobalChannels")?;
    if num_input_channels != NUM_SPATIAL_FEATURES
        || num_input_global_channels != NUM_GLOBAL_FEATURES
    {
        return bad(format!(
            "{name}: expected {NUM_SPATIAL_FEATURES} spatial and {NUM_GLOBAL_FEATURES} global inputs \
             for model version {version}, file says {num_input_channels} and {num_input_global_channels}"
        ));
    }
    let mut post_process = PostProcessParams::default();
    if version >= 13 {
        let mut read = |what: &str| -> PResult<f64> {
            let v = r.real(what)?;
            if v > 0.0 {
                Ok(v)
            } else {
                bad(format!("{what} must be positive, found {v}"))
            }
        };
        post_process = PostProcessParams {
            td_score_multiplier: read("tdScoreMultiplier")?,
            score_mean_multiplier: read("scoreMeanMultiplier")?,
            score_stdev_multiplier: read("scoreStdevMultiplier")?,
            lead_multiplier: read("leadMultiplier")?,
            variance_time_multiplier: read("varianceTimeMultiplier")?,
            shortterm_value_error_multiplier: read("shorttermValueErrorMultiplier")?,
            shortterm_score_error_multiplier: read("shorttermScoreErrorMultiplier")?,
        };
    }
    let mut meta_encoder_version = 0;
    let mut prefer_pass_alive_under_suicide_rules = false;
    if version >= 15 {
        meta_encoder_version = r.int("metaEncoderVersion")? as i32;
        if !(0..=1).contains(&meta_encoder_version) {
            return bad(format!(
                "metaEncoderVersion {meta_encoder_version} is not implemented (0 or 1 expected)"
            ));
        }
        prefer_pass_alive_under_suicide_rules = r.flag("preferPassAliveUnderSuicideRules")?;
        for opt in ["C", "D", "E", "F", "G", "H"] {
            r.zero(&format!("model option {opt}"))?;
        }
    }
    let trunk = parse_trunk(r, version, meta_encoder_version)?;
    let policy_head = parse_policy_head(r, version)?;
    let value_head = parse_value_head(r, version)?;
    r.skip_ws();
    if r.pos != r.data.len() {
        return bad(format!(
            "{} unexpected bytes after the value head (byte {})",
            r.data.len() - r.pos,
            r.pos
        ));
    }
    let check = |ok: bool, msg: String| if ok { Ok(()) } else { bad(msg) };
    check(
        trunk.initial_conv.in_channels == num_input_channels,
        format!(
            "numInputChannels ({num_input_channels}) != {} in channels ({})",
            trunk.initial_conv.name, trunk.initial_conv.in_channels
        ),
    )?;
    check(
        trunk.initial_matmul.in_channels == num_input_global_channels,
        format!(
            "numInputGlobalChannels ({num_input_global_channels}) != {} in channels ({})",
            trunk.initial_matmul.name, trunk.initial_matmul.in_channels
        ),
    )?;
    let c = trunk.trunk_num_channels;
    for (conv, head) in [
        (&policy_head.p1_conv, "policy"),
        (&policy_head.g1_conv, "policy"),
        (&value_head.v1_conv, "value"),
    ] {
        check(
            conv.in_channels == c,
            format!(
                "{head} head conv {} takes {} channels, trunk has {c}",
                conv.name, conv.in_channels
            ),
        )?;
    }
    Ok(ModelFile {
        name,
        version,
        num_input_channels,
        num_input_global_channels,
        post_process,
        prefer_pass_alive_under_suicide_rules,
        trunk,
        policy_head,
        value_head,
    })
}

fn parse_conv(r: &mut Reader) -> PResult<ConvLayer> {
    let name = r.name("conv layer name")?;
    let y_size = r.size(&format!("{name}: kernel height"))?;
    let x_size = r.size(&format!("{name}: kernel width"))?;
    let in_channels = r.size(&format!("{name}: in channels"))?;
    let out_channels = r.size(&format!("{name}: out channels"))?;
    let dilation_y = r.size(&format!("{name}: dilation y"))?;
    let dilation_x = r.size(&format!("{name}: dilation x"))?;
    if y_size % 2 != 1 || x_size % 2 != 1 {
        return bad(format!(
            "{name}: kernel sizes must be odd, found {y_size}x{x_size}"
        ));
    }
    let n = y_size * x_size * in_channels * out_channels;
    let file_order = r.floats(n, &name)?;
    // File order is [y][x][in][out]; torch wants [out][in][y][x].
    let mut weights = vec![0.0f32; n];
    let mut idx = 0;
    for y in 0..y_size {
        for x in 0..x_size {
            for ic in 0..in_channels {
                for oc in 0..out_channels {
                    weights[((oc * in_channels + ic) * y_size + y) * x_size + x] = file_order[idx];
                    idx += 1;
                }
            }
        }
    }
    Ok(ConvLayer {
        name,
        y_size,
        x_size,
        in_channels,
        out_channels,
        dilation_y,
        dilation_x,
        weights,
    })
}

fn parse_bn(r: &mut Reader) -> PResult<BatchNormLayer> {
    let name = r.name("batch norm layer name")?;
    let num_channels = r.size(&format!("{name}: channels"))?;
    let epsilon = r.real(&format!("{name}: epsilon"))? as f32;
    if epsilon.is_nan() || epsilon <= 0.0 {
        return bad(format!("{name}: epsilon {epsilon} is not positive"));
    }
    let has_scale = r.flag(&format!("{name}: hasScale"))?;
    let has_bias = r.flag(&format!("{name}: hasBias"))?;
    let mean = r.floats(num_channels, &format!("{name} (mean)"))?;
    let variance = r.floats(num_channels, &format!("{name} (variance)"))?;
    let scale = if has_scale {
        r.floats(num_channels, &format!("{name} (scale)"))?
    } else {
        vec![1.0; num_channels]
    };
    let bias = if has_bias {
        r.floats(num_channels, &format!("{name} (bias)"))?
    } else {
        vec![0.0; num_channels]
    };
    Ok(BatchNormLayer {
        name,
        num_channels,
        epsilon,
        has_scale,
        has_bias,
        mean,
        variance,
        scale,
        bias,
    })
}

fn parse_act(r: &mut Reader, version: i32) -> PResult<ActivationLayer> {
    let name = r.name("activation layer name")?;
    let activation = if version >= 11 {
        let kind = r.token(&format!("{name}: activation kind"))?;
        match Activation::from_file_name(kind) {
            Some(a) => a,
            None => return bad(format!("{name}: unknown activation {:?}", clip(kind))),
        }
    } else {
        Activation::Relu
    };
    Ok(ActivationLayer { name, activation })
}

fn parse_matmul(r: &mut Reader) -> PResult<MatMulLayer> {
    let name = r.name("matmul layer name")?;
    let in_channels = r.size(&format!("{name}: in channels"))?;
    let out_channels = r.size(&format!("{name}: out channels"))?;
    let weights = r.floats(in_channels * out_channels, &name)?;
    Ok(MatMulLayer {
        name,
        in_channels,
        out_channels,
        weights,
    })
}

fn parse_matbias(r: &mut Reader) -> PResult<MatBiasLayer> {
    let name = r.name("matbias layer name")?;
    let n = r.size(&format!("{name}: channels"))?;
    let weights = r.floats(n, &name)?;
    Ok(MatBiasLayer { name, weights })
}

/// Checks a shape relation and names the block and the two quantities.
fn expect_eq(block: &str, what_a: &str, a: usize, what_b: &str, b: usize) -> PResult<()> {
    if a == b {
        Ok(())
    } else {
        bad(format!("{block}: {what_a} ({a}) != {what_b} ({b})"))
    }
}

fn parse_block_stack(
    r: &mut Reader,
    version: i32,
    owner: &str,
    num_blocks: usize,
    channels: usize,
    depth: usize,
) -> PResult<Vec<Block>> {
    if depth > 8 {
        return bad(format!(
            "{owner}: nested bottleneck blocks nested too deeply"
        ));
    }
    let mut blocks = Vec::with_capacity(num_blocks);
    for _ in 0..num_blocks {
        let kind = r.token(&format!("{owner}: block kind"))?.to_owned();
        let block = match kind.as_str() {
            "ordinary_block" => {
                let name = r.name("block name")?;
                let pre_bn = parse_bn(r)?;
                let pre_activation = parse_act(r, version)?;
                let regular_conv = parse_conv(r)?;
                let mid_bn = parse_bn(r)?;
                let mid_activation = parse_act(r, version)?;
                let final_conv = parse_conv(r)?;
                expect_eq(
                    &name,
                    "preBN channels",
                    pre_bn.num_channels,
                    "trunk channels",
                    channels,
                )?;
                expect_eq(
                    &name,
                    "regularConv in",
                    regular_conv.in_channels,
                    "channels",
                    channels,
                )?;
                expect_eq(
                    &name,
                    "midBN channels",
                    mid_bn.num_channels,
                    "regularConv out",
                    regular_conv.out_channels,
                )?;
                expect_eq(
                    &name,
                    "finalConv in",
                    final_conv.in_channels,
                    "midBN channels",
                    mid_bn.num_channels,
                )?;
                expect_eq(
                    &name,
                    "finalConv out",
                    final_conv.out_channels,
                    "channels",
                    channels,
                )?;
                Block::Ordinary(ResidualBlock {
                    name,
                    pre_bn,
                    pre_activation,
                    regular_conv,
                    mid_bn,
                    mid_activation,
                    final_conv,
                })
            }
            "gpool_block" => {
                let name = r.name("block name")?;
                let pre_bn = parse_bn(r)?;
                let pre_activation = parse_act(r, version)?;
                let regular_conv = parse_conv(r)?;
                let gpool_conv = parse_conv(r)?;
                let gpool_bn = parse_bn(r)?;
                let gpool_activation = parse_act(r, version)?;
                let gpool_to_bias_mul = parse_matmul(r)?;
                let mid_bn = parse_bn(r)?;
                let mid_activation = parse_act(r, version)?;
                let final_conv = parse_conv(r)?;
                expect_eq(
                    &name,
                    "preBN channels",
                    pre_bn.num_channels,
                    "channels",
                    channels,
                )?;
                expect_eq(
                    &name,
                    "regularConv in",
                    regular_conv.in_channels,
                    "channels",
                    channels,
                )?;
                expect_eq(
                    &name,
                    "gpoolConv in",
                    gpool_conv.in_channels,
                    "channels",
                    channels,
                )?;
                expect_eq(
                    &name,
                    "gpoolBN channels",
                    gpool_bn.num_channels,
                    "gpoolConv out",
                    gpool_conv.out_channels,
                )?;
                expect_eq(
                    &name,
                    "gpoolToBiasMul in",
                    gpool_to_bias_mul.in_channels,
                    "3 * gpoolBN channels",
                    3 * gpool_bn.num_channels,
                )?;
                expect_eq(
                    &name,
                    "midBN channels",
                    mid_bn.num_channels,
                    "regularConv out",
                    regular_conv.out_channels,
                )?;
                expect_eq(
                    &name,
                    "gpoolToBiasMul out",
                    gpool_to_bias_mul.out_channels,
                    "midBN channels",
                    mid_bn.num_channels,
                )?;
                expect_eq(
                    &name,
                    "finalConv in",
                    final_conv.in_channels,
                    "midBN channels",
                    mid_bn.num_channels,
                )?;
                expect_eq(
                    &name,
                    "finalConv out",
                    final_conv.out_channels,
                    "channels",
                    channels,
                )?;
                Block::GlobalPooling(Box::new(GlobalPoolingBlock {
                    name,
                    pre_bn,
                    pre_activation,
                    regular_conv,
                    gpool_conv,
                    gpool_bn,
                    gpool_activation,
                    gpool_to_bias_mul,
                    mid_bn,
                    mid_activation,
                    final_conv,
                }))
            }
            "nested_bottleneck_block" => {
                let name = r.name("block name")?;
                let inner = r.size(&format!("{name}: number of inner blocks"))?;
                let pre_bn = parse_bn(r)?;
                let pre_activation = parse_act(r, version)?;
                let pre_conv = parse_conv(r)?;
                let blocks =
                    parse_block_stack(r, version, &name, inner, pre_conv.out_channels, depth + 1)?;
                let post_bn = parse_bn(r)?;
                let post_activation = parse_act(r, version)?;
                let post_conv = parse_conv(r)?;
                expect_eq(
                    &name,
                    "preBN channels",
                    pre_bn.num_channels,
                    "channels",
                    channels,
                )?;
                expect_eq(
                    &name,
                    "preConv in",
                    pre_conv.in_channels,
                    "channels",
                    channels,
                )?;
                expect_eq(
                    &name,
                    "postBN channels",
                    post_bn.num_channels,
                    "preConv out",
                    pre_conv.out_channels,
                )?;
                expect_eq(
                    &name,
                    "postConv in",
                    post_conv.in_channels,
                    "postBN channels",
                    post_bn.num_channels,
                )?;
                expect_eq(
                    &name,
                    "postConv out",
                    post_conv.out_channels,
                    "channels",
                    channels,
                )?;
                Block::NestedBottleneck(NestedBottleneckBlock {
                    name,
                    pre_bn,
                    pre_activation,
                    pre_conv,
                    blocks,
                    post_bn,
                    post_activation,
                    post_conv,
                })
            }
            "transformer_attention_block" | "transformer_ffn_block" => {
                return bad(format!(
                    "{owner}: {kind} (transformer nets) is not supported by this engine"
                ))
            }
            other => return bad(format!("{owner}: unknown block kind {:?}", clip(other))),
        };
        blocks.push(block);
    }
    Ok(blocks)
}

fn parse_trunk(r: &mut Reader, version: i32, meta_encoder_version: i32) -> PResult<Trunk> {
    let name = r.name("trunk name")?;
    let num_blocks = r.size(&format!("{name}: number of blocks"))?;
    let trunk_num_channels = r.size(&format!("{name}: trunk channels"))?;
    let mid_num_channels = r.size(&format!("{name}: mid channels"))?;
    let regular_num_channels = r.size(&format!("{name}: regular channels"))?;
    let dilated_num_channels = r.size(&format!("{name}: dilated channels"))?;
    let gpool_num_channels = r.size(&format!("{name}: gpool channels"))?;
    if version >= 15 {
        match r.int(&format!("{name}: trunk norm kind"))? {
            0 => {}
            1 => {
                return bad(format!(
                    "{name}: RMSNorm trunk tip is not supported by this engine"
                ))
            }
            k => return bad(format!("{name}: unknown trunk norm kind {k}")),
        }
        for opt in ["B", "C", "D", "E", "F"] {
            r.zero(&format!("{name}: trunk option {opt}"))?;
        }
    }
    let initial_conv = parse_conv(r)?;
    expect_eq(
        &name,
        "initial conv out",
        initial_conv.out_channels,
        "trunk channels",
        trunk_num_channels,
    )?;
    let initial_matmul = parse_matmul(r)?;
    expect_eq(
        &name,
        "initial matmul out",
        initial_matmul.out_channels,
        "trunk channels",
        trunk_num_channels,
    )?;
    let metadata_encoder = if meta_encoder_version > 0 {
        let enc_name = r.name("metadata encoder name")?;
        let num_input_channels = r.size(&format!("{enc_name}: input channels"))?;
        expect_eq(
            &enc_name,
            "input channels",
            num_input_channels,
            "expected for version 1",
            192,
        )?;
        let mul1 = parse_matmul(r)?;
        let bias1 = parse_matbias(r)?;
        let act1 = parse_act(r, version)?;
        let mul2 = parse_matmul(r)?;
        let bias2 = parse_matbias(r)?;
        let act2 = parse_act(r, version)?;
        let mul3 = parse_matmul(r)?;
        expect_eq(
            &enc_name,
            "mul1 in",
            mul1.in_channels,
            "input channels",
            num_input_channels,
        )?;
        expect_eq(
            &enc_name,
            "bias1",
            bias1.weights.len(),
            "mul1 out",
            mul1.out_channels,
        )?;
        expect_eq(
            &enc_name,
            "mul2 in",
            mul2.in_channels,
            "mul1 out",
            mul1.out_channels,
        )?;
        expect_eq(
            &enc_name,
            "bias2",
            bias2.weights.len(),
            "mul2 out",
            mul2.out_channels,
        )?;
        expect_eq(
            &enc_name,
            "mul3 in",
            mul3.in_channels,
            "mul2 out",
            mul2.out_channels,
        )?;
        expect_eq(
            &enc_name,
            "mul3 out",
            mul3.out_channels,
            "trunk channels",
            trunk_num_channels,
        )?;
        Some(MetadataEncoder {
            name: enc_name,
            version: meta_encoder_version,
            num_input_channels,
            mul1,
            bias1,
            act1,
            mul2,
            bias2,
            act2,
            mul3,
        })
    } else {
        None
    };
    let blocks = parse_block_stack(r, version, &name, num_blocks, trunk_num_channels, 0)?;
    let tip_bn = parse_bn(r)?;
    expect_eq(
        &name,
        "tip BN channels",
        tip_bn.num_channels,
        "trunk channels",
        trunk_num_channels,
    )?;
    let tip_activation = parse_act(r, version)?;
    Ok(Trunk {
        name,
        trunk_num_channels,
        mid_num_channels,
        regular_num_channels,
        dilated_num_channels,
        gpool_num_channels,
        initial_conv,
        initial_matmul,
        metadata_encoder,
        blocks,
        tip_bn,
        tip_activation,
    })
}

fn parse_policy_head(r: &mut Reader, version: i32) -> PResult<PolicyHead> {
    let name = r.name("policy head name")?;
    let policy_out_channels = match version {
        16 => 4,
        12..=15 => 2,
        _ => 1,
    };
    let p1_conv = parse_conv(r)?;
    let g1_conv = parse_conv(r)?;
    let g1_bn = parse_bn(r)?;
    let g1_activation = parse_act(r, version)?;
    let gpool_to_bias_mul = parse_matmul(r)?;
    let p1_bn = parse_bn(r)?;
    let p1_activation = parse_act(r, version)?;
    let p2_conv = parse_conv(r)?;
    let gpool_to_pass_mul = parse_matmul(r)?;
    let pass_mlp = if version >= 15 {
        Some((parse_matbias(r)?, parse_act(r, version)?, parse_matmul(r)?))
    } else {
        None
    };
    let n = &name;
    expect_eq(
        n,
        "p1BN channels",
        p1_bn.num_channels,
        "p1Conv out",
        p1_conv.out_channels,
    )?;
    expect_eq(
        n,
        "g1BN channels",
        g1_bn.num_channels,
        "g1Conv out",
        g1_conv.out_channels,
    )?;
    expect_eq(
        n,
        "gpoolToBiasMul in",
        gpool_to_bias_mul.in_channels,
        "3 * g1BN channels",
        3 * g1_bn.num_channels,
    )?;
    expect_eq(
        n,
        "gpoolToBiasMul out",
        gpool_to_bias_mul.out_channels,
        "p1BN channels",
        p1_bn.num_channels,
    )?;
    expect_eq(
        n,
        "p2Conv in",
        p2_conv.in_channels,
        "p1BN channels",
        p1_bn.num_channels,
    )?;
    expect_eq(
        n,
        "p2Conv out",
        p2_conv.out_channels,
        "policy channels",
        policy_out_channels,
    )?;
    expect_eq(
        n,
        "gpoolToPassMul in",
        gpool_to_pass_mul.in_channels,
        "3 * g1BN channels",
        3 * g1_bn.num_channels,
    )?;
    match &pass_mlp {
        Some((bias, _, mul2)) => {
            expect_eq(
                n,
                "gpoolToPassBias",
                bias.weights.len(),
                "gpoolToPassMul out",
                gpool_to_pass_mul.out_channels,
            )?;
            expect_eq(
                n,
                "gpoolToPassMul2 in",
                mul2.in_channels,
                "gpoolToPassMul out",
                gpool_to_pass_mul.out_channels,
            )?;
            expect_eq(
                n,
                "gpoolToPassMul2 out",
                mul2.out_channels,
                "policy channels",
                policy_out_channels,
            )?;
        }
        None => expect_eq(
            n,
            "gpoolToPassMul out",
            gpool_to_pass_mul.out_channels,
            "policy channels",
            policy_out_channels,
        )?,
    }
    Ok(PolicyHead {
        name,
        policy_out_channels,
        p1_conv,
        g1_conv,
        g1_bn,
        g1_activation,
        gpool_to_bias_mul,
        p1_bn,
        p1_activation,
        p2_conv,
        gpool_to_pass_mul,
        pass_mlp,
    })
}

fn parse_value_head(r: &mut Reader, version: i32) -> PResult<ValueHead> {
    let name = r.name("value head name")?;
    let v1_conv = parse_conv(r)?;
    let v1_bn = parse_bn(r)?;
    let v1_activation = parse_act(r, version)?;
    let v2_mul = parse_matmul(r)?;
    let v2_bias = parse_matbias(r)?;
    let v2_activation = parse_act(r, version)?;
    let v3_mul = parse_matmul(r)?;
    let v3_bias = parse_matbias(r)?;
    let sv3_mul = parse_matmul(r)?;
    let sv3_bias = parse_matbias(r)?;
    let ownership_conv = parse_conv(r)?;
    let n = &name;
    let score_channels = if version >= 9 { 6 } else { 4 };
    expect_eq(
        n,
        "v1BN channels",
        v1_bn.num_channels,
        "v1Conv out",
        v1_conv.out_channels,
    )?;
    expect_eq(
        n,
        "v2Mul in",
        v2_mul.in_channels,
        "3 * v1BN channels",
        3 * v1_bn.num_channels,
    )?;
    expect_eq(
        n,
        "v2Bias",
        v2_bias.weights.len(),
        "v2Mul out",
        v2_mul.out_channels,
    )?;
    expect_eq(
        n,
        "v3Mul in",
        v3_mul.in_channels,
        "v2Mul out",
        v2_mul.out_channels,
    )?;
    expect_eq(n, "v3Mul out", v3_mul.out_channels, "value outputs", 3)?;
    expect_eq(n, "v3Bias", v3_bias.weights.len(), "value outputs", 3)?;
    expect_eq(
        n,
        "sv3Mul in",
        sv3_mul.in_channels,
        "v2Mul out",
        v2_mul.out_channels,
    )?;
    expect_eq(
        n,
        "sv3Mul out",
        sv3_mul.out_channels,
        "score value outputs",
        score_channels,
    )?;
    expect_eq(
        n,
        "sv3Bias",
        sv3_bias.weights.len(),
        "score value outputs",
        score_channels,
    )?;
    expect_eq(
        n,
        "ownership conv in",
        ownership_conv.in_channels,
        "v1Conv out",
        v1_conv.out_channels,
    )?;
    expect_eq(
        n,
        "ownership conv out",
        ownership_conv.out_channels,
        "ownership outputs",
        1,
    )?;
    Ok(ValueHead {
        name,
        v1_conv,
        v1_bn,
        v1_activation,
        v2_mul,
        v2_bias,
        v2_activation,
        v3_mul,
        v3_bias,
        sv3_mul,
        sv3_bias,
        ownership_conv,
    })
}

// ---------------------------------------------------------------------------
// Writing

struct Writer {
    out: Vec<u8>,
}

impl Writer {
    fn line(&mut self, s: impl std::fmt::Display) {
        // Writing into a Vec cannot fail.
        let _ = writeln!(self.out, "{s}");
    }

    fn floats(&mut self, v: &[f32]) {
        self.out.extend_from_slice(b"@BIN@");
        for x in v {
            self.out.extend_from_slice(&x.to_le_bytes());
        }
        self.out.push(b'\n');
    }

    fn conv(&mut self, c: &ConvLayer) {
        self.line(&c.name);
        self.line(c.y_size);
        self.line(c.x_size);
        self.line(c.in_channels);
        self.line(c.out_channels);
        self.line(c.dilation_y);
        self.line(c.dilation_x);
        let mut file_order = Vec::with_capacity(c.weights.len());
        for y in 0..c.y_size {
            for x in 0..c.x_size {
                for ic in 0..c.in_channels {
                    for oc in 0..c.out_channels {
                        file_order.push(
                            c.weights[((oc * c.in_channels + ic) * c.y_size + y) * c.x_size + x],
                        );
                    }
                }
            }
        }
        self.floats(&file_order);
    }

    fn bn(&mut self, b: &BatchNormLayer) {
        self.line(&b.name);
        self.line(b.num_channels);
        // `{:e}` prints the shortest text that reads back to the same f32.
        self.line(format!("{:e}", b.epsilon));
        self.line(u8::from(b.has_scale));
        self.line(u8::from(b.has_bias));
        self.floats(&b.mean);
        self.floats(&b.variance);
        if b.has_scale {
            self.floats(&b.scale);
        }
        if b.has_bias {
            self.floats(&b.bias);
        }
    }

    fn act(&mut self, a: &ActivationLayer, version: i32) {
        self.line(&a.name);
        if version >= 11 {
            self.line(a.activation.file_name());
        }
    }

    fn matmul(&mut self, m: &MatMulLayer) {
        self.line(&m.name);
        self.line(m.in_channels);
        self.line(m.out_channels);
        self.floats(&m.weights);
    }

    fn matbias(&mut self, m: &MatBiasLayer) {
        self.line(&m.name);
        self.line(m.weights.len());
        self.floats(&m.weights);
    }

    fn blocks(&mut self, blocks: &[Block], version: i32) {
        for block in blocks {
            self.line(block.kind_keyword());
            self.line(block.name());
            match block {
                Block::Ordinary(b) => {
                    self.bn(&b.pre_bn);
                    self.act(&b.pre_activation, version);
                    self.conv(&b.regular_conv);
                    self.bn(&b.mid_bn);
                    self.act(&b.mid_activation, version);
                    self.conv(&b.final_conv);
                }
                Block::GlobalPooling(b) => {
                    self.bn(&b.pre_bn);
                    self.act(&b.pre_activation, version);
                    self.conv(&b.regular_conv);
                    self.conv(&b.gpool_conv);
                    self.bn(&b.gpool_bn);
                    self.act(&b.gpool_activation, version);
                    self.matmul(&b.gpool_to_bias_mul);
                    self.bn(&b.mid_bn);
                    self.act(&b.mid_activation, version);
                    self.conv(&b.final_conv);
                }
                Block::NestedBottleneck(b) => {
                    self.line(b.blocks.len());
                    self.bn(&b.pre_bn);
                    self.act(&b.pre_activation, version);
                    self.conv(&b.pre_conv);
                    self.blocks(&b.blocks, version);
                    self.bn(&b.post_bn);
                    self.act(&b.post_activation, version);
                    self.conv(&b.post_conv);
                }
            }
        }
    }
}

fn write_model(w: &mut Writer, m: &ModelFile) {
    let v = m.version;
    w.line(&m.name);
    w.line(v);
    w.line(m.num_input_channels);
    w.line(m.num_input_global_channels);
    if v >= 13 {
        let p = &m.post_process;
        for x in [
            p.td_score_multiplier,
            p.score_mean_multiplier,
            p.score_stdev_multiplier,
            p.lead_multiplier,
            p.variance_time_multiplier,
            p.shortterm_value_error_multiplier,
            p.shortterm_score_error_multiplier,
        ] {
            w.line(format!("{x:?}"));
        }
    }
    if v >= 15 {
        w.line(m.trunk.metadata_encoder.as_ref().map_or(0, |e| e.version));
        w.line(u8::from(m.prefer_pass_alive_under_suicide_rules));
        for _ in 0..6 {
            w.line(0);
        }
    }
    let t = &m.trunk;
    w.line(&t.name);
    w.line(t.blocks.len());
    w.line(t.trunk_num_channels);
    w.line(t.mid_num_channels);
    w.line(t.regular_num_channels);
    w.line(t.dilated_num_channels);
    w.line(t.gpool_num_channels);
    if v >= 15 {
        // Trunk norm kind (standard batch norm) and five unused options.
        for _ in 0..6 {
            w.line(0);
        }
    }
    w.conv(&t.initial_conv);
    w.matmul(&t.initial_matmul);
    if let Some(e) = &t.metadata_encoder {
        w.line(&e.name);
        w.line(e.num_input_channels);
        w.matmul(&e.mul1);
        w.matbias(&e.bias1);
        w.act(&e.act1, v);
        w.matmul(&e.mul2);
        w.matbias(&e.bias2);
        w.act(&e.act2, v);
        w.matmul(&e.mul3);
    }
    w.blocks(&t.blocks, v);
    w.bn(&t.tip_bn);
    w.act(&t.tip_activation, v);

    let p = &m.policy_head;
    w.line(&p.name);
    w.conv(&p.p1_conv);
    w.conv(&p.g1_conv);
    w.bn(&p.g1_bn);
    w.act(&p.g1_activation, v);
    w.matmul(&p.gpool_to_bias_mul);
    w.bn(&p.p1_bn);
    w.act(&p.p1_activation, v);
    w.conv(&p.p2_conv);
    w.matmul(&p.gpool_to_pass_mul);
    if let Some((bias, act, mul2)) = &p.pass_mlp {
        w.matbias(bias);
        w.act(act, v);
        w.matmul(mul2);
    }

    let h = &m.value_head;
    w.line(&h.name);
    w.conv(&h.v1_conv);
    w.bn(&h.v1_bn);
    w.act(&h.v1_activation, v);
    w.matmul(&h.v2_mul);
    w.matbias(&h.v2_bias);
    w.act(&h.v2_activation, v);
    w.matmul(&h.v3_mul);
    w.matbias(&h.v3_bias);
    w.matmul(&h.sv3_mul);
    w.matbias(&h.sv3_bias);
    w.conv(&h.ownership_conv);
}

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

    #[test]
    fn newer_shared_nets_give_a_clear_version_error() {
        for f in [
            "models/b7c96h3tfrs-test5-cnorm.bin.gz",
            "models/b7c96h6kv3qk32v16tflrs-fson-bnh.bin.gz",
        ] {
            let err = ModelFile::load(shared(f)).expect_err("v17 is not supported");
            let msg = err.to_string();
            assert!(
                matches!(err, ModelFileError::UnsupportedVersion { version: 17, .. }),
                "{msg}"
            );
            assert!(msg.contains(f.trim_start_matches("models/")), "{msg}");
        }
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
        for v in [3, 7, 18, -1] {
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
