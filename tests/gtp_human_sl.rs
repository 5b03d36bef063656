//! `engine gtp -human-model`: the human-style net beside the main one, as
//! KataGo 1.17.2 answers for it. `tests/data/katago_human_nn/gtp_katago.txt`
//! is KataGo's whole answer to `gtp_commands.txt` there (g170 b6c96 as the
//! main net, the random human-style test net `b6c96-fson-mish-meta` as
//! `-human-model`; its README says how it was made): `kata-get-models`,
//! `kata-raw-human-nn` without a profile, with four profiles on 19x19 and
//! 9x9, in one symmetry and all, with a colour, after an unknown profile
//! and after the profile is cleared, and `kata-raw-nn` of the main net
//! between them. Every answer is compared: the same words, and numbers
//! within two units of the last digit KataGo prints (or float32
//! rounding, where that is larger).

use std::path::{Path, PathBuf};

use serde_json::Value;

#[path = "common/gtp.rs"]
mod gtp;
use gtp::{answers, session};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/katago_human_nn")
}

/// The random human SL test net (`tests/data/katago_human_nn/README.md`).
fn human_net() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("models/test-human-sl/b6c96-fson-mish-meta.bin.gz")
}

fn g170() -> PathBuf {
    engine::shared_data_dir()
        .unwrap_or_else(|e| panic!("{e}"))
        .join("models/g170-b6c96-s175395328-d26788732.bin.gz")
}

/// Digits after the decimal point of a number as printed.
fn decimals(token: &str) -> i32 {
    token.split('.').nth(1).map_or(0, |d| d.len() as i32)
}

/// Compares one numeric answer word by word; returns the largest
/// difference seen, or the first mismatch.
fn compare_words(katago: &str, ours: &str) -> Result<f64, String> {
    let (k, o): (Vec<&str>, Vec<&str>) = (
        katago.split_whitespace().collect(),
        ours.split_whitespace().collect(),
    );
    if k.len() != o.len() {
        return Err(format!("{} words, KataGo {}", o.len(), k.len()));
    }
    let mut worst = 0f64;
    for (i, (a, b)) in k.iter().zip(&o).enumerate() {
        match (a.parse::<f64>(), b.parse::<f64>()) {
            (Ok(x), Ok(y)) if !x.is_nan() => {
                // Two units of the last printed digit, and float32
                // rounding where that is finer (7 digits printed, or a
                // squared score of thousands).
                let tol = (2.0 * 10f64.powi(-decimals(a)))
                    .max(1e-5)
                    .max(1e-5 * x.abs());
                worst = worst.max((x - y).abs());
                if (x - y).abs() > tol {
                    return Err(format!("word {i}: ours {b}, KataGo {a} (tolerance {tol})"));
                }
            }
            _ if a == b => {}
            _ => return Err(format!("word {i}: ours {b:?}, KataGo {a:?}")),
        }
    }
    Ok(worst)
}

#[test]
fn human_model_answers_as_katago() {
    let commands = std::fs::read_to_string(data().join("gtp_commands.txt")).unwrap();
    let katago = answers(&std::fs::read_to_string(data().join("gtp_katago.txt")).unwrap());
    let human = human_net();
    let (g170, human) = (g170(), human);
    let (ours, stderr) = session(
        &[
            "-model".as_ref(),
            g170.as_os_str(),
            "-human-model".as_ref(),
            human.as_os_str(),
            // KataGo's arithmetic (the CPU's default, auto, may pick bf16
            // or int8 for these 96-channel nets).
            "-override-config".as_ref(),
            "nnPrecision=fp32".as_ref(),
        ],
        &commands,
    );
    let commands: Vec<&str> = commands.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(katago.len(), commands.len());
    assert_eq!(ours.len(), commands.len(), "{ours:#?}\n{stderr}");
    let mut raw_answers = 0;
    let mut worst = 0f64;
    for ((command, k), o) in commands.iter().zip(&katago).zip(&ours) {
        let context = format!("{command}:\nours:   {o:.300}\nKataGo: {k:.300}");
        if command.starts_with("kata-get-models") {
            let parse = |a: &str| -> Vec<Value> {
                serde_json::from_str(a.trim_start_matches('=').trim()).unwrap()
            };
            let (k, o) = (parse(k), parse(o));
            assert_eq!(k.len(), o.len(), "{context}");
            for (a, b) in k.iter().zip(&o) {
                for key in ["internalName", "usesHumanSLProfile", "version", "usingFP16"] {
                    assert_eq!(a[key], b[key], "{key} in {context}");
                }
                let file = |v: &Value| {
                    Path::new(v["name"].as_str().unwrap())
                        .file_name()
                        .map(|f| f.to_owned())
                };
                assert_eq!(file(a), file(b), "{context}");
            }
        } else if command.contains("humanSLProfile rank_30k") {
            // KataGo's "Unknown human SL network profile: rank_30k"; ours
            // also lists the names it takes.
            assert!(k.starts_with('?') && o.starts_with('?'), "{context}");
            assert!(o.contains("rank_30k"), "{context}");
        } else if k.starts_with("= symmetry") {
            assert!(o.starts_with('='), "{context}");
            worst = worst.max(compare_words(k, o).unwrap_or_else(|e| panic!("{e}\n{context}")));
            raw_answers += 1;
        } else {
            assert_eq!(k, o, "{context}");
        }
    }
    assert_eq!(raw_answers, 9);
    println!("largest difference in the raw answers: {worst:.2e}");
}

