//! Going on with a match after a stop (`engine match -resume`).
//!
//! A match's games are fixed by its settings and seed: game `g` has its
//! opening, colours and random stream from `(seed, g)` alone (see
//! [`game_assignment`]). So a match killed after N games can go on by
//! counting the SGFs already in its folder and playing only the missing
//! indices of the same schedule; an SPRT then goes on from the same record
//! as if the run had never stopped. What makes that safe is the run's
//! manifest ([`MANIFEST`], written before the first game): its SGF name
//! prefix, its seed (drawn at random when the config has none) and the
//! config's keys that decide what a game is. A resume whose settings differ
//! is refused with the keys that differ.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::game::{game_comment, GameEnd, GameOutcome, Thinking};
use super::runner::{game_assignment, round_robin, GameSummary, Tally};
use super::settings::MatchSettings;
use crate::config::Config;
use crate::game::sgf::parse_collection;
use crate::game::Player;
use crate::play::PlayError;
use crate::store::Store;

/// The manifest's name in the SGF folder.
pub const MANIFEST: &str = "match_run.json";

/// Config keys that decide how fast, or how many, games are played, not
/// what any game is: a resumed run may change them (more games, another
/// machine's thread counts and memory).
const PACE_KEYS: &[&str] = &[
    "numGamesTotal",
    "numGameThreads",
    "logGamesEvery",
    "numNNServerThreadsPerModel",
    "numEigenThreadsPerModel",
    "nnMaxBatchSize",
    "nnCacheSizePowerOfTwo",
    "maxMemoryMB",
];

/// What a match's games are made from: written at the start of a run,
/// checked when it is resumed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunManifest {
    /// Prefix of the SGF file names (`RUN-000042.sgf` is game 42).
    pub run_name: String,
    /// The seed of the openings, sizes, rules and each game's stream.
    pub seed: u64,
    /// Every config key but [`PACE_KEYS`], flags written in as keys.
    pub settings: BTreeMap<String, serde_json::Value>,
}

impl RunManifest {
    /// The manifest of a run named `run_name` with `seed` and `cfg`.
    pub fn new(run_name: &str, seed: u64, cfg: &Config) -> RunManifest {
        let settings = match cfg.to_json_value() {
            serde_json::Value::Object(map) => map
                .into_iter()
                .filter(|(k, _)| !PACE_KEYS.contains(&k.as_str()))
                .collect(),
            _ => BTreeMap::new(),
        };
        RunManifest {
            run_name: run_name.to_string(),
            seed,
            settings,
        }
    }

    /// Reads the manifest in `dir`; `None` when there is none.
    pub fn read(dir: &Store) -> Result<Option<RunManifest>, PlayError> {
        let Some(bytes) = dir.get_opt(MANIFEST)? else {
            return Ok(None);
        };
        serde_json::from_slice(&bytes).map(Some).map_err(|e| {
            PlayError::Usage(format!(
                "{} is not a match manifest: {e}",
                dir.describe(MANIFEST)
            ))
        })
    }

    /// Writes it to `dir` (whole or not at all).
    pub fn write(&self, dir: &Store) -> Result<(), PlayError> {
        let mut text = serde_json::to_string_pretty(self)
            .map_err(|e| PlayError::Game(format!("manifest: {e}")))?;
        text.push('\n');
        dir.put(MANIFEST, text.into_bytes())?;
        Ok(())
    }

    /// What differs between the run as written and the run as asked now:
    /// the keys set differently (or in one only), as `key: then -> now`.
    pub fn differences(&self, now: &RunManifest) -> Vec<String> {
        let keys: std::collections::BTreeSet<&String> =
            self.settings.keys().chain(now.settings.keys()).collect();
        let shown =
            |v: Option<&serde_json::Value>| v.map_or("(unset)".to_string(), |v| v.to_string());
        keys.into_iter()
            .filter(|k| self.settings.get(*k) != now.settings.get(*k))
            .map(|k| {
                format!(
                    "{k}: {} -> {}",
                    shown(self.settings.get(k)),
                    shown(now.settings.get(k))
                )
            })
            .collect()
    }
}

/// The games of `manifest`'s run already in `dir`, read back into a
/// tally: each SGF's index from its name, its players checked against the
/// schedule, its result from `RE` and how it ended from the game comment.
/// A file that is not such a game of this schedule is an error, as is a
/// game beyond `numGamesTotal`.
pub fn finished_games(
    dir: &Store,
    manifest: &RunManifest,
    settings: &MatchSettings,
) -> Result<Tally, PlayError> {
    let pairs = round_robin(settings.bots.len());
    let prefix = format!("{}-", manifest.run_name);
    let mut found: Vec<(u64, String)> = Vec::new();
    for info in dir.list_level("")?.objects {
        let Some(index) = info
            .key
            .strip_prefix(&prefix)
            .and_then(|rest| rest.strip_suffix(".sgf"))
            .filter(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|digits| digits.parse::<u64>().ok())
        else {
            continue;
        };
        found.push((index, info.key));
    }
    found.sort();
    let mut tally = Tally::new(settings.bots.len());
    for (index, key) in found {
        let bad = |why: String| PlayError::Game(format!("{}: {why}", dir.describe(&key)));
        if index >= settings.num_games_total {
            return Err(bad(format!(
                "game {index} is beyond the match's {} games (numGamesTotal)",
                settings.num_games_total
            )));
        }
        let bytes = dir.get(&key)?;
        let text = std::str::from_utf8(&bytes).map_err(|e| bad(e.to_string()))?;
        let (outcome, summary) = read_game(text, index, &key, settings, &pairs).map_err(bad)?;
        tally.add(index, &outcome);
        tally.games.push(summary);
    }
    Ok(tally)
}

