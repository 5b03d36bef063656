//! The config's game options (`preventCleanupPhase`,
//! `assumeMultipleStartingBlackMovesAreHandicap`) survive every command that
//! starts a new game (issue 11): each is set to its non-default value, each
//! new-game command is run, and the effect is observed.

use super::*;
use crate::game::{GameOptions, Player, Rules};
use crate::gtp::bot::RandomBot;
use crate::gtp::protocol::{parse_line, ParsedLine};
use crate::gtp::settings::GtpSettings;

fn engine(options: GameOptions) -> GtpEngine {
    let settings = GtpSettings {
        game_options: options,
        ..GtpSettings::default()
    };
    GtpEngine::new(
        settings,
        Box::new(RandomBot::new(1)),
        Output::new(Box::new(std::io::sink())),
        false,
    )
    .unwrap()
}

fn run(e: &mut GtpEngine, line: &str) -> String {
    let ParsedLine::Command(c) = parse_line(line) else {
        panic!("not a command: {line}");
    };
    match e.handle(&c) {
        Handled::Ok(s) => s,
        Handled::Err(s) => panic!("{line}: {s}"),
        Handled::Written | Handled::Quit => String::new(),
    }
}

/// Black's wall on column E, White's on F, then three pairs of passes:
/// enough to go through both encore phases to the end of a game when the
/// cleanup phase is allowed.
fn walls_and_passes() -> Vec<String> {
    let mut v = Vec::new();
    for row in (1..=9).rev() {
        v.push(format!("play b E{row}"));
        v.push(format!("play w F{row}"));
    }
    for _ in 0..3 {
        v.push("play b pass".into());
        v.push("play w pass".into());
    }
    v
}

const JAPANESE_SGF: &str = "(;GM[1]FF[4]SZ[9]KM[6]RU[Japanese]\
    ;B[ea];W[fa];B[eb];W[fb];B[ec];W[fc];B[ed];W[fd];B[ee];W[fe]\
    ;B[ef];W[ff];B[eg];W[fg];B[eh];W[fh];B[ei];W[fi]\
    ;B[];W[];B[];W[];B[];W[])";

fn allow_cleanup() -> GameOptions {
    GameOptions {
        prevent_cleanup_phase: false,
        ..GameOptions::default()
    }
}

/// Plays the walls and passes under Japanese rules (komi 6) and returns
/// whether the game finished and the final score.
fn japanese_game(e: &mut GtpEngine) -> (bool, u8) {
    run(e, "kata-set-rules japanese");
    run(e, "komi 6");
    for cmd in walls_and_passes() {
        run(e, &cmd);
    }
    (e.game().is_finished(), e.game().history().encore_phase())
}

#[test]
fn prevent_cleanup_phase_false_survives_new_games() {
    // Default (true): the passes never start the encore.
    let mut d = engine(GameOptions::default());
    run(&mut d, "boardsize 9");
    assert_eq!(japanese_game(&mut d), (false, 0));

    let mut e = engine(allow_cleanup());
    for new_game in [
        "boardsize 9",
        "clear_board",
        "rectangular_boardsize 9 9",
        "clear_board",
    ] {
        run(&mut e, new_game);
        let (finished, _) = japanese_game(&mut e);
        assert!(finished, "after {new_game}: the encore ran to the end");
        // Exact territory score: Black 36 points, White 27 + komi 6.
        assert_eq!(run(&mut e, "final_score"), "B+3.0", "after {new_game}");
    }
}

