//! `avoidSgfPattern*`: the shapes a bot avoids because they stand in some
//! SGF files (KataGo's `Setup::loadAvoidSgfPatternBonusTables`), read once
//! at start-up by `gtp`, `analysis` and `match`.
//!
//! Keys: `avoidSgfPatternUtility` (the penalty; the table exists only when
//! it is set), `avoidSgfPatternDirs` (files or folders, comma-separated),
//! `avoidSgfPatternLambda` (default 1), `avoidSgfPatternMinTurnNumber`
//! (default 0), `avoidSgfPatternMaxFiles` (default 1,000,000),
//! `avoidSgfPatternAllowedNames` (default: everyone). More sets of files,
//! each with its own settings, are `avoidSgf2Pattern*`, `avoidSgf3Pattern*`,
//! ...; in a match config each key may end in the bot's index
//! (`avoidSgfPatternUtility1`), which wins over the key without it.

use std::path::PathBuf;
use std::sync::Arc;

use crate::config::{Config, Key, Row, AUTO_AVOID_SIZED_KEYS};
use crate::search::{
    AutoAvoidRepeat, AutoAvoidSizeSettings, AvoidSgfPatterns, PatternBonusTable, SgfFileOutcome,
};

use super::SetupError;

/// The most sets of files read (`avoidSgfPattern*`, then `avoidSgf2Pattern*`
/// to this): KataGo reads up to 99,999, far more than anyone writes.
const MAX_SETS: usize = 100;

/// The first set's keys; set `n` puts `n` after `avoidSgf`
/// (`avoidSgf2PatternUtility`) and a bot's index may end each one.
const UTILITY: Key<Option<f64>> = Key::opt_real("avoidSgfPatternUtility", -3.0..=3.0)
    .doc("Utility lost for each shape of the SGF files played again; the set exists only when this is set.");
const LAMBDA: Key<f64> = Key::real("avoidSgfPatternLambda", 1.0, 0.0..=1.0)
    .doc("Decay of the penalty per earlier move of the file.");
const MIN_TURN_NUMBER: Key<i64> = Key::int("avoidSgfPatternMinTurnNumber", 0, 0..=1_000_000)
    .doc("Moves of a file before this turn are not avoided.");
const MAX_FILES: Key<i64> = Key::int("avoidSgfPatternMaxFiles", 1_000_000, 1..=1_000_000)
    .doc("The most files read (newest first).");
const ALLOWED_NAMES: Key<Vec<String>> = Key::texts("avoidSgfPatternAllowedNames", "everyone")
    .doc("Only the moves of these player names are avoided.");
const DIRS: Key<Vec<String>> =
    Key::texts("avoidSgfPatternDirs", "none (required with the utility)")
        .doc("SGF files or folders whose shapes are avoided.");

/// `autoAvoidRepeat*`: all required once `autoAvoidRepeatDir` is set; the
/// sized ones may also be given per board size (`...13x13`).
const AUTO_DIR: Key<Option<String>> = Key::opt_text("autoAvoidRepeatDir")
    .doc("Folder where GTP saves the shapes of its games, to avoid repeating them.");
const AUTO_UTILITY: Key<Option<f64>> = Key::opt_real("autoAvoidRepeatUtility", -3.0..=3.0)
    .doc("Utility lost for each shape played again (required with autoAvoidRepeatDir).");
const AUTO_LAMBDA: Key<Option<f64>> = Key::opt_real("autoAvoidRepeatLambda", 0.0..=1.0)
    .doc("Decay of the penalty per earlier move (required with autoAvoidRepeatDir).");
const AUTO_MIN_TURN: Key<Option<i64>> = Key::opt_int("autoAvoidRepeatMinTurnNumber", 0..=1_000_000)
    .doc("First turn avoided (required with autoAvoidRepeatDir).");
const AUTO_MAX_TURN: Key<Option<i64>> = Key::opt_int("autoAvoidRepeatMaxTurnNumber", 0..=1_000_000)
    .doc("Last turn avoided (required with autoAvoidRepeatDir).");
const AUTO_MAX_POSES: Key<Option<i64>> =
    Key::opt_int("autoAvoidRepeatMaxPoses", 0..=1_000_000_000_000)
        .doc("Most positions kept (required with autoAvoidRepeatDir).");
const AUTO_SAVE_CHUNK: Key<i64> =
    Key::int("autoAvoidRepeatSaveChunkSize", 200, 1..=10_000).doc("Games saved per file.");

/// The configuration reference's rows of the `avoidSgfPattern*` keys.
pub fn pattern_rows() -> Vec<Row> {
    [
        UTILITY.setting(),
        LAMBDA.setting(),
        MIN_TURN_NUMBER.setting(),
        MAX_FILES.setting(),
        ALLOWED_NAMES.setting(),
        DIRS.setting(),
    ]
    .iter()
    .map(|s| s.row())
    .collect()
}