/// One SGF of the run as the tally counts it.
fn read_game(
    text: &str,
    index: u64,
    key: &str,
    settings: &MatchSettings,
    pairs: &[(usize, usize)],
) -> Result<(GameOutcome, GameSummary), String> {
    let trees = parse_collection(text).map_err(|e| e.to_string())?;
    let record = trees
        .first()
        .ok_or("no game in the file")?
        .record()
        .map_err(|e| e.to_string())?;
    let (opening, black, white) = game_assignment(index, pairs);
    let (black_name, white_name) = (&settings.bots[black].name, &settings.bots[white].name);
    if record.player_black.as_deref() != Some(black_name.as_str())
        || record.player_white.as_deref() != Some(white_name.as_str())
    {
        return Err(format!(
            "its players are {:?} (B) and {:?} (W), game {index} of this match is {black_name} (B) \
             against {white_name} (W)",
            record.player_black.unwrap_or_default(),
            record.player_white.unwrap_or_default()
        ));
    }
    let comment = record.game_comment.unwrap_or_default();
    if !comment.starts_with(&format!("{},", game_comment(index, opening))) {
        return Err(format!(
            "its comment {comment:?} does not name game {index}, opening {opening}"
        ));
    }
    let end_name = comment.rsplit_once("end=").map(|(_, e)| e.trim());
    let Some(end) = GameEnd::ALL
        .into_iter()
        .find(|e| Some(e.comment_name()) == end_name)
    else {
        return Err(format!("its comment {comment:?} does not say how it ended"));
    };
    let result = record.result.unwrap_or_default();
    let (winner, no_result, white_minus_black) = parse_result(&result)
        .ok_or_else(|| format!("its result RE[{result}] is not B+..., W+..., 0 or Void"))?;
    let outcome = GameOutcome {
        black,
        white,
        winner,
        no_result,
        end,
        white_minus_black,
        num_moves: record.moves.len(),
        result_text: result.clone(),
        sgf: String::new(),
        black_thinking: Thinking::from_comment(&comment, Player::Black).unwrap_or_default(),
        white_thinking: Thinking::from_comment(&comment, Player::White).unwrap_or_default(),
    };
    let summary = GameSummary {
        index,
        black: black_name.clone(),
        white: white_name.clone(),
        result,
        end,
        moves: record.moves.len(),
        sgf: key.to_string(),
    };
    Ok((outcome, summary))
}

/// `RE` as the match writes it: (winner, no result, White's lead where
/// the text gives it, else 0).
fn parse_result(text: &str) -> Option<(Option<Player>, bool, f32)> {
    match text.trim() {
        "0" | "Draw" => return Some((None, false, 0.0)),
        "Void" => return Some((None, true, 0.0)),
        _ => {}
    }
    let (who, margin) = text.trim().split_once('+')?;
    let winner = match who {
        "B" => Player::Black,
        "W" => Player::White,
        _ => return None,
    };
    let lead = match margin {
        "R" | "Resign" | "T" | "Time" | "F" | "Forfeit" | "" => 0.0,
        number => number.parse::<f32>().ok()?,
    };
    let white_minus_black = if winner == Player::White { lead } else { -lead };
    Some((Some(winner), false, white_minus_black))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_read_back() {
        assert_eq!(parse_result("B+R"), Some((Some(Player::Black), false, 0.0)));
        assert_eq!(
            parse_result("W+3.5"),
            Some((Some(Player::White), false, 3.5))
        );
        assert_eq!(
            parse_result("B+12"),
            Some((Some(Player::Black), false, -12.0))
        );
        assert_eq!(parse_result("0"), Some((None, false, 0.0)));
        assert_eq!(parse_result("Void"), Some((None, true, 0.0)));
        for bad in ["", "X+R", "B+lots", "won", "B"] {
            assert_eq!(parse_result(bad), None, "{bad}");
        }
    }

    fn manifest(text: &str) -> RunManifest {
        RunManifest::new("match-1", 7, &Config::from_toml_str(text, "t").unwrap())
    }

    #[test]
    fn pace_keys_may_change_and_others_may_not() {
        let then = manifest("numBots = 2\nnumGamesTotal = 100\nnumGameThreads = 2\nkomiMean = 7.0");
        let faster =
            manifest("numBots = 2\nnumGamesTotal = 400\nnumGameThreads = 8\nkomiMean = 7.0");
        assert!(then.differences(&faster).is_empty());
        let other = manifest("numBots = 2\nkomiMean = 6.5\nmaxVisits0 = 100");
        assert_eq!(
            then.differences(&other),
            vec!["komiMean: 7 -> 6.5", "maxVisits0: (unset) -> 100"]
        );
    }
}
