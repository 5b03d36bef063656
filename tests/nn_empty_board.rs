//! Parity of the g170 network with KataGo 1.17.2 on every empty-board record
//! of `vectors/nn/nn.jsonl`.
//!
//! An empty board needs only the on-board plane and the komi/rules globals,
//! so this checks the network (model file, layers, masking, pooling, heads,
//! post-processing) without the full input features. The 8 symmetries are
//! evaluated in one batch in a square buffer of side max(x, y) with a mask,
//! as KataGo does, then averaged after the softmaxes as KataGo averages them.

// libtorch (and the trainer) are in the default build only.
#![cfg(feature = "torch")]

use engine::nn::{Model, NetInput};
use serde_json::Value;
use tch::Device;

const NUM_SPATIAL: usize = 22;
const NUM_GLOBAL: usize = 19;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Ko {
    Simple,
    Positional,
    Situational,
}

#[derive(Debug, Clone, Copy)]
struct Rules {
    ko: Ko,
    territory: bool,
    /// 0 none, 1 seki, 2 all.
    tax: u8,
    suicide: bool,
    button: bool,
}

fn rules_named(name: &str) -> Rules {
    let r = |ko, territory, tax, suicide, button| Rules {
        ko,
        territory,
        tax,
        suicide,
        button,
    };
    match name.to_ascii_lowercase().as_str() {
        "japanese" | "korean" => r(Ko::Simple, true, 1, false, false),
        "chinese" => r(Ko::Simple, false, 0, false, false),
        "aga" => r(Ko::Situational, false, 0, false, false),
        "aga-button" => r(Ko::Situational, false, 0, false, true),
        "new-zealand" => r(Ko::Situational, false, 0, true, false),
        "tromp-taylor" => r(Ko::Positional, false, 0, true, false),
        "stone-scoring" => r(Ko::Simple, false, 2, false, false),
        other => panic!("rules name {other} not in this test's table"),
    }
}

fn rules_of(v: &Value) -> Rules {
    if let Some(name) = v.as_str() {
        return rules_named(name);
    }
    let s = |k: &str| v[k].as_str().unwrap_or_default().to_ascii_uppercase();
    Rules {
        ko: match s("ko").as_str() {
            "SIMPLE" => Ko::Simple,
            "POSITIONAL" => Ko::Positional,
            "SITUATIONAL" => Ko::Situational,
            other => panic!("ko rule {other}"),
        },
        territory: s("scoring") == "TERRITORY",
        tax: match s("tax").as_str() {
            "SEKI" => 1,
            "ALL" => 2,
            _ => 0,
        },
        suicide: v["suicide"].as_bool().unwrap_or(false),
        button: v["hasButton"].as_bool().unwrap_or(false),
    }
}

/// Global inputs of an empty board (KataGo's `fillRowV7`): no history, no
/// passes, no encore, no playout-doubling advantage.
fn globals(rules: Rules, komi: f32, white_to_move: bool, area: usize) -> [f32; NUM_GLOBAL] {
    let mut g = [0f32; NUM_GLOBAL];
    let b_area = area as f32;
    let self_komi = (if white_to_move { komi } else { -komi }).clamp(-b_area - 20.0, b_area + 20.0);
    g[5] = self_komi / 20.0;
    match rules.ko {
        Ko::Simple => {}
        Ko::Positional => {
            g[6] = 1.0;
            g[7] = 0.5;
        }
        Ko::Situational => {
            g[6] = 1.0;
            g[7] = -0.5;
        }
    }
    if rules.suicide {
        g[8] = 1.0;
    }
    if rules.territory {
        g[9] = 1.0;
    }
    if rules.tax >= 1 {
        g[10] = 1.0;
    }
    if rules.tax == 2 {
        g[11] = 1.0;
    }
    if rules.button {
        g[17] = 1.0;
    }
    if !rules.territory {
        let komi_floor = if area.is_multiple_of(2) {
            (self_komi / 2.0).floor() * 2.0
        } else {
            ((self_komi - 1.0) / 2.0).floor() * 2.0 + 1.0
        };
        let delta = (self_komi - komi_floor).clamp(0.0, 2.0);
        g[18] = if delta < 0.5 {
            delta
        } else if delta < 1.5 {
            1.0 - delta
        } else {
            delta - 2.0
        };
    }
    g
}

/// Where board point (x, y) lands in the `s x s` buffer under symmetry `sym`
/// (bit 0 flips y, bit 1 flips x, bit 2 transposes).
fn sym_point(sym: usize, x: usize, y: usize, xs: usize, ys: usize) -> (usize, usize) {
    let y = if sym & 1 != 0 { ys - 1 - y } else { y };
    let x = if sym & 2 != 0 { xs - 1 - x } else { x };
    if sym & 4 != 0 {
        (y, x)
    } else {
        (x, y)
    }
}

fn close(what: &str, id: &str, got: f64, want: f64, tol: f64, worst: &mut f64) {
    let d = (got - want).abs();
    *worst = worst.max(d / tol);
    assert!(
        d <= tol,
        "{id}: {what}: got {got}, KataGo {want} (diff {d:e} > {tol:e})"
    );
}

