//! `engine match`: the command line, its short form for scripts
//! (`-bot NAME=MODEL[,key=value...]`, `-games`, `-boardsize`, `-komi`),
//! and the run: table on stdout, `match_summary.json` in the SGF folder.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use clap::Args;

use super::LogFileArg;

use crate::config::Config;
use crate::play::matches::{
    finished_games, load_evaluators, pairs_text, table, write_summary, GameOutcome, MatchRunner,
    MatchSettings, RunManifest, Tally, MANIFEST,
};
use crate::play::stats::{elo_estimate, Sprt, SprtDecision};
use crate::play::{PlayError, SettingsError};
use crate::setup::ConfigArgs;
use crate::store::Store;

/// Flags of `engine match` (KataGo's spelling, plus a short form).
#[derive(Debug, Args)]
pub struct MatchArgs {
    /// `-config` (`configs/match.toml`, or KataGo's `match.cfg`) and
    /// `-override-config`.
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Folder for the games' SGFs and `match_summary.json` (a path or an
    /// `s3://` URL).
    #[arg(long = "sgf-output-dir")]
    pub sgf_output_dir: String,
    /// `-log-file`.
    #[command(flatten)]
    pub log: LogFileArg,
    /// A human-style net (KataGo's human SL nets) beside every bot's own:
    /// each bot's `humanSLProfile`/`humanSL*` keys (suffixed with its
    /// index for one bot) decide whom it imitates and how much.
    #[arg(long = "human-model")]
    pub human_model: Option<PathBuf>,
    /// A bot, `NAME=MODEL[,key=value...]` (search keys for this bot);
    /// repeat for each bot. Replaces the config's bots and their suffixed
    /// keys (`maxVisits1`...).
    #[arg(long = "bot")]
    pub bot: Vec<String>,
    /// Games in all (`numGamesTotal`).
    #[arg(long)]
    pub games: Option<u64>,
    /// Board size of every game (`bSizes`).
    #[arg(long)]
    pub boardsize: Option<usize>,
    /// Komi of every game (`komiMean`).
    #[arg(long, allow_negative_numbers = true)]
    pub komi: Option<f64>,
    /// Games played at once (`numGameThreads`).
    #[arg(long = "game-threads")]
    pub game_threads: Option<usize>,
    /// Seed of the openings, sizes and rules (`matchSeed`).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Two bots only: stop when the SPRT `elo0,elo1[,alpha,beta]` decides
    /// on the pairs of games (one opening, colours swapped) finished so far
    /// (Elo of the first bot over the second; alpha, beta default 0.05).
    #[arg(long, allow_hyphen_values = true)]
    pub sprt: Option<String>,
    /// Go on with the match whose games are in `-sgf-output-dir` (after a
    /// stop or a kill): its finished games count and only the missing
    /// ones of its schedule are played. Its settings must be the run's
    /// (`match_run.json`), but for the pace: games, game threads, NN
    /// threads, batch, cache and memory may change.
    #[arg(long)]
    pub resume: bool,
}

/// Runs `engine match`.
pub fn run(args: &MatchArgs) -> crate::exit::CommandResult {
    run_inner(args)
        .map(|()| crate::exit::Exit::Success)
        .map_err(|e| crate::exit::CommandError::new(e.failure(), e))
}

fn set(cfg: &mut Config, key: &str, value: toml::Value) {
    cfg.set(key, value);
}

/// Whether `key` is one bot's setting in a match config: a known key with
/// the bot's index as suffix (`botName0`, `nnModelFile1`, `maxVisits1`,
/// `nnPrecision0`), not a server thread's (`cudaDeviceToUseThread0`).
fn is_bot_key(key: &str) -> bool {
    let base = key.trim_end_matches(|c: char| c.is_ascii_digit());
    base.len() < key.len()
        && !base.is_empty()
        && !base.ends_with("ToUseThread")
        && crate::config::KNOWN_KEYS.binary_search(&base).is_ok()
}

