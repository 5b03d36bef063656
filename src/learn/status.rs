//! `engine learn -store URL status`: what a run has done, read from its
//! ledger and lease; and the progress plot the learner redraws each
//! generation.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::lease;
use super::ledger::{GenerationRecord, Ledger};
use super::LearnError;
use crate::store::layout::Run;
use crate::train::plot::{svg, Series};

/// The status report of `run`, as text.
pub fn report(run: &Run) -> Result<String, LearnError> {
    let files = run.learn()?;
    let ledger = Ledger::read(&files)?;
    let mut out = String::new();
    let _ = writeln!(out, "run {}", run.url());
    let _ = match lease::current(&files)? {
        None => writeln!(out, "learner: none has run yet"),
        Some(l) if l.released => writeln!(
            out,
            "learner: stopped (lease {} of {} pid {} released)",
            l.number, l.holder.host, l.holder.pid
        ),
        Some(l) => writeln!(
            out,
            "learner: {} pid {} (lease {}), last heartbeat {} s ago",
            l.holder.host, l.holder.pid, l.number, l.age
        ),
    };
    let models = run.models()?;
    let accepted = models.list()?;
    let newest = models.newest()?;
    let _ = writeln!(
        out,
        "accepted nets: {} in {}; newest {}",
        accepted.len(),
        models.url(),
        newest.as_ref().map_or("-", |m| m.name.as_str())
    );
    let _ = writeln!(out, "rejected nets: {}", run.rejected()?.list()?.len());
    if ledger.records.is_empty() {
        let _ = writeln!(out, "no generation finished yet");
        return Ok(out);
    }
    out.push('\n');
    let _ = writeln!(
        out,
        "{:>4}  {:<34} {:<9} {:>9} {:>16} {:>8} {:>9} {:>7} {:>10} {:>7} {:>7} {:>6}",
        "gen",
        "net",
        "gate",
        "W-L-D",
        "Elo vs prev",
        "Elo sum",
        "rows",
        "games",
        "samples",
        "loss",
        "val",
        "min"
    );
    for r in &ledger.records {
        let g = &r.gate;
        let wld = if g.games() == 0 {
            "-".to_string()
        } else {
            format!("{}-{}-{}", g.wins, g.losses, g.draws)
        };
        let elo = match g.elo() {
            Some((e, lo, hi)) => format!("{} [{}, {}]", fmt_elo(e), fmt_elo(lo), fmt_elo(hi)),
            None => "-".to_string(),
        };
        let loss = |m: &BTreeMap<String, f64>| {
            m.get("loss").map_or("-".to_string(), |v| format!("{v:.3}"))
        };
        let _ = writeln!(
            out,
            "{:>4}  {:<34} {:<9} {:>9} {:>16} {:>8.0} {:>9} {:>7} {:>10} {:>7} {:>7} {:>6.1}",
            r.generation,
            r.candidate,
            if g.accepted { "accepted" } else { "rejected" },
            wld,
            elo,
            r.cumulative_elo,
            r.rows_total(),
            r.games_total(),
            r.train.samples_after,
            loss(&r.train.losses),
            loss(&r.train.val_losses),
            r.seconds / 60.0
        );
    }
    out.push('\n');
    out.push_str(&workers_report(&ledger.records));
    let _ = writeln!(out, "\nplot: {}/progress.svg", files.url());
    Ok(out)
}