#[test]
fn empty_boards_match_katago() {
    let shared = engine::shared_data_dir().unwrap_or_else(|m| panic!("{m}"));
    let model = Model::load(
        shared.join("models/g170-b6c96-s175395328-d26788732.bin.gz"),
        Device::Cpu,
    )
    .expect("g170 loads");
    let text = std::fs::read_to_string(shared.join("vectors/nn/nn.jsonl")).expect("nn.jsonl");
    let mut checked = 0;
    let mut worst = 0f64;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let rec: Value = serde_json::from_str(line).expect("json");
        let q = &rec["query"];
        let empty = |k: &str| q[k].as_array().is_none_or(|a| a.is_empty());
        if !empty("moves") || !empty("initialStones") {
            continue;
        }
        let id = q["id"].as_str().unwrap_or("?").to_owned();
        let xs = q["boardXSize"].as_u64().expect("x size") as usize;
        let ys = q["boardYSize"].as_u64().expect("y size") as usize;
        let komi = q["komi"].as_f64().expect("komi") as f32;
        let white = q["initialPlayer"].as_str() == Some("W");
        let rules = rules_of(&q["rules"]);
        let resp = &rec["response"];
        let info = &resp["rootInfo"];
        assert_eq!(
            info["currentPlayer"].as_str(),
            Some(if white { "W" } else { "B" }),
            "{id}"
        );

        // Eight symmetric copies in a square buffer with a mask.
        let s = xs.max(ys);
        let ss = s * s;
        let mut spatial = vec![0f32; 8 * NUM_SPATIAL * ss];
        let mut mask = vec![0f32; 8 * ss];
        let mut global = Vec::with_capacity(8 * NUM_GLOBAL);
        for sym in 0..8 {
            for y in 0..ys {
                for x in 0..xs {
                    let (tx, ty) = sym_point(sym, x, y, xs, ys);
                    spatial[sym * NUM_SPATIAL * ss + ty * s + tx] = 1.0;
                    mask[sym * ss + ty * s + tx] = 1.0;
                }
            }
            global.extend_from_slice(&globals(rules, komi, white, xs * ys));
        }
        let out = model
            .forward(&NetInput {
                batch_size: 8,
                height: s,
                width: s,
                spatial: &spatial,
                global: &global,
                meta: None,
                mask: Some(&mask),
            })
            .expect("forward");

        let n_points = xs * ys;
        let mut policy = vec![0f64; n_points + 1];
        let mut ownership = vec![0f64; n_points];
        let (mut win, mut loss, mut nr, mut mean, mut mean_sq, mut lead) =
            (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        let no_result_possible = rules.ko == Ko::Simple || rules.territory;
        for sym in 0..8 {
            let row = out.row(sym);
            // Legal moves: every point and pass; softmax over them.
            let mut logits = vec![0f64; n_points + 1];
            for y in 0..ys {
                for x in 0..xs {
                    let (tx, ty) = sym_point(sym, x, y, xs, ys);
                    logits[y * xs + x] = f64::from(row.policy[ty * s + tx]);
                    ownership[y * xs + x] += f64::from(row.ownership[ty * s + tx]) / 8.0;
                }
            }
            logits[n_points] = f64::from(row.policy[ss]);
            let max = logits.iter().cloned().fold(f64::MIN, f64::max);
            let sum: f64 = logits.iter().map(|l| (l - max).exp()).sum();
            for (p, l) in policy.iter_mut().zip(&logits) {
                *p += (l - max).exp() / sum / 8.0;
            }
            let v = row.values(no_result_possible);
            win += v.win / 8.0;
            loss += v.loss / 8.0;
            nr += v.no_result / 8.0;
            mean += v.score_mean / 8.0;
            mean_sq += v.score_mean_sq / 8.0;
            lead += v.lead / 8.0;
            assert_eq!(row.scores.var_time_left, -1.0, "{id}");
            assert_eq!(row.scores.shortterm_winloss_error, -1.0, "{id}");
            assert_eq!(row.scores.shortterm_score_error, -1.0, "{id}");
        }

        let want_policy = resp["policy"].as_array().expect("policy");
        assert_eq!(want_policy.len(), n_points + 1, "{id}");
        for (i, (got, want)) in policy.iter().zip(want_policy).enumerate() {
            close(
                &format!("policy[{i}]"),
                &id,
                *got,
                want.as_f64().expect("num"),
                1e-4,
                &mut worst,
            );
        }
        let want_own = resp["ownership"].as_array().expect("ownership");
        for (i, (got, want)) in ownership.iter().zip(want_own).enumerate() {
            close(
                &format!("ownership[{i}]"),
                &id,
                *got,
                want.as_f64().expect("num"),
                1e-3,
                &mut worst,
            );
        }
        let f = |k: &str| info[k].as_f64().unwrap_or_else(|| panic!("{id}: {k}"));
        close(
            "rawWinrate",
            &id,
            0.5 + 0.5 * (win - loss),
            f("rawWinrate"),
            1e-4,
            &mut worst,
        );
        close("rawLead", &id, lead, f("rawLead"), 1e-3, &mut worst);
        close(
            "rawScoreSelfplay",
            &id,
            mean,
            f("rawScoreSelfplay"),
            1e-3,
            &mut worst,
        );
        let stdev = (mean_sq - mean * mean).max(0.0).sqrt();
        close(
            "rawScoreSelfplayStdev",
            &id,
            stdev,
            f("rawScoreSelfplayStdev"),
            1e-3,
            &mut worst,
        );
        close(
            "rawNoResultProb",
            &id,
            nr,
            f("rawNoResultProb"),
            1e-5,
            &mut worst,
        );
        assert_eq!(f("rawStWrError"), -0.5, "{id}");
        assert_eq!(f("rawStScoreError"), -1.0, "{id}");
        assert_eq!(f("rawVarTimeLeft"), -1.0, "{id}");
        checked += 1;
    }
    assert!(checked >= 5, "only {checked} empty-board records found");
    eprintln!("{checked} empty boards match; worst diff = {worst:.3} of tolerance");
}
