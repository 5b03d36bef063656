//! Parsing the token stream of a model file into descriptors.

use super::super::desc::*;
use super::walk::{exclusive, Exclusive, ModelVisitor, Ref};
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

    fn text(&mut self, what: &str) -> PResult<String> {
        Ok(self.token(what)?.to_owned())
    }

    fn int(&mut self, what: &str) -> PResult<i64> {
        let t = self.token(what)?;
        t.parse::<i64>()
            .or_else(|_| bad(format!("{what}: expected an integer, found {:?}", clip(t))))
    }

    /// A positive size.
    fn positive(&mut self, what: &str) -> PResult<usize> {
        let v = self.int(what)?;
        if v <= 0 || v > 1 << 20 {
            return bad(format!("{what}: {v} is not a sensible positive size"));
        }
        Ok(v as usize)
    }

    fn bit(&mut self, what: &str) -> PResult<bool> {
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

fn parse_conv(r: &mut Reader) -> PResult<ConvLayer> {
    let name = r.text("conv layer name")?;
    let y_size = r.positive(&format!("{name}: kernel height"))?;
    let x_size = r.positive(&format!("{name}: kernel width"))?;
    let in_channels = r.positive(&format!("{name}: in channels"))?;
    let out_channels = r.positive(&format!("{name}: out channels"))?;
    let dilation_y = r.positive(&format!("{name}: dilation y"))?;
    let dilation_x = r.positive(&format!("{name}: dilation x"))?;
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
    let shape = [out_channels, in_channels, y_size, x_size];
    Ok(ConvLayer {
        dilation_y,
        dilation_x,
        ..ConvLayer::new(name, shape, weights)
    })
}

fn parse_bn(r: &mut Reader) -> PResult<BatchNormLayer> {
    let name = r.text("batch norm layer name")?;
    let num_channels = r.positive(&format!("{name}: channels"))?;
    let epsilon = r.real(&format!("{name}: epsilon"))? as f32;
    if epsilon.is_nan() || epsilon <= 0.0 {
        return bad(format!("{name}: epsilon {epsilon} is not positive"));
    }
    let has_scale = r.bit(&format!("{name}: hasScale"))?;
    let has_bias = r.bit(&format!("{name}: hasBias"))?;
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

/// The channels and epsilon of an RMSNorm (KataGo's bounds: epsilon in
/// (0, 1]).
fn parse_norm_header(r: &mut Reader, name: &str) -> PResult<(usize, f32)> {
    let num_channels = r.positive(&format!("{name}: channels"))?;
    let epsilon = r.real(&format!("{name}: epsilon"))?;
    if !(epsilon > 0.0 && epsilon <= 1.0) {
        return bad(format!("{name}: epsilon {epsilon} is not in (0, 1]"));
    }
    Ok((num_channels, epsilon as f32))
}

fn parse_act(r: &mut Reader, version: i32) -> PResult<ActivationLayer> {
    let name = r.text("activation layer name")?;
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
    let name = r.text("matmul layer name")?;
    let in_channels = r.positive(&format!("{name}: in channels"))?;
    let out_channels = r.positive(&format!("{name}: out channels"))?;
    let weights = r.floats(product(&name, &[in_channels, out_channels])?, &name)?;
    Ok(MatMulLayer {
        name,
        in_channels,
        out_channels,
        weights,
    })
}

fn parse_matbias(r: &mut Reader) -> PResult<MatBiasLayer> {
    let name = r.text("matbias layer name")?;
    let n = r.positive(&format!("{name}: channels"))?;
    let weights = r.floats(n, &name)?;
    Ok(MatBiasLayer { name, weights })
}

/// Reads a whole model: the walk fills a placeholder model in file order,
/// then nothing may follow the value head.
pub(super) fn parse_model(r: &mut Reader) -> PResult<ModelFile> {
    let mut m = ModelFile::default();
    exclusive::walk(r, &mut m)?;
    r.skip_ws();
    if r.pos != r.data.len() {
        return bad(format!(
            "{} unexpected bytes after the value head (byte {})",
            r.data.len() - r.pos,
            r.pos
        ));
    }
    Ok(m)
}

/// The reading visitor: every step takes its tokens from the file and
/// overwrites the placeholder it is given.
impl ModelVisitor for Reader<'_> {
    type Access = Exclusive;
    type Error = ParseError;

    fn version(&mut self, version: &mut i32) -> PResult<()> {
        let tok = self.token("model version")?;
        let Ok(v) = tok.parse::<i32>() else {
            return bad(format!(
                "not a KataGo model file: second token {:?} is not a version number",
                clip(tok)
            ));
        };
        if v < MIN_MODEL_VERSION {
            return Err(ParseError::Version(
                v,
                "; nets of versions 0-2 are from an extremely old KataGo, which KataGo 1.17.2 no longer reads either",
            ));
        }
        if v > MAX_MODEL_VERSION {
            return Err(ParseError::Version(v, ""));
        }
        *version = v;
        Ok(())
    }

    fn name(&mut self, what: &str, name: &mut String) -> PResult<()> {
        *name = self.text(what)?;
        Ok(())
    }

    fn size(&mut self, what: &str, value: &mut usize) -> PResult<()> {
        *value = self.positive(what)?;
        Ok(())
    }

    fn flag(&mut self, what: &str, value: &mut bool) -> PResult<()> {
        *value = self.bit(what)?;
        Ok(())
    }

    fn reserved(&mut self, what: &str) -> PResult<()> {
        self.zero(what)
    }

    fn multiplier(&mut self, what: &str, value: &mut f64) -> PResult<()> {
        let v = self.real(what)?;
        if v <= 0.0 {
            return bad(format!("{what} must be positive, found {v}"));
        }
        *value = v;
        Ok(())
    }

    fn trunk_norm(&mut self, trunk: &str, tip: &mut Option<RmsNormLayer>) -> PResult<()> {
        *tip = match self.int(&format!("{trunk}: trunk norm kind"))? {
            0 => None,
            1 => Some(RmsNormLayer::default()),
            k => return bad(format!("{trunk}: unknown trunk norm kind {k}")),
        };
        Ok(())
    }

    fn rms_norm(&mut self, layer: &mut RmsNormLayer) -> PResult<()> {
        let name = self.text("rmsnorm layer name")?;
        let (num_channels, epsilon) = parse_norm_header(self, &name)?;
        let spatial = self.bit(&format!("{name}: spatial"))?;
        let groups = self.int(&format!("{name}: cgroupSize"))?;
        if groups != 0 {
            return bad(format!(
                "{name}: cgroupSize {groups}: grouped RMSNorm is not supported (KataGo neither)"
            ));
        }
        let gamma = self.floats(num_channels, &format!("{name} (gamma)"))?;
        let beta = self.floats(num_channels, &format!("{name} (beta)"))?;
        *layer = RmsNormLayer {
            name,
            num_channels,
            epsilon,
            spatial,
            gamma,
            beta,
        };
        Ok(())
    }

    fn transformer_norm(&mut self, layer: &mut TransformerNorm) -> PResult<()> {
        let name = self.text("transformer rmsnorm name")?;
        let (num_channels, epsilon) = parse_norm_header(self, &name)?;
        let weight = self.floats(num_channels, &name)?;
        *layer = TransformerNorm {
            name,
            num_channels,
            epsilon,
            weight,
        };
        Ok(())
    }

    fn rope(&mut self, a: &mut AttentionBlock) -> PResult<()> {
        a.rope_name = self.text(&format!("{}: rope section name", a.name))?;
        let what = |field: &str| format!("{}: {field}", a.name);
        if a.learnable_rope {
            let heads = self.positive(&what("rope heads"))?;
            let pairs = self.positive(&what("rope pairs"))?;
            let dim2 = self.positive(&what("rope freq dim2"))?;
            if heads != a.num_kv_heads || pairs != a.q_head_dim / 2 || dim2 != 2 {
                return bad(format!(
                    "{}: rope frequencies are {heads}x{pairs}x{dim2}, expected {}x{}x2                      (numKVHeads x qHeadDim/2 x 2)",
                    a.name,
                    a.num_kv_heads,
                    a.q_head_dim / 2
                ));
            }
            a.rope_freqs = self.floats(heads * pairs * 2, &what("rope frequencies"))?;
        } else {
            let theta = self.real(&what("rope theta"))?;
            if theta <= 0.0 || theta > f32::MAX as f64 {
                return bad(format!(
                    "{}: rope theta must be positive, found {theta}",
                    a.name
                ));
            }
            a.rope_theta = theta as f32;
        }
        Ok(())
    }

    fn meta_encoder(&mut self, encoder: &mut Option<MetadataEncoder>) -> PResult<()> {
        let version = self.int("metaEncoderVersion")?;
        if !(0..=1).contains(&version) {
            return bad(format!(
                "metaEncoderVersion {version} is not implemented (0 or 1 expected)"
            ));
        }
        *encoder = (version > 0).then(|| MetadataEncoder {
            version: version as i32,
            ..MetadataEncoder::default()
        });
        Ok(())
    }

    fn implied(&mut self, slot: &mut usize, value: usize) -> PResult<()> {
        *slot = value;
        Ok(())
    }

    fn optional<T: Default + 'static>(
        &mut self,
        slot: &mut Option<T>,
        present: bool,
    ) -> PResult<()> {
        *slot = present.then(T::default);
        Ok(())
    }

    fn block_count(&mut self, what: &str, blocks: &mut Vec<Block>) -> PResult<usize> {
        let n = self.positive(what)?;
        blocks.clear();
        // The count comes from the file: reserve no more than a real net has.
        blocks.reserve(n.min(64));
        Ok(n)
    }

    fn block<'a>(
        &mut self,
        owner: &str,
        blocks: Ref<'a, Self, Vec<Block>>,
        _index: usize,
    ) -> PResult<Ref<'a, Self, Block>> {
        let kind = self.token(&format!("{owner}: block kind"))?;
        let block = match kind {
            "ordinary_block" => Block::Ordinary(ResidualBlock::default()),
            "gpool_block" => Block::GlobalPooling(Box::default()),
            "nested_bottleneck_block" => Block::NestedBottleneck(NestedBottleneckBlock::default()),
            "transformer_attention_block" => Block::Attention(Box::default()),
            "transformer_ffn_block" => Block::Ffn(Box::default()),
            other => return bad(format!("{owner}: unknown block kind {:?}", clip(other))),
        };
        let at = blocks.len();
        blocks.push(block);
        Ok(&mut blocks[at])
    }

    fn conv(&mut self, layer: &mut ConvLayer) -> PResult<()> {
        *layer = parse_conv(self)?;
        Ok(())
    }

    fn batch_norm(&mut self, layer: &mut BatchNormLayer) -> PResult<()> {
        *layer = parse_bn(self)?;
        Ok(())
    }

    fn activation(&mut self, layer: &mut ActivationLayer, version: i32) -> PResult<()> {
        *layer = parse_act(self, version)?;
        Ok(())
    }

    fn matmul(&mut self, layer: &mut MatMulLayer) -> PResult<()> {
        *layer = parse_matmul(self)?;
        Ok(())
    }

    fn matbias(&mut self, layer: &mut MatBiasLayer) -> PResult<()> {
        *layer = parse_matbias(self)?;
        Ok(())
    }

    fn validate(&mut self, check: impl FnOnce() -> Result<(), String>) -> PResult<()> {
        check().map_err(ParseError::Format)
    }
}
