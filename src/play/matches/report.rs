//! The results of a match as a table (stdout) and as
//! `match_summary.json` (written atomically) for scripts.

use std::fmt::Write as _;

use serde_json::{json, Value};

use super::runner::{RunResult, Tally};
use super::settings::MatchSettings;
use crate::play::stats::{bradley_terry, elo_estimate, Pentanomial, Sprt};
use crate::play::PlayError;
use crate::store::Store;

/// Virtual draws per pair in the overall ratings, so a clean sweep still
/// gives finite Elo (see [`bradley_terry`]).
pub const PRIOR_DRAWS: f64 = 1.0;

fn finite(x: f64) -> Value {
    if x.is_finite() {
        json!((x * 10.0).round() / 10.0)
    } else {
        Value::Null
    }
}

fn signed(x: f64) -> String {
    if x.is_finite() {
        format!("{x:+.1}")
    } else if x > 0.0 {
        "+inf".into()
    } else {
        "-inf".into()
    }
}

/// The results table: per bot games, wins, losses, draws, win rate
/// (draws as half), overall Elo and its search speed (seconds per move,
/// playouts per second); per pair the score, Elo difference
/// and its 95% interval; the SPRT's state if one ran.
pub fn table(s: &MatchSettings, t: &Tally, sprt: Option<&Sprt>) -> String {
    let n = s.bots.len();
    let ratings = bradley_terry(&t.table, PRIOR_DRAWS);
    let width = s
        .bots
        .iter()
        .map(|b| b.name.len())
        .max()
        .unwrap_or(3)
        .max(3);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<width$}  {:>6} {:>6} {:>6} {:>6} {:>8} {:>9} {:>8} {:>10}",
        "bot", "games", "wins", "losses", "draws", "winrate", "elo", "s/move", "playouts/s"
    );
    for (i, b) in s.bots.iter().enumerate() {
        let r = t.total(i);
        let thinking = &t.thinking[i];
        let _ = writeln!(
            out,
            "{:<width$}  {:>6} {:>6} {:>6} {:>6} {:>7.1}% {:>9} {:>8} {:>10}",
            b.name,
            r.games(),
            r.wins,
            r.losses,
            r.draws,
            100.0 * r.score(),
            ratings[i].map_or("-".to_string(), signed),
            thinking
                .seconds_per_move()
                .map_or("-".to_string(), |x| format!("{x:.3}")),
            thinking
                .playouts_per_second()
                .map_or("-".to_string(), |x| format!("{x:.1}"))
        );
    }
    if n > 1 {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "{:<w2$}  {:>12} {:>8} {:>9}  95% interval",
            "pair (first's view)",
            "W-L-D",
            "score",
            "elo",
            w2 = 2 * width + 4
        );
        for i in 0..n {
            for j in i + 1..n {
                let r = t.table[i][j];
                let e = elo_estimate(&r);
                let _ = writeln!(
                    out,
                    "{:<w2$}  {:>12} {:>7.1}% {:>9}  [{}, {}]",
                    format!("{} vs {}", s.bots[i].name, s.bots[j].name),
                    format!("{}-{}-{}", r.wins, r.losses, r.draws),
                    100.0 * r.score(),
                    signed(e.elo),
                    signed(e.low),
                    signed(e.high),
                    w2 = 2 * width + 4
                );
            }
        }
    }
    if n == 2 {
        let pairs = t.pairs(0, 1);
        let e = elo_estimate(&pairs);
        let _ = writeln!(
            out,
            "\n{} by pairs of games (one opening, colours swapped), pairs scoring 0/½/1/1½/2: {}, elo {} [{}, {}]",
            s.bots[0].name,
            pairs_text(&pairs),
            signed(e.elo),
            signed(e.low),
            signed(e.high)
        );
    }
    if let (Some(sprt), true) = (sprt, n == 2) {
        let (lo, hi) = sprt.bounds();
        let _ = writeln!(
            out,
            "SPRT elo0={} elo1={} alpha={} beta={}, on the pairs: LLR {:.3} (bounds {:.3}, {:.3}): {}",
            sprt.elo0,
            sprt.elo1,
            sprt.alpha,
            sprt.beta,
            sprt.llr(&t.pairs(0, 1)),
            lo,
            hi,
            sprt_text(sprt, t)
        );
    }
    out
}

/// Pentanomial counts as the log and the table show them: pairs scoring
/// 0, 1/2, 1, 3/2 and 2 points, `a/b/c/d/e`.
pub fn pairs_text(pairs: &Pentanomial) -> String {
    pairs
        .counts
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join("/")
}

