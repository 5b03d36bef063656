//! Parsing the token stream of a model file into descriptors.

use super::super::desc::*;
use super::ModelFile;

// Reading

/// A parse failure before the path is known.
#[derive(Debug)]
pub(super) enum ParseError {
    Format(String),
    Version(i32, &'static str),
}

impl ParseError {
    pub(super) fn with_path(self, path: &std::path::Path) -> super::ModelFileError {
        match self {
            ParseError::Format(problem) => super::ModelFileError::Format {
                path: path.to_owned(),
                problem,
            },
            ParseError::Version(version, hint) => super::ModelFileError::UnsupportedVersion {
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

pub(super) struct Reader<'a> {
    pub(super) data: &'a [u8],
    pub(super) pos: usize,
    pub(super) text_floats: bool,
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
        // A file that declares more weights than it has bytes left is cut
        // short or lies about its sizes: say so before allocating anything.
        // A text weight takes at least two bytes (digit and separator), a
        // binary one four.
        let remaining = self.data.len().saturating_sub(self.pos);
        let most = if self.text_floats {
            remaining / 2 + 1
        } else {
            remaining / 4
        };
        if n > most {
            return bad(format!(
                "{what}: declares {n} weights but only {remaining} bytes are left in the file \
                 (truncated, or wrong sizes)"
            ));
        }
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
            let end = self.pos.saturating_add(4 * n);
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

/// The number of weights of a layer with these dimensions, refusing sizes
/// whose product does not fit (a corrupt or hostile header).
fn product(name: &str, dims: &[usize]) -> PResult<usize> {
    dims.iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .map_or_else(
            || {
                bad(format!(
                    "{name}: sizes {dims:?} give an impossible number of weights"
                ))
            },
            Ok,
        )
}

fn clip(s: &str) -> String {
    s.chars().take(40).collect()
}

pub(super) fn parse_model(r: &mut Reader) -> PResult<ModelFile> {
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
    let n = product(&name, &[y_size, x_size, in_channels, out_channels])?;
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
    let weights = r.floats(product(&name, &[in_channels, out_channels])?, &name)?;
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
    // The count comes from the file: reserve no more than a real net has.
    let mut blocks = Vec::with_capacity(num_blocks.min(64));
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
