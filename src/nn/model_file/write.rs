//! Writing descriptors back in KataGo's binary layout.

use std::io::Write;

use super::super::desc::*;
use super::ModelFile;

// Writing

pub(super) struct Writer {
    pub(super) out: Vec<u8>,
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

pub(super) fn write_model(w: &mut Writer, m: &ModelFile) {
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