fn sprt_text(sprt: &Sprt, t: &Tally) -> &'static str {
    match sprt.decide(&t.pairs(0, 1)) {
        crate::play::stats::SprtDecision::AcceptH0 => "H0 accepted",
        crate::play::stats::SprtDecision::AcceptH1 => "H1 accepted",
        crate::play::stats::SprtDecision::Continue => "undecided",
    }
}

/// The summary as JSON: `games` (played), `bots` (name, model, games,
/// wins, losses, draws, win_rate, elo, and its searches: `searches`,
/// `playouts`, `search_seconds`, `seconds_per_move`, `playouts_per_second`),
/// `pairs` (a, b, a's wins, losses,
/// draws, score, elo, elo_low, elo_high, the pairs of games by a's points
/// `game_pairs` and their `elo_by_pairs` with its interval; infinite
/// values are null), `sprt` (null without `-sprt`; on the pairs of games),
/// `stopped_early`, `seconds` and
/// `results` (every game: index, black, white, result, end, moves, sgf).
pub fn summary_json(s: &MatchSettings, result: &RunResult, sprt: Option<&Sprt>) -> Value {
    let t = &result.tally;
    let n = s.bots.len();
    let ratings = bradley_terry(&t.table, PRIOR_DRAWS);
    let bots: Vec<Value> = s
        .bots
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let r = t.total(i);
            let thinking = &t.thinking[i];
            let rate = |x: Option<f64>| x.map_or(Value::Null, |x| json!(x));
            json!({
                "name": b.name,
                "model": b.model.display().to_string(),
                "max_visits": b.params.max_visits,
                "games": r.games(),
                "wins": r.wins,
                "losses": r.losses,
                "draws": r.draws,
                "win_rate": r.score(),
                "elo": ratings[i].map_or(Value::Null, finite),
                "searches": thinking.searches,
                "playouts": thinking.playouts,
                "search_seconds": thinking.seconds,
                "seconds_per_move": rate(thinking.seconds_per_move()),
                "playouts_per_second": rate(thinking.playouts_per_second()),
            })
        })
        .collect();
    let mut pairs = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            let r = t.table[i][j];
            let e = elo_estimate(&r);
            let by_pairs = t.pairs(i, j);
            let ep = elo_estimate(&by_pairs);
            pairs.push(json!({
                "a": s.bots[i].name,
                "b": s.bots[j].name,
                "games": r.games(),
                "a_wins": r.wins,
                "a_losses": r.losses,
                "draws": r.draws,
                "a_score": r.score(),
                "elo": finite(e.elo),
                "elo_low": finite(e.low),
                "elo_high": finite(e.high),
                "game_pairs": by_pairs.counts,
                "elo_by_pairs": finite(ep.elo),
                "elo_by_pairs_low": finite(ep.low),
                "elo_by_pairs_high": finite(ep.high),
            }));
        }
    }
    let sprt_json = match (sprt, n == 2) {
        (Some(p), true) => {
            let (lo, hi) = p.bounds();
            json!({
                "elo0": p.elo0, "elo1": p.elo1, "alpha": p.alpha, "beta": p.beta,
                "statistic": "pentanomial", "game_pairs": t.pairs(0, 1).counts,
                "llr": p.llr(&t.pairs(0, 1)), "lower_bound": lo, "upper_bound": hi,
                "decision": sprt_text(p, t),
            })
        }
        _ => Value::Null,
    };
    json!({
        "games": t.games.len(),
        "bots": bots,
        "pairs": pairs,
        "sprt": sprt_json,
        "stopped_early": result.stopped_early,
        "seconds": result.seconds,
        "results": t.games,
    })
}

/// Writes [`summary_json`] as `match_summary.json` in `store`, whole.
pub fn write_summary(
    store: &Store,
    s: &MatchSettings,
    result: &RunResult,
    sprt: Option<&Sprt>,
) -> Result<(), PlayError> {
    write_json(store, "match_summary.json", &summary_json(s, result, sprt))
}

/// Writes `value` as the object `key` of `store`, whole.
fn write_json(store: &Store, key: &str, value: &Value) -> Result<(), PlayError> {
    let mut text = serde_json::to_string_pretty(value)
        .map_err(|e| PlayError::Game(format!("summary JSON: {e}")))?;
    text.push('\n');
    Ok(store.put(key, text.into_bytes())?)
}
