//! Fuzz target bodies for the typed settings of the commands that play
//! games (`engine selfplay`, `engine match`, `engine gatekeeper`) and for
//! `engine match`'s short-form arguments (`-bot`, `-sprt`).

use rand::distributions::{Distribution, WeightedIndex};
use rand::rngs::StdRng;
use rand::SeedableRng;

use crate::config::Config;
use crate::game::Board;
use crate::matchplay::{apply_short_form, LogFileArg, MatchArgs};
use crate::play::matches::{gating_decided, GateSettings, MatchSettings};
use crate::play::stats::{elo_estimate, Pentanomial, Sprt, Wld};
use crate::search::{SearchParams, SetupFor};
use crate::selfplay::PlaySettings;
use crate::setup::{config_key_report, search_settings, ConfigArgs};

/// The input read as a TOML file and as a KataGo `.cfg` file (the two
/// forms every command's `-config` takes): each that parses.
fn configs_of(data: &[u8]) -> Vec<Config> {
    let text = String::from_utf8_lossy(data);
    [
        Config::from_toml_str(&text, "fuzz.toml"),
        Config::from_cfg_str(&text, "fuzz.cfg"),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// What a match or a gating does first with its settings
/// (`MatchRunner::make_opening`): draws a board size by the weights, makes
/// the board, draws the rules.
///
/// # Panics
/// When the settings hold no board size to draw.
fn draw_openings(s: &MatchSettings, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    for _ in 0..4 {
        let idx = WeightedIndex::new(&s.board_size_rel_probs)
            .map(|d| d.sample(&mut rng))
            .unwrap_or(0);
        let size = s.board_sizes.get(idx);
        assert!(size.is_some(), "match settings without a board size");
        if let Some(&n) = size {
            let _ = Board::new(n, n);
        }
        let _ = s.draw_rules(&mut rng);
    }
}

/// `engine selfplay`'s config: [`PlaySettings`], the search it runs with
/// and the data queue size, as `selfplay::run` reads them; then what a game
/// does first with the settings (`selfplay::game`): draws a board size by
/// the weights, makes the board, draws the rules.
///
/// # Panics
/// When settings that read hold no board size to draw.
pub fn selfplay_settings(data: &[u8]) {
    for cfg in configs_of(data) {
        let Ok((s, _warnings)) = PlaySettings::from_config(&cfg) else {
            continue;
        };
        let mut overrides = search_settings(&cfg);
        overrides.retain(|(k, _)| k != "rootSymmetryPruning");
        let _ = SearchParams::from_overrides(
            SetupFor::Other,
            overrides.iter().map(|(k, v)| (k.as_str(), v)),
        );
        let _ = crate::selfplay::DATA_QUEUE_SIZE.read(&cfg);
        let mut rng = StdRng::seed_from_u64(data.len() as u64);
        for _ in 0..4 {
            let idx = WeightedIndex::new(&s.board_size_rel_probs)
                .map(|d| d.sample(&mut rng))
                .unwrap_or(0);
            let size = s.board_sizes.get(idx);
            assert!(size.is_some(), "self-play settings without a board size");
            if let Some(&(xs, ys)) = size {
                let _ = Board::new(xs, ys);
            }
            let mut rules = s.rules.draw(&mut rng);
            s.rules.redraw_scoring(&mut rules, &mut rng);
        }
        let _ = cfg.unknown_keys();
    }
}

/// `engine match`'s config: [`MatchSettings`] with its bots (each bot's
/// search from the suffixed keys), the config warnings, and the openings
/// drawn from the settings.
///
/// # Panics
/// When settings that read hold no board size to draw.
pub fn match_settings(data: &[u8]) {
    for cfg in configs_of(data) {
        let Ok(s) = MatchSettings::from_config(&cfg, "numGamesTotal", true) else {
            continue;
        };
        let _ = config_key_report(&cfg, "engine fuzz");
        let _ = cfg.unknown_keys();
        draw_openings(&s, data.len() as u64);
    }
}

/// `engine gatekeeper`'s config: [`GateSettings`] (the match settings of a
/// gating, both bots' search, `requiredCandidateWinProp`), once from the
/// config alone and once with `-required-candidate-win-prop` taken from
/// the input's first 8 bytes; then the early-stop rule on the first games
/// of a gating and the openings drawn from the settings.
///
/// # Panics
/// When settings that read hold no board size to draw.
pub fn gatekeeper_settings(data: &[u8]) {
    let flag = data
        .get(..8)
        .and_then(|b| <[u8; 8]>::try_from(b).ok())
        .map(f64::from_le_bytes);
    for cfg in configs_of(data) {
        for required in [None, flag] {
            let Ok(g) = GateSettings::from_config(&cfg, required) else {
                continue;
            };
            let total = g.base.num_games_total;
            for played in 0..=total.min(4) {
                let _ = gating_decided(played as f64 / 2.0, played, total, g.required);
            }
            draw_openings(&g.base, data.len() as u64);
        }
    }
}

/// `engine match`'s short form: the first line is the `-sprt` value (none
/// when empty), each further line (at most 8) a `-bot` value. They are
/// written into an empty config as `engine match` does
/// ([`apply_short_form`]), the match settings are read from it, and a
/// `-sprt` that parses is evaluated on a few records.
///
/// # Panics
/// When settings that read hold no board size to draw.
pub fn match_args(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.lines();
    let sprt = lines.next().filter(|s| !s.is_empty()).map(str::to_string);
    let args = MatchArgs {
        config: ConfigArgs::default(),
        sgf_output_dir: String::new(),
        log: LogFileArg::default(),
        human_model: None,
        bot: lines.take(8).map(str::to_string).collect(),
        games: None,
        boardsize: None,
        komi: None,
        game_threads: None,
        seed: None,
        sprt,
        resume: false,
    };
    if let Ok(mut cfg) = Config::from_toml_str("", "empty.toml") {
        if apply_short_form(&mut cfg, &args).is_ok() {
            if let Ok(s) = MatchSettings::from_config(&cfg, "numGamesTotal", true) {
                draw_openings(&s, data.len() as u64);
            }
        }
    }
    let Some(Ok(sprt)) = args.sprt.as_deref().map(Sprt::parse) else {
        return;
    };
    let _ = sprt.bounds();
    for (wins, losses, draws) in [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1), (7, 3, 2)] {
        let wld = Wld {
            wins,
            losses,
            draws,
        };
        let _ = sprt.llr(&wld);
        let _ = sprt.decide(&wld);
        let _ = elo_estimate(&wld);
        let pairs = Pentanomial {
            counts: [wins, draws, losses, wins + draws, 0],
        };
        let _ = sprt.llr(&pairs);
        let _ = sprt.decide(&pairs);
        let _ = elo_estimate(&pairs);
    }
}