/// The config with the short-form flags written into it under KataGo's
/// key names. `-bot` flags replace the config's bots with all their keys
/// (a config's `maxVisits1 = 8` does not reach the second `-bot`); the
/// dropped keys are returned for the log.
pub fn apply_short_form(cfg: &mut Config, args: &MatchArgs) -> Result<Vec<String>, PlayError> {
    let mut dropped = Vec::new();
    if !args.bot.is_empty() {
        dropped = cfg.remove_keys_where(is_bot_key);
        set(cfg, "numBots", toml::Value::Integer(args.bot.len() as i64));
        for (i, spec) in args.bot.iter().enumerate() {
            let (head, rest) = spec.split_once(',').unwrap_or((spec.as_str(), ""));
            let Some((name, model)) = head.split_once('=') else {
                return Err(PlayError::Usage(format!(
                    "-bot wants NAME=MODEL[,key=value...], got {spec:?}"
                )));
            };
            let (name, model) = (name.trim(), model.trim());
            if name.is_empty() || model.is_empty() {
                return Err(PlayError::Usage(format!(
                    "-bot wants NAME=MODEL[,key=value...], got {spec:?}"
                )));
            }
            set(
                cfg,
                &format!("botName{i}"),
                toml::Value::String(name.into()),
            );
            set(
                cfg,
                &format!("nnModelFile{i}"),
                toml::Value::String(model.into()),
            );
            for kv in rest.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                let Some((k, v)) = kv.split_once('=') else {
                    return Err(PlayError::Usage(format!(
                        "-bot {name}: {kv:?} is not key=value"
                    )));
                };
                cfg.apply_overrides(&format!("{}{i}={}", k.trim(), v.trim()))
                    .map_err(Box::new)?;
            }
        }
    }
    if let Some(g) = args.games {
        set(cfg, "numGamesTotal", toml::Value::Integer(g as i64));
    }
    if let Some(b) = args.boardsize {
        set(cfg, "bSizes", toml::Value::String(b.to_string()));
        set(cfg, "bSizeRelProbs", toml::Value::String("1".into()));
    }
    if let Some(k) = args.komi {
        set(cfg, "komiMean", toml::Value::Float(k));
    }
    if let Some(t) = args.game_threads {
        set(cfg, "numGameThreads", toml::Value::Integer(t as i64));
    }
    if let Some(s) = args.seed {
        set(cfg, "matchSeed", toml::Value::Integer(s as i64));
    }
    Ok(dropped)
}