/// As KataGo: a `-human-model` without a metadata encoder is used with a
/// warning, and needs no profile.
#[test]
fn a_human_model_without_metadata_warns_and_needs_no_profile() {
    let g170 = g170();
    let (ours, stderr) = session(
        &[
            "-model".as_ref(),
            g170.as_os_str(),
            "-human-model".as_ref(),
            g170.as_os_str(),
        ],
        "boardsize 9\nkata-raw-human-nn 0\nkata-raw-nn 0\nquit\n",
    );
    assert!(
        stderr.contains("WARNING: Human model was not trained from SGF metadata"),
        "{stderr}"
    );
    assert_eq!(ours.len(), 4, "{ours:?}");
    assert!(ours[1].starts_with("= symmetry 0\nwhiteWin"), "{}", ours[1]);
    // The same net in both roles: the same policy.
    let policy = |a: &str| {
        a.split("policy\n")
            .nth(1)
            .unwrap()
            .split("policyPass")
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(policy(&ours[1]), policy(&ours[2]));
}

/// A human-style net as the main model needs a profile: without one its
/// evaluations fail with a clear error (KataGo exits), with one it
/// answers and searches.
#[test]
fn human_net_as_main_model_needs_a_profile() {
    let human = human_net();
    let input = "boardsize 9\nkata-raw-nn 0\nkata-set-param humanSLProfile rank_5k\n\
                 kata-raw-nn 0\ngenmove b\nquit\n";
    let (ours, stderr) = session(
        &[
            "-model".as_ref(),
            human.as_os_str(),
            "-override-config".as_ref(),
            "maxVisits=20".as_ref(),
        ],
        input,
    );
    assert_eq!(ours.len(), 6, "{ours:?}\n{stderr}");
    assert!(
        ours[1].starts_with('?') && ours[1].contains("humanSLProfile"),
        "{}",
        ours[1]
    );
    assert!(ours[3].starts_with("= symmetry 0"), "{}", ours[3]);
    // The search runs on it too.
    let mv = ours[4].trim_start_matches('=').trim();
    assert!(mv.len() >= 2 && mv != "resign", "{}", ours[4]);
}

/// The human policy averaged over `kata-raw-human-nn all`'s symmetries,
/// and its most likely point (GTP name) on a 19x19 board.
fn human_argmax(answer: &str) -> String {
    let mut sum = vec![0f64; 361];
    for block in answer.split("policy\n").skip(1) {
        let points = block.split("policyPass").next().unwrap();
        for (s, w) in sum.iter_mut().zip(points.split_whitespace()) {
            // `NAN` (an occupied point) parses as NaN: not a candidate.
            *s += w
                .parse::<f64>()
                .ok()
                .filter(|x| !x.is_nan())
                .unwrap_or(-1.0);
        }
    }
    let best = (0..361).max_by(|&a, &b| sum[a].total_cmp(&sum[b])).unwrap();
    let cols = b"ABCDEFGHJKLMNOPQRST";
    format!("{}{}", cols[best % 19] as char, 19 - best / 19)
}

/// A GTP session on the g170 net with the human test net beside it and
/// `overrides` (`-override-config`): its answers and stderr.
fn human_session(overrides: &str, input: &str) -> (Vec<String>, String) {
    let (g170, human) = (g170(), human_net());
    session(
        &[
            "-model".as_ref(),
            g170.as_os_str(),
            "-human-model".as_ref(),
            human.as_os_str(),
            "-override-config".as_ref(),
            overrides.as_ref(),
        ],
        input,
    )
}

/// `humanSLChosenMoveProp = 1` (with KataGo's human5k settings: no
/// utility shift, pass left to the search, temperature 0): genmove plays
/// the human net's most likely move (its root output averaged over the 8
/// symmetries), where the main net's search plays another.
#[test]
fn chosen_move_prop_plays_the_human_policy() {
    let input = "boardsize 19\nkomi 7.5\nplay B Q16\nplay W D4\nplay B Q3\n\
                 kata-raw-human-nn all\ngenmove w\nquit\n";
    let play = |prop: &str| {
        let overrides = format!(
            "humanSLProfile=rank_5k,humanSLChosenMoveProp={prop},humanSLChosenMovePiklLambda=100000000,\
             humanSLChosenMoveIgnorePass=true,chosenMoveTemperature=0,chosenMoveTemperatureEarly=0,\
             maxVisits=30,rootNumSymmetriesToSample=8"
        );
        let (ours, stderr) = human_session(&overrides, input);
        assert_eq!(ours.len(), 8, "{ours:?}\n{stderr}");
        (
            human_argmax(&ours[5]),
            ours[6].trim_start_matches('=').trim().to_string(),
        )
    };
    let (human_best, human_move) = play("1.0");
    assert_eq!(human_move, human_best);
    let (_, search_move) = play("0.0");
    assert_ne!(
        search_move, human_best,
        "the position does not tell the two apart"
    );
}

/// As KataGo: `humanSL*` search keys without `-human-model` stop the
/// start-up.
#[test]
fn human_search_keys_need_a_human_model() {
    let g170 = g170();
    let (ours, stderr) = session(
        &[
            "-model".as_ref(),
            g170.as_os_str(),
            "-override-config".as_ref(),
            "humanSLChosenMoveProp=0.5".as_ref(),
        ],
        "quit\n",
    );
    assert!(ours.is_empty(), "{ours:?}");
    assert!(
        stderr
            .contains("Provided parameter humanSLChosenMoveProp but no human model was specified"),
        "{stderr}"
    );
}

/// `(visits, edgeVisits)` of every move of a `kata-search_analyze` answer.
fn visits_and_edge_visits(answer: &str) -> Vec<(i64, i64)> {
    answer
        .split("info move ")
        .skip(1)
        .map(|info| {
            let words: Vec<&str> = info.split_whitespace().collect();
            let after = |key: &str| -> i64 {
                let i = words.iter().position(|w| *w == key).expect(key);
                words[i + 1].parse().expect("a count")
            };
            (after("visits"), after("edgeVisits"))
        })
        .collect()
}

/// KataGo's `humanSLRootExploreProbWeightless`: root playouts chosen by the
/// human policy grow the moves' subtrees (`visits`) without counting for
/// the root (`edgeVisits` 0); without it every visit came through its edge.
#[test]
fn weightless_human_exploration_shows_as_visits_without_edge_visits() {
    let input = "boardsize 19\nkomi 7.5\nplay B Q16\nplay W D4\n\
                 kata-search_analyze b 100000\nquit\n";
    let moves = |extra: &str| {
        let overrides = format!("humanSLProfile=rank_5k,maxVisits=60{extra}");
        let (ours, stderr) = human_session(&overrides, input);
        assert_eq!(ours.len(), 6, "{ours:?}\n{stderr}");
        visits_and_edge_visits(&ours[4])
    };
    let plain = moves("");
    assert!(!plain.is_empty());
    assert!(plain.iter().all(|&(v, e)| v == e && v > 0), "{plain:?}");
    let weightless = moves(",humanSLRootExploreProbWeightless=1.0");
    assert!(!weightless.is_empty());
    assert!(
        weightless.iter().all(|&(v, e)| e == 0 && v > 0),
        "{weightless:?}"
    );
    // 59 playouts after the root's own evaluation, all below the root's
    // children (symmetric copies report their original's counts).
    let total: i64 = weightless.iter().map(|&(v, _)| v).sum();
    assert!(total >= 59, "{total}");
}

/// KataGo's human pause (`delayMoveScale`, `delayMoveMax`): with a huge
/// scale every genmove waits its cap before answering (the wait is a
/// Gamma(2) draw of mean over 400 s here, so below the 1 s cap only once
/// in about 10^5).
#[test]
fn delay_move_pauses_before_each_move() {
    let g170 = g170();
    let started = std::time::Instant::now();
    let (ours, stderr) = session(
        &[
            "-model".as_ref(),
            g170.as_os_str(),
            "-override-config".as_ref(),
            "maxVisits=5,delayMoveScale=1000,delayMoveMax=1".as_ref(),
        ],
        "boardsize 9\ngenmove b\ngenmove w\nquit\n",
    );
    assert_eq!(ours.len(), 4, "{ours:?}\n{stderr}");
    assert!(
        started.elapsed().as_secs_f64() >= 2.0,
        "{:?}",
        started.elapsed()
    );
}