/// The status of `run` as JSON: `ledger` (the generation records),
/// `accepted` and `rejected` (net names, oldest first), `lease` (holder,
/// heartbeat age, released) or null.
pub fn report_json(run: &Run) -> Result<String, LearnError> {
    let files = run.learn()?;
    let ledger = Ledger::read(&files)?;
    let names = |dir: crate::store::layout::ModelsDir| -> Result<Vec<String>, LearnError> {
        let mut nets = dir.list()?;
        nets.sort_by(|a, b| a.cmp_age(b));
        Ok(nets.into_iter().map(|m| m.name).collect())
    };
    let lease = lease::current(&files)?.map(|l| {
        serde_json::json!({
            "number": l.number,
            "host": l.holder.host,
            "pid": l.holder.pid,
            "heartbeat_age_seconds": l.age,
            "released": l.released,
        })
    });
    let value = serde_json::json!({
        "run": run.url().to_string(),
        "ledger": ledger.records,
        "accepted": names(run.models()?)?,
        "rejected": names(run.rejected()?)?,
        "lease": lease,
    });
    Ok(format!("{value:#}\n"))
}

fn fmt_elo(e: f64) -> String {
    if e.abs() < 0.5 {
        "0".into()
    } else if e.is_finite() {
        format!("{e:+.0}")
    } else if e > 0.0 {
        "+inf".into()
    } else {
        "-inf".into()
    }
}

/// Games and rows per worker, with games/hour over the last generation
/// and since the worker first appeared in the ledger (rates need two
/// ledger records: a worker seen in one generation only shows `-`).
fn workers_report(records: &[GenerationRecord]) -> String {
    let mut out = String::new();
    let Some(last) = records.last() else {
        return out;
    };
    let hours = |a: &GenerationRecord, b: &GenerationRecord| {
        b.finished_unix.saturating_sub(a.finished_unix) as f64 / 3600.0
    };
    let rate = |games: u64, h: f64| (h > 0.0).then(|| games as f64 / h);
    let fmt = |r: Option<f64>| r.map_or("-".to_string(), |r| format!("{r:.0}"));
    let previous = records.len().checked_sub(2).map(|i| &records[i]);
    let _ = writeln!(
        out,
        "{:<28} {:>8} {:>10} {:>16} {:>18}",
        "worker", "games", "rows", "games/h (last gen)", "games/h (since seen)"
    );
    for (name, w) in &last.workers {
        let games_in = |r: &GenerationRecord| r.workers.get(name).map_or(0, |x| x.games);
        let last_rate =
            previous.and_then(|p| rate(w.games - games_in(p).min(w.games), hours(p, last)));
        let since = records.iter().find(|r| r.workers.contains_key(name));
        let since_rate =
            since.and_then(|s| rate(w.games - games_in(s).min(w.games), hours(s, last)));
        let _ = writeln!(
            out,
            "{:<28} {:>8} {:>10} {:>16} {:>18}",
            name,
            w.games,
            w.rows,
            fmt(last_rate),
            fmt(since_rate)
        );
    }
    let first = &records[0];
    let _ = writeln!(
        out,
        "{:<28} {:>8} {:>10} {:>16} {:>18}",
        "all",
        last.games_total(),
        last.rows_total(),
        fmt(previous.and_then(|p| rate(
            last.games_total() - p.games_total().min(last.games_total()),
            hours(p, last)
        ))),
        fmt(rate(
            last.games_total() - first.games_total().min(last.games_total()),
            hours(first, last)
        ))
    );
    out
}

/// The progress plot: the accepted nets' summed Elo, the training and
/// validation loss, and the rows in the store, per generation.
pub fn progress_svg(ledger: &Ledger) -> String {
    let series = |name: &str, f: &dyn Fn(&GenerationRecord) -> Option<f64>| Series {
        name: name.to_string(),
        points: ledger
            .records
            .iter()
            .filter_map(|r| Some((r.generation as f64, f(r)?)))
            .collect(),
    };
    svg(
        "engine learn: per generation",
        &[
            series("Elo of the accepted nets (sum of gating results)", &|r| {
                Some(r.cumulative_elo)
            }),
            series("training loss per sample", &|r| {
                r.train.losses.get("loss").copied()
            }),
            series("validation loss per sample", &|r| {
                r.train.val_losses.get("loss").copied()
            }),
            series("self-play rows in the store", &|r| {
                Some(r.rows_total() as f64)
            }),
        ],
    )
}
