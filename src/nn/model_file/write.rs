//! Writing descriptors back in KataGo's binary layout: the writing visitor
//! of the walk ([`super::walk`]), one token per line as KataGo's exporter
//! lays a file out.

use std::convert::Infallible;
use std::io::Write;

use super::super::desc::*;
use super::walk::{shared, ModelVisitor, Ref, Shared};
use super::ModelFile;

pub(super) struct Writer {
    pub(super) out: Vec<u8>,
    /// Floats written so far (checked against the count in tests).
    pub(super) floats_written: usize,
}

type WResult<T = ()> = Result<T, Infallible>;

impl Writer {
    fn line(&mut self, s: impl std::fmt::Display) {
        // Writing into a Vec cannot fail.
        let _ = writeln!(self.out, "{s}");
    }

    fn floats(&mut self, v: &[f32]) {
        self.floats_written += v.len();
        self.out.extend_from_slice(b"@BIN@");
        for x in v {
            self.out.extend_from_slice(&x.to_le_bytes());
        }
        self.out.push(b'\n');
    }
}

/// `x` as Python's `repr` writes the same decimal (the shortest text that
/// reads back to the same f32): fixed notation from 1e-4 up to 1e16
/// (`100.0`, `0.0001`), else an exponent of at least two digits (`1e-06`),
/// so that exports are byte for byte KataGo's exporter's.
fn python_repr(x: f32) -> String {
    let sci = format!("{x:e}");
    let Some((mant, exp)) = sci.split_once('e') else {
        return sci;
    };
    let Ok(exp) = exp.parse::<i32>() else {
        return sci;
    };
    if !x.is_finite() {
        return sci;
    }
    if !(-4..16).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mant}e{sign}{:02}", exp.abs());
    }
    let (neg, mant) = match mant.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mant),
    };
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    let (int, frac) = if exp >= 0 {
        let point = exp as usize + 1;
        let padded = format!("{digits:0<point$}");
        let (i, f) = padded.split_at(point);
        (i.to_string(), f.to_string())
    } else {
        (
            "0".to_string(),
            format!("{}{digits}", "0".repeat((-exp - 1) as usize)),
        )
    };
    let frac = if frac.is_empty() {
        "0".to_string()
    } else {
        frac
    };
    format!("{neg}{int}.{frac}")
}

impl ModelVisitor for Writer {
    type Access = Shared;
    type Error = Infallible;

    fn version(&mut self, version: &i32) -> WResult {
        self.line(version);
        Ok(())
    }

    fn name(&mut self, _: &str, name: &String) -> WResult {
        self.line(name);
        Ok(())
    }

    fn size(&mut self, _: &str, value: &usize) -> WResult {
        self.line(value);
        Ok(())
    }

    fn flag(&mut self, _: &str, value: &bool) -> WResult {
        self.line(u8::from(*value));
        Ok(())
    }

    fn reserved(&mut self, _: &str) -> WResult {
        self.line(0);
        Ok(())
    }

    fn multiplier(&mut self, _: &str, value: &f64) -> WResult {
        self.line(format!("{value:?}"));
        Ok(())
    }

    fn trunk_norm(&mut self, _: &str, tip: &Option<RmsNormLayer>) -> WResult {
        // 0: batch norm, 1: RMSNorm.
        self.line(u8::from(tip.is_some()));
        Ok(())
    }

    fn rms_norm(&mut self, n: &RmsNormLayer) -> WResult {
        self.line(&n.name);
        self.line(n.num_channels);
        self.line(python_repr(n.epsilon));
        self.line(u8::from(n.spatial));
        // cgroupSize: grouped norms do not exist.
        self.line(0);
        self.floats(&n.gamma);
        self.floats(&n.beta);
        Ok(())
    }

    fn transformer_norm(&mut self, n: &TransformerNorm) -> WResult {
        self.line(&n.name);
        self.line(n.num_channels);
        self.line(python_repr(n.epsilon));
        self.floats(&n.weight);
        Ok(())
    }

    fn rope(&mut self, a: &AttentionBlock) -> WResult {
        self.line(&a.rope_name);
        if a.learnable_rope {
            self.line(a.num_kv_heads);
            self.line(a.q_head_dim / 2);
            self.line(2);
            self.floats(&a.rope_freqs);
        } else {
            self.line(python_repr(a.rope_theta));
        }
        Ok(())
    }

    fn meta_encoder(&mut self, encoder: &Option<MetadataEncoder>) -> WResult {
        self.line(encoder.as_ref().map_or(0, |e| e.version));
        Ok(())
    }

    fn implied(&mut self, _: &usize, _: usize) -> WResult {
        Ok(())
    }

    fn optional<T: Default + 'static>(&mut self, _: &Option<T>, _: bool) -> WResult {
        Ok(())
    }

    fn block_count(&mut self, _: &str, blocks: &Vec<Block>) -> WResult<usize> {
        self.line(blocks.len());
        Ok(blocks.len())
    }

    // Spelled with `Ref`, as in the trait, so that `'a` is bound alike.
    fn block<'a>(
        &mut self,
        _: &str,
        blocks: Ref<'a, Self, Vec<Block>>,
        index: usize,
    ) -> WResult<Ref<'a, Self, Block>> {
        // The walk asks only for indices below `block_count`.
        let block = &blocks[index];
        self.line(block.kind_keyword());
        Ok(block)
    }

    fn conv(&mut self, c: &ConvLayer) -> WResult {
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
        Ok(())
    }

    fn batch_norm(&mut self, b: &BatchNormLayer) -> WResult {
        self.line(&b.name);
        self.line(b.num_channels);
        self.line(python_repr(b.epsilon));
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
        Ok(())
    }

    fn activation(&mut self, a: &ActivationLayer, version: i32) -> WResult {
        self.line(&a.name);
        if version >= 11 {
            self.line(a.activation.file_name());
        }
        Ok(())
    }

    fn matmul(&mut self, m: &MatMulLayer) -> WResult {
        self.line(&m.name);
        self.line(m.in_channels);
        self.line(m.out_channels);
        self.floats(&m.weights);
        Ok(())
    }

    fn matbias(&mut self, m: &MatBiasLayer) -> WResult {
        self.line(&m.name);
        self.line(m.weights.len());
        self.floats(&m.weights);
        Ok(())
    }
}

/// Writes the whole model.
pub(super) fn write_model(w: &mut Writer, m: &ModelFile) {
    match shared::walk(w, m) {
        Ok(()) => {}
        Err(never) => match never {},
    }
}

#[cfg(test)]
mod tests {
    use super::python_repr;

    #[test]
    fn floats_are_written_as_python_writes_them() {
        for (x, want) in [
            (1e-6f32, "1e-06"),
            (1e-20, "1e-20"),
            (1e-5, "1e-05"),
            (1e-4, "0.0001"),
            (1.5e-3, "0.0015"),
            (100.0, "100.0"),
            (0.5, "0.5"),
            (1.0, "1.0"),
            (12345.678, "12345.678"),
            (1e16, "1e+16"),
            (-2.5e-7, "-2.5e-07"),
            (0.0, "0.0"),
        ] {
            assert_eq!(python_repr(x), want, "{x}");
            let back: f32 = python_repr(x).parse().expect("reads back");
            assert_eq!(back, x);
        }
    }
}