fn run_inner(args: &MatchArgs) -> Result<(), PlayError> {
    let mut cfg = args.config.load().map_err(Box::new)?;
    let dropped_bot_keys = apply_short_form(&mut cfg, args)?;
    crate::setup::refuse_human_keys_without_human_model(&cfg, args.human_model.is_some())
        .map_err(|e| PlayError::Usage(e.to_string()))?;
    let mut settings = MatchSettings::from_config(&cfg, "numGamesTotal", true)?;
    let human = match &args.human_model {
        Some(path) => {
            let net =
                crate::setup::load_human_network(path, &cfg, settings.num_game_threads.max(8))
                    .map_err(|e| PlayError::Model(format!("{}: {e}", path.display())))?;
            Some(net.evaluator)
        }
        None => None,
    };
    for (i, bot) in settings.bots.iter_mut().enumerate() {
        bot.patterns = crate::setup::avoid_sgf_pattern_table(&cfg, i)
            .map_err(|e| SettingsError::Invalid(e.to_string()))?;
        bot.human = human.clone();
    }
    let sprt = match &args.sprt {
        Some(text) => {
            if settings.bots.len() != 2 {
                return Err(PlayError::Usage(format!(
                    "-sprt needs exactly two bots, the config has {}",
                    settings.bots.len()
                )));
            }
            Some(Sprt::parse(text).map_err(PlayError::Usage)?)
        }
        None => None,
    };
    let log = args.log.logger("engine match")?;
    if !dropped_bot_keys.is_empty() {
        log.line(&format!(
            "-bot replaces the config's bots: their keys {} are not read",
            dropped_bot_keys.join(", ")
        ));
    }
    let evaluators = load_evaluators(&settings.bots, &cfg, settings.num_game_threads.max(8), &log)?;
    for line in crate::setup::config_key_report(&cfg, "engine match") {
        log.line(&line);
    }
    for note in crate::setup::MemoryBudget::notes(&cfg, 2 * settings.num_game_threads.max(1)) {
        log.line(&note);
    }
    let sgf_dir = Store::open_str(&args.sgf_output_dir)?;
    let (manifest, played) = run_manifest(args, &cfg, &settings, &sgf_dir)?;
    settings.seed = Some(manifest.seed);
    let runner = MatchRunner {
        settings: &settings,
        evaluators,
        sgf_dir: sgf_dir.clone(),
        run_name: manifest.run_name.clone(),
        log: &log,
    };
    log.line(&format!(
        "{} bots, {} games, {} at once, sgfs in {}{}",
        settings.bots.len(),
        settings.num_games_total,
        settings.num_game_threads,
        sgf_dir.url(),
        if args.resume {
            format!(
                "; resuming {}: {} games already played",
                manifest.run_name,
                played.games.len()
            )
        } else {
            String::new()
        }
    ));
    let start = Instant::now();
    let logged = AtomicU64::new(0);
    let on_game = |t: &Tally, o: &GameOutcome| {
        let done = t.games.len() as u64;
        let last = logged.load(Ordering::Relaxed);
        if !done.is_multiple_of(settings.log_games_every) && done != settings.num_games_total {
            return;
        }
        if last >= done {
            return;
        }
        logged.store(done, Ordering::Relaxed);
        let mut line = format!(
            "[{:.0}s] {done}/{} games; last: {} (B) vs {} (W) {} in {} moves",
            start.elapsed().as_secs_f64(),
            settings.num_games_total,
            settings.bots[o.black].name,
            settings.bots[o.white].name,
            o.result_text,
            o.num_moves
        );
        if settings.bots.len() == 2 {
            let r = t.table[0][1];
            let e = elo_estimate(&r);
            line.push_str(&format!(
                "; {} {}-{}-{} vs {}, elo {:+.0} [{:+.0}, {:+.0}]",
                settings.bots[0].name,
                r.wins,
                r.losses,
                r.draws,
                settings.bots[1].name,
                e.elo,
                e.low,
                e.high
            ));
            if let Some(p) = &sprt {
                let pairs = t.pairs(0, 1);
                line.push_str(&format!(
                    "; pairs {}, LLR {:.2}",
                    pairs_text(&pairs),
                    p.llr(&pairs)
                ));
            }
        }
        log.line(&line);
    };
    let should_stop =
        |t: &Tally| sprt.is_some_and(|p| p.decide(&t.pairs(0, 1)) != SprtDecision::Continue);
    let result = runner.run_from(played, &should_stop, &on_game)?;
    let text = table(&settings, &result.tally, sprt.as_ref());
    print!("{text}");
    let summary_path = sgf_dir.describe("match_summary.json");
    write_summary(&sgf_dir, &settings, &result, sprt.as_ref())?;
    log.line(&format!(
        "{} games in {:.1} s{}; summary {}",
        result.tally.games.len(),
        result.seconds,
        if result.stopped_early {
            " (stopped early by the SPRT)"
        } else {
            ""
        },
        summary_path
    ));
    Ok(())
}