/// The configuration reference's rows of the `autoAvoidRepeat*` keys.
pub fn auto_avoid_rows() -> Vec<Row> {
    [
        AUTO_DIR.setting(),
        AUTO_UTILITY.setting(),
        AUTO_LAMBDA.setting(),
        AUTO_MIN_TURN.setting(),
        AUTO_MAX_TURN.setting(),
        AUTO_MAX_POSES.setting(),
        AUTO_SAVE_CHUNK.setting(),
    ]
    .iter()
    .map(|s| s.row())
    .collect()
}

/// The pattern bonus table for bot `bot` (0 outside match), or `None` when
/// no `avoidSgf*PatternUtility` is set. Each file read is logged; an SGF
/// that does not parse is logged and skipped, as KataGo does; a path that
/// does not exist or a bad value is an error.
pub fn avoid_sgf_pattern_table(
    cfg: &Config,
    bot: usize,
) -> Result<Option<Arc<PatternBonusTable>>, SetupError> {
    let mut table: Option<PatternBonusTable> = None;
    for set in 1..=MAX_SETS {
        let Some(avoid) = read_set(cfg, set, bot)? else {
            continue;
        };
        let table = table.get_or_insert_with(PatternBonusTable::new);
        let report = table.add_sgf_files(&avoid).map_err(|e| {
            SetupError::Invalid(format!("avoidSgf{}PatternDirs: {e}", set_tag(set)))
        })?;
        for (file, outcome) in report {
            crate::logfile::startup(&match outcome {
                SgfFileOutcome::Added(n) => format!(
                    "Added {n} shapes to penalize repeats for bot {bot} from {}",
                    file.display()
                ),
                SgfFileOutcome::Invalid(why) => {
                    format!("Invalid SGF {}: {why}", file.display())
                }
            });
        }
    }
    Ok(table.map(Arc::new))
}

/// `""` for the first set, then `"2"`, `"3"`, ...
fn set_tag(set: usize) -> String {
    if set == 1 {
        String::new()
    } else {
        set.to_string()
    }
}

/// One set's settings, or `None` when its utility is not set.
fn read_set(cfg: &Config, set: usize, bot: usize) -> Result<Option<AvoidSgfPatterns>, SetupError> {
    // Set `n`'s name of a key, the bot's own form first, then the shared
    // one; `None` when neither is set.
    let key = |name: &str| {
        let shared = name.replacen("avoidSgf", &format!("avoidSgf{}", set_tag(set)), 1);
        let own = format!("{shared}{bot}");
        if cfg.contains(&own) {
            Some(own)
        } else {
            cfg.contains(&shared).then_some(shared)
        }
    };
    let Some(utility_key) = key(UTILITY.name()) else {
        return Ok(None);
    };
    let bad = |e: crate::config::ConfigError| SetupError::Config(Box::new(e));
    // An absent key reads as its default under any name.
    let named = |k: Option<String>, of: &str| k.unwrap_or_else(|| of.to_string());
    let utility = UTILITY.require_named(cfg, &utility_key).map_err(bad)?;
    let lambda = LAMBDA
        .read_named(cfg, &named(key(LAMBDA.name()), LAMBDA.name()))
        .map_err(bad)?;
    let min_turn_number = MIN_TURN_NUMBER
        .read_named(
            cfg,
            &named(key(MIN_TURN_NUMBER.name()), MIN_TURN_NUMBER.name()),
        )
        .map_err(bad)? as usize;
    let max_files = MAX_FILES
        .read_named(cfg, &named(key(MAX_FILES.name()), MAX_FILES.name()))
        .map_err(bad)? as usize;
    let allowed_names = ALLOWED_NAMES
        .read_named(cfg, &named(key(ALLOWED_NAMES.name()), ALLOWED_NAMES.name()))
        .map_err(bad)?;
    let Some(dirs_key) = key(DIRS.name()) else {
        let prefix = format!("avoidSgf{}Pattern", set_tag(set));
        return Err(SetupError::Invalid(format!(
            "{utility_key} is set but {prefix}Dirs is not: name the SGF files or folders to avoid"
        )));
    };
    let dirs = DIRS.read_named(cfg, &dirs_key).map_err(bad)?;
    Ok(Some(AvoidSgfPatterns {
        utility,
        lambda,
        min_turn_number,
        max_files,
        allowed_names,
        dirs: dirs.into_iter().map(PathBuf::from).collect(),
    }))
}