#[test]
fn prevent_cleanup_phase_false_survives_loadsgf() {
    let dir = std::env::temp_dir().join(format!("engine-gtp-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("japanese.sgf");
    std::fs::write(&path, JAPANESE_SGF).unwrap();
    let load = format!("loadsgf {}", path.display());

    let mut d = engine(GameOptions::default());
    run(&mut d, &load);
    assert!(!d.game().is_finished(), "default: no cleanup phase");
    assert_eq!(d.game().history().encore_phase(), 0);

    let mut e = engine(allow_cleanup());
    run(&mut e, &load);
    assert!(
        e.game().is_finished(),
        "loadsgf kept preventCleanupPhase = false"
    );
    assert_eq!(run(&mut e, "final_score"), "B+3.0");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two black moves at the start, then White: with the option on (KataGo's
/// default) they count as handicap stones for White's bonus under Chinese
/// rules; with it off they do not.
fn handicap_bonus(e: &mut GtpEngine, new_game: &str) -> f32 {
    run(e, new_game);
    run(e, "kata-set-rules chinese");
    run(e, "play b C3");
    run(e, "play b G7");
    run(e, "play w E5");
    e.game().history().white_handicap_bonus_score()
}

#[test]
fn assume_multiple_black_moves_are_handicap_survives_new_games() {
    let mut d = engine(GameOptions::default());
    assert_eq!(handicap_bonus(&mut d, "boardsize 9"), 2.0);

    let off = GameOptions {
        assume_multiple_starting_black_moves_are_handicap: false,
        ..GameOptions::default()
    };
    let mut e = engine(off);
    for new_game in ["boardsize 9", "clear_board", "rectangular_boardsize 9 9"] {
        assert_eq!(handicap_bonus(&mut e, new_game), 0.0, "after {new_game}");
    }
    assert_eq!(e.game().options(), off);
}

/// The command table is the only list: every listed command is handled
/// (none answers `unknown command`), and an unlisted one is not.
#[test]
fn every_listed_command_is_handled() {
    let mut e = engine(GameOptions::default());
    let names: Vec<&str> = crate::gtp::known_commands().collect();
    assert_eq!(names.len(), 61);
    for name in names {
        let ParsedLine::Command(c) = parse_line(name) else {
            panic!("{name}");
        };
        if let Handled::Err(text) = e.handle(&c) {
            assert_ne!(text, "unknown command", "{name} is listed but unhandled");
        }
        e.stop_background();
    }
    let ParsedLine::Command(c) = parse_line("xyzzy") else {
        panic!();
    };
    assert!(matches!(e.handle(&c), Handled::Err(t) if t == "unknown command"));
}

/// A random bot standing in for a net of model version 5, which knows only
/// area scoring, superko, no tax and no button.
struct OldNetBot(RandomBot);

impl GtpBot for OldNetBot {
    fn supported_rules(&self, rules: &Rules) -> Option<Rules> {
        crate::nn::supported_rules(5, rules)
    }

    fn search(
        &mut self,
        req: &crate::gtp::bot::SearchRequest<'_>,
        stop: &std::sync::atomic::AtomicBool,
        report: &mut (dyn FnMut(&crate::search::AnalysisSnapshot) + Send),
    ) -> Option<crate::gtp::bot::SearchOutcome> {
        self.0.search(req, stop, report)
    }

    fn estimate_final(&mut self, game: &GtpGame, pla: Player) -> crate::gtp::bot::FinalEstimate {
        self.0.estimate_final(game, pla)
    }

    fn clear_cache(&mut self) {}

    fn param_names(&self) -> Vec<String> {
        self.0.param_names()
    }

    fn get_param(&self, name: &str) -> Option<String> {
        self.0.get_param(name)
    }

    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        self.0.set_param(name, value)
    }
}

/// As KataGo's GTP: rules a net was not trained for are refused by
/// `kata-set-rules` and at start-up, and replaced (with a warning) when an
/// SGF names them.
#[test]
fn rules_an_old_net_does_not_know_are_refused_or_replaced() {
    let old_net_engine = |rules: Rules| {
        let settings = GtpSettings {
            initial_rules: rules,
            ..GtpSettings::default()
        };
        GtpEngine::new(
            settings,
            Box::new(OldNetBot(RandomBot::new(1))),
            Output::new(Box::new(std::io::sink())),
            false,
        )
    };
    let err = old_net_engine(Rules::japanese())
        .err()
        .expect("japanese refused");
    assert!(err.contains("NOT supported by neural net"), "{err}");
    let mut e = old_net_engine(Rules::tromp_taylor()).expect("tromp-taylor is fine");
    let ParsedLine::Command(c) = parse_line("kata-set-rules japanese") else {
        panic!();
    };
    assert!(
        matches!(e.handle(&c), Handled::Err(t) if t.contains("not supported by this neural net version"))
    );
    assert_eq!(
        e.game().rules().scoring_rule,
        crate::game::ScoringRule::Area
    );

    let dir = std::env::temp_dir().join(format!("engine-gtp-old-net-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("japanese.sgf");
    std::fs::write(&path, JAPANESE_SGF).unwrap();
    run(&mut e, &format!("loadsgf {}", path.display()));
    let r = e.game().rules();
    assert_eq!(
        (r.ko_rule, r.scoring_rule, r.tax_rule),
        (
            crate::game::KoRule::Situational,
            crate::game::ScoringRule::Area,
            crate::game::TaxRule::None
        )
    );
    assert_eq!(r.komi, 6.0, "the SGF's komi stays");
    let _ = std::fs::remove_dir_all(&dir);
}