/// The run to play: a new one (its manifest written before the first
/// game, with the seed drawn here when the config has none) or, with
/// `-resume`, the one in the SGF folder with its finished games, refused
/// when its settings differ from these.
fn run_manifest(
    args: &MatchArgs,
    cfg: &Config,
    settings: &MatchSettings,
    sgf_dir: &Store,
) -> Result<(RunManifest, Tally), PlayError> {
    let run_name = format!(
        "match-{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    );
    let mut now = RunManifest::new(&run_name, settings.seed.unwrap_or_else(rand::random), cfg);
    if let Some(path) = &args.human_model {
        now.settings.insert(
            "-human-model".into(),
            serde_json::Value::String(path.display().to_string()),
        );
    }
    if !args.resume {
        now.write(sgf_dir)?;
        return Ok((now, Tally::new(settings.bots.len())));
    }
    let Some(then) = RunManifest::read(sgf_dir)? else {
        return Err(PlayError::Usage(format!(
            "-resume: {} is missing: {} holds no match this version can go on with",
            sgf_dir.describe(MANIFEST),
            sgf_dir.url()
        )));
    };
    let differences = then.differences(&now);
    if !differences.is_empty() {
        return Err(PlayError::Usage(format!(
            "-resume: {} was started with other settings ({}); give the run's own",
            then.run_name,
            differences.join("; ")
        )));
    }
    let played = finished_games(sgf_dir, &then, settings)?;
    Ok((then, played))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(bots: &[&str]) -> MatchArgs {
        MatchArgs {
            config: ConfigArgs::default(),
            sgf_output_dir: "x".into(),
            log: LogFileArg::default(),
            human_model: None,
            bot: bots.iter().map(|s| s.to_string()).collect(),
            games: Some(6),
            boardsize: Some(9),
            komi: Some(-3.5),
            game_threads: Some(3),
            seed: Some(5),
            sprt: None,
            resume: false,
        }
    }

    #[test]
    fn short_form_fills_katago_keys() {
        let mut cfg = Config::default();
        apply_short_form(
            &mut cfg,
            &args(&[
                "strong=a.bin.gz,maxVisits=32",
                "weak=b.bin.gz,maxVisits=8,cpuctExploration=2",
            ]),
        )
        .unwrap();
        let s = MatchSettings::from_config(&cfg, "numGamesTotal", true).unwrap();
        assert_eq!(s.bots.len(), 2);
        assert_eq!(s.bots[0].name, "strong");
        assert_eq!(s.bots[1].model, PathBuf::from("b.bin.gz"));
        assert_eq!(s.bots[0].params.max_visits, 32);
        assert_eq!(s.bots[1].params.max_visits, 8);
        assert_eq!(s.bots[1].params.cpuct_exploration, 2.0);
        assert_eq!(s.num_games_total, 6);
        assert_eq!(s.board_sizes, vec![9]);
        assert_eq!(s.komi, -3.5);
        assert_eq!(s.num_game_threads, 3);
        assert_eq!(s.seed, Some(5));
    }

    #[test]
    fn bots_replace_the_configs_bots_with_their_keys() {
        let mut cfg = Config::from_toml_str(
            "numBots = 2\nbotName0 = \"strong\"\nmaxVisits0 = 32\nmaxVisits1 = 8\n\
             nnPrecision1 = \"bf16\"\nmaxVisits = 100\ncudaDeviceToUseThread0 = 1\n",
            "m.toml",
        )
        .unwrap();
        let dropped =
            apply_short_form(&mut cfg, &args(&["a=a.bin.gz", "b=b.bin.gz,maxVisits=50"])).unwrap();
        assert_eq!(
            dropped,
            ["botName0", "maxVisits0", "maxVisits1", "nnPrecision1"].map(String::from)
        );
        let s = MatchSettings::from_config(&cfg, "numGamesTotal", true).unwrap();
        assert_eq!(s.bots[0].name, "a");
        // The plain key reaches a -bot without its own; the config's
        // maxVisits0 does not.
        assert_eq!(s.bots[0].params.max_visits, 100);
        assert_eq!(s.bots[1].params.max_visits, 50);
        assert_eq!(s.bots[1].precision, None);
        // A server thread's key is not a bot's.
        assert!(cfg.contains("cudaDeviceToUseThread0"));
        // Without -bot the config's bots stay.
        let mut cfg = Config::from_toml_str("maxVisits1 = 8\n", "m.toml").unwrap();
        let mut no_bots = args(&[]);
        no_bots.games = None;
        assert!(apply_short_form(&mut cfg, &no_bots).unwrap().is_empty());
        assert!(cfg.contains("maxVisits1"));
    }

    #[test]
    fn short_form_rejects_bad_bots() {
        for bad in ["noequals", "=model", "name=", "a=b,novalue"] {
            let mut cfg = Config::default();
            assert!(apply_short_form(&mut cfg, &args(&[bad])).is_err(), "{bad}");
        }
    }
}