/// KataGo's automatic avoid patterns for `engine gtp`, or `None` without
/// `autoAvoidRepeatDir`. Every setting must be given (KataGo: "you must
/// ALSO specify the defaults even if you have specified board-size-specific
/// values"); a missing one is an error here at start-up, where KataGo
/// fails at the first load or save that needs it.
pub fn auto_avoid_repeat(cfg: &Config) -> Result<Option<AutoAvoidRepeat>, SetupError> {
    let bad = |e: crate::config::ConfigError| SetupError::Config(Box::new(e));
    let Some(dir) = AUTO_DIR.read(cfg).map_err(bad)? else {
        return Ok(None);
    };
    for key in AUTO_AVOID_SIZED_KEYS {
        if !cfg.contains(key) {
            return Err(SetupError::Invalid(format!(
                "{key} was not specified in the config (autoAvoidRepeatDir needs every autoAvoidRepeat setting)"
            )));
        }
    }
    // One setting, from `key` + `suffix` when set, else from `key`.
    let read = |suffix: &str| -> Result<AutoAvoidSizeSettings, SetupError> {
        let key = |k: &str| {
            let sized = format!("{k}{suffix}");
            if cfg.contains(&sized) {
                sized
            } else {
                k.to_string()
            }
        };
        Ok(AutoAvoidSizeSettings {
            utility: AUTO_UTILITY
                .require_named(cfg, &key(AUTO_UTILITY.name()))
                .map_err(bad)?,
            lambda: AUTO_LAMBDA
                .require_named(cfg, &key(AUTO_LAMBDA.name()))
                .map_err(bad)?,
            min_turn_number: AUTO_MIN_TURN
                .require_named(cfg, &key(AUTO_MIN_TURN.name()))
                .map_err(bad)?,
            max_turn_number: AUTO_MAX_TURN
                .require_named(cfg, &key(AUTO_MAX_TURN.name()))
                .map_err(bad)?,
            max_poses: AUTO_MAX_POSES
                .require_named(cfg, &key(AUTO_MAX_POSES.name()))
                .map_err(bad)? as u64,
        })
    };
    let defaults = read("")?;
    let mut sizes: Vec<(usize, usize)> = cfg
        .keys()
        .filter_map(|k| {
            let base = AUTO_AVOID_SIZED_KEYS.iter().find(|b| k.starts_with(**b))?;
            let (x, y) = k[base.len()..].split_once('x')?;
            Some((x.parse().ok()?, y.parse().ok()?))
        })
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut per_size = Vec::new();
    for (x, y) in sizes {
        per_size.push(((x, y), read(&format!("{x}x{y}"))?));
    }
    let save_chunk_size = AUTO_SAVE_CHUNK.read(cfg).map_err(bad)? as usize;
    Ok(Some(AutoAvoidRepeat {
        dir: PathBuf::from(dir),
        defaults,
        per_size,
        save_chunk_size,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{pattern_hash, Board, Loc, Move, Player};

    fn cfg(text: &str) -> Config {
        Config::from_cfg_str(text, "test.cfg").expect("config")
    }

    #[test]
    fn no_utility_no_table_and_a_missing_folder_is_an_error() {
        assert!(avoid_sgf_pattern_table(&cfg("maxVisits = 10\n"), 0)
            .expect("ok")
            .is_none());
        let e = avoid_sgf_pattern_table(&cfg("avoidSgfPatternUtility = 0.1\n"), 0).unwrap_err();
        assert!(e.to_string().contains("avoidSgfPatternDirs"), "{e}");
        let missing = std::env::temp_dir().join("engine-setup-patterns-no-such-folder");
        let e = avoid_sgf_pattern_table(
            &cfg(&format!(
                "avoidSgfPatternUtility = 0.1\navoidSgfPatternDirs = {}\n",
                missing.display()
            )),
            0,
        )
        .unwrap_err();
        assert!(e.to_string().contains("no such file"), "{e}");
        let e = avoid_sgf_pattern_table(&cfg("avoidSgfPatternUtility = 9\n"), 0).unwrap_err();
        assert!(e.to_string().contains("avoidSgfPatternUtility"), "{e}");
    }

    #[test]
    fn sets_and_per_bot_keys_as_katago() {
        let dir =
            std::env::temp_dir().join(format!("engine-setup-patterns-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let a = dir.join("a.sgf");
        let b = dir.join("b.sgf");
        std::fs::write(&a, "(;SZ[9];B[ee])").expect("write");
        std::fs::write(&b, "(;SZ[9];B[cc])").expect("write");
        let text = format!(
            "avoidSgfPatternUtility = 0.25\navoidSgfPatternDirs = {}\n\
             avoidSgf2PatternUtility = 0.5\navoidSgf2PatternDirs = {}\n\
             avoidSgfPatternUtility1 = 1.0\n",
            a.display(),
            b.display()
        );
        let c = cfg(&text);
        let board = Board::new(9, 9).expect("size");
        let at = |x, y| {
            pattern_hash(&board, Player::Black, Move::Play(Loc::from_xy(x, y, 9))).expect("hash")
        };
        let bot0 = avoid_sgf_pattern_table(&c, 0)
            .expect("bot 0")
            .expect("table");
        assert_eq!(bot0.get(at(4, 4)), 0.25);
        assert_eq!(bot0.get(at(2, 2)), 0.5);
        // Bot 1's own utility for the first set.
        let bot1 = avoid_sgf_pattern_table(&c, 1)
            .expect("bot 1")
            .expect("table");
        assert_eq!(bot1.get(at(4, 4)), 1.0);
        assert_eq!(bot1.get(at(2, 2)), 0.5);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
