//! KataGo's automatic avoid patterns (`autoAvoidRepeat*`,
//! `Setup::saveAutoPatternBonusData` and
//! `PatternBonusTable::avoidRepeatedPosMovesAndDeleteExcessFiles`): a GTP
//! bot saves the position and move of each genmove to a folder, one
//! sub-folder per board size, and at start-up and each new game builds a
//! pattern bonus table against them, newest first, each older move
//! weighing `lambda` less, deleting the files past `maxPoses`.
//!
//! The files are KataGo's: `<folder>/<X>x<Y>/<hex>_poses.txt`, one
//! position sample per line as KataGo's `PositionSample::toJsonLine`, so
//! KataGo and this engine can share a folder. Each file is written whole
//! (a temporary name, then a rename) and read only when its name ends in
//! `poses.txt`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{newest_first, PatternBonusTable};
use crate::game::{Board, Color, Loc, Move, Player};

/// The settings of one board size (each may be set per size with the
/// size appended: `autoAvoidRepeatUtility13x13`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AutoAvoidSizeSettings {
    /// `autoAvoidRepeatUtility`: the penalty per saved move.
    pub utility: f64,
    /// `autoAvoidRepeatLambda`: each older move counts this much less.
    pub lambda: f64,
    /// `autoAvoidRepeatMinTurnNumber`: earlier moves are not saved or used.
    pub min_turn_number: i64,
    /// `autoAvoidRepeatMaxTurnNumber`: later moves are not saved or used.
    pub max_turn_number: i64,
    /// `autoAvoidRepeatMaxPoses`: files past this many moves are deleted.
    pub max_poses: u64,
}

/// `autoAvoidRepeat*`: where the moves are kept and how they count.
#[derive(Debug, Clone, PartialEq)]
pub struct AutoAvoidRepeat {
    /// `autoAvoidRepeatDir`.
    pub dir: PathBuf,
    /// The settings without a size.
    pub defaults: AutoAvoidSizeSettings,
    /// Sizes with settings of their own: `(x, y)` and the resolved settings.
    pub per_size: Vec<((usize, usize), AutoAvoidSizeSettings)>,
    /// `autoAvoidRepeatSaveChunkSize`: moves gathered before a save.
    pub save_chunk_size: usize,
}

/// One move a bot played, where it played it: KataGo's moveless
/// `PositionSample` with the move as its hint.
#[derive(Debug, Clone, PartialEq)]
pub struct PositionSample {
    /// The board before the move.
    pub board: Board,
    /// Who played.
    pub next_pla: Player,
    /// The position's turn number.
    pub initial_turn_number: i64,
    /// The move played (`None`: KataGo's null location).
    pub hint: Option<Move>,
    /// The sample's weight (1 for a genmove).
    pub weight: f64,
}

/// What loading a folder of saved moves did, for the log.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AutoAvoidLoad {
    /// Moves entered into the table.
    pub poses_used: usize,
    /// Lines skipped: outside the turn range, with moves, or with a move
    /// that is not legal where it was saved.
    pub poses_invalid: usize,
    /// Lines that did not parse (or files that could not be read).
    pub load_errors: usize,
    /// Files deleted for being past `maxPoses`.
    pub deleted: Vec<PathBuf>,
}

impl PositionSample {
    /// KataGo's `toJsonLine`, keys in its (sorted) order.
    pub fn to_json_line(&self) -> String {
        let b = &self.board;
        let (xs, ys) = (b.x_size(), b.y_size());
        let mut rows = String::with_capacity((xs + 1) * ys);
        for y in 0..ys {
            for x in 0..xs {
                rows.push(match b.get(Loc::from_xy(x, y, xs)) {
                    Color::Black => 'X',
                    Color::White => 'O',
                    Color::Empty | Color::Wall => '.',
                });
            }
            rows.push('/');
        }
        let hint = self.hint.map_or("null".to_string(), |m| m.to_gtp(xs, ys));
        let json = |v: Value| v.to_string();
        format!(
            "{{\"board\":{},\"hintLoc\":{},\"initialTurnNumber\":{},\"moveLocs\":[],\"movePlas\":[],\"nextPla\":{},\"weight\":{},\"xSize\":{xs},\"ySize\":{ys}}}",
            json(Value::from(rows)),
            json(Value::from(hint)),
            self.initial_turn_number,
            json(Value::from(self.next_pla.letter().to_string())),
            json(Value::from(self.weight)),
        )
    }

    /// KataGo's `ofJsonLine` for a moveless sample; `Ok(None)` for one
    /// with moves (auto avoid patterns use moveless records only).
    pub fn of_json_line(line: &str) -> Result<Option<PositionSample>, String> {
        let v: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
        let int = |k: &str| {
            v.get(k)
                .and_then(Value::as_i64)
                .ok_or(format!("no integer {k}"))
        };
        let text = |k: &str| {
            v.get(k)
                .and_then(Value::as_str)
                .ok_or(format!("no string {k}"))
        };
        let (xs, ys) = (int("xSize")?, int("ySize")?);
        let size = |n: i64| usize::try_from(n).map_err(|_| format!("bad size {n}"));
        let mut board = Board::new(size(xs)?, size(ys)?).map_err(|e| e.to_string())?;
        let rows: Vec<&str> = text("board")?
            .trim()
            .split('/')
            .filter(|r| !r.is_empty())
            .collect();
        if rows.len() != board.y_size() {
            return Err("board has the wrong number of rows".into());
        }
        let mut stones = Vec::new();
        for (y, row) in rows.iter().enumerate() {
            let row: Vec<char> = row.trim().chars().collect();
            if row.len() != board.x_size() {
                return Err("board row has the wrong length".into());
            }
            for (x, c) in row.into_iter().enumerate() {
                let color = match c {
                    'x' | 'X' => Color::Black,
                    'o' | 'O' => Color::White,
                    '.' | ' ' | '*' | ',' | '`' => continue,
                    _ => return Err(format!("bad board character {c:?}")),
                };
                stones.push((Loc::from_xy(x, y, board.x_size()), color));
            }
        }
        if !board.set_stones_fail_if_no_libs(&stones) {
            return Err("board has a stone without liberties".into());
        }
        let next_pla = Player::parse(text("nextPla")?).ok_or("bad nextPla")?;
        let has_moves = !v
            .get("moveLocs")
            .and_then(Value::as_array)
            .ok_or("no moveLocs")?
            .is_empty();
        if has_moves {
            return Ok(None);
        }
        let hint_text = text("hintLoc")?.trim().to_ascii_lowercase();
        let hint = match hint_text.as_str() {
            "" | "''" | "\"\"" | "null" | "'null'" | "\"null\"" => None,
            h => Some(Move::parse(h, board.x_size(), board.y_size()).map_err(|e| e.to_string())?),
        };
        Ok(Some(PositionSample {
            board,
            next_pla,
            initial_turn_number: int("initialTurnNumber")?,
            hint,
            weight: v.get("weight").and_then(Value::as_f64).unwrap_or(1.0),
        }))
    }
}

impl AutoAvoidRepeat {
    /// The settings for an `x` by `y` board.
    pub fn settings_for(&self, x: usize, y: usize) -> AutoAvoidSizeSettings {
        self.per_size
            .iter()
            .find(|(size, _)| *size == (x, y))
            .map_or(self.defaults, |(_, s)| *s)
    }

    /// The table against every saved move, each board size's folder with
    /// its settings (KataGo's `loadAndPruneAutoPatternBonusTables`), with
    /// what each folder gave. A missing folder is an empty table.
    pub fn load_and_prune(
        &self,
    ) -> Result<(PatternBonusTable, Vec<(PathBuf, AutoAvoidLoad)>), String> {
        let mut table = PatternBonusTable::new();
        let mut report = Vec::new();
        if !self.dir.exists() {
            return Ok((table, report));
        }
        let entries = std::fs::read_dir(&self.dir)
            .map_err(|e| format!("reading {}: {e}", self.dir.display()))?;
        let mut names: Vec<String> = entries
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        names.sort();
        for name in names {
            let Some((x, y)) = parse_size(&name) else {
                continue;
            };
            let path = self.dir.join(&name);
            if !path.is_dir() || Board::new(x, y).is_err() {
                continue;
            }
            let load = table.add_saved_poses(&path, &self.settings_for(x, y));
            report.push((path, load));
        }
        Ok((table, report))
    }

    /// Saves `samples` (those in their size's turn range) to a new file in
    /// each size's folder, named by `file_id` (KataGo's
    /// `saveAutoPatternBonusData`); each file is whole or absent.
    pub fn save(&self, samples: &[PositionSample], file_id: u64) -> Result<(), String> {
        let mut by_size: Vec<((usize, usize), String)> = Vec::new();
        for s in samples {
            let size = (s.board.x_size(), s.board.y_size());
            let settings = self.settings_for(size.0, size.1);
            if s.initial_turn_number < settings.min_turn_number
                || s.initial_turn_number > settings.max_turn_number
            {
                continue;
            }
            let text = match by_size.iter_mut().find(|(k, _)| *k == size) {
                Some((_, text)) => text,
                None => {
                    by_size.push((size, String::new()));
                    &mut by_size.last_mut().expect("just pushed").1
                }
            };
            text.push_str(&s.to_json_line());
            text.push('\n');
        }
        for ((x, y), text) in by_size {
            let folder = self.dir.join(format!("{x}x{y}"));
            std::fs::create_dir_all(&folder)
                .map_err(|e| format!("creating {}: {e}", folder.display()))?;
            let file = folder.join(format!("{file_id:016X}_poses.txt"));
            write_whole(&file, &text)?;
        }
        Ok(())
    }
}

impl PatternBonusTable {
    /// Enters the saved moves under `folder`, newest file first, until
    /// `settings.max_poses` moves are in, and deletes the files past that
    /// (KataGo's `avoidRepeatedPosMovesAndDeleteExcessFiles`).
    fn add_saved_poses(
        &mut self,
        folder: &Path,
        settings: &AutoAvoidSizeSettings,
    ) -> AutoAvoidLoad {
        let mut load = AutoAvoidLoad::default();
        let files = newest_first(poses_files(folder));
        let mut factor = 1.0;
        let mut used_files = 0;
        for file in &files {
            if load.poses_used as u64 >= settings.max_poses {
                break;
            }
            used_files += 1;
            let Ok(text) = std::fs::read_to_string(file) else {
                load.load_errors += 1;
                continue;
            };
            let mut seen = HashSet::new();
            for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
                let sample = match PositionSample::of_json_line(line) {
                    Ok(s) => s,
                    Err(_) => {
                        load.load_errors += 1;
                        continue;
                    }
                };
                let usable = sample.filter(|s| {
                    (settings.min_turn_number..=settings.max_turn_number)
                        .contains(&s.initial_turn_number)
                        && s.hint
                            .is_some_and(|mv| s.board.is_legal(mv, s.next_pla, true))
                });
                let Some(s) = usable else {
                    load.poses_invalid += 1;
                    continue;
                };
                let mv = s.hint.expect("checked above");
                let penalty = settings.utility * factor;
                let bonus = |flip: bool| {
                    let sym_pla = if flip { s.next_pla.opp() } else { s.next_pla };
                    if sym_pla == Player::White {
                        -penalty
                    } else {
                        penalty
                    }
                };
                self.add_shape(&s.board, s.next_pla, mv, bonus, &mut seen);
                load.poses_used += 1;
                factor *= settings.lambda;
            }
        }
        for file in &files[used_files..] {
            if std::fs::remove_file(file).is_ok() {
                load.deleted.push(file.clone());
            }
        }
        load
    }
}

/// `13x13` as `(13, 13)`.
fn parse_size(name: &str) -> Option<(usize, usize)> {
    let (x, y) = name.split_once('x')?;
    Some((x.parse().ok()?, y.parse().ok()?))
}

/// The files under `folder` (recursively) whose names end in `poses.txt`.
fn poses_files(folder: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![folder.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for path in entries.flatten().map(|e| e.path()) {
            if path.is_dir() {
                stack.push(path);
            } else if path.to_string_lossy().ends_with("poses.txt") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Writes `text` to `path` whole or not at all: a temporary file beside
/// it (a name the loader skips), synced, then renamed.
fn write_whole(path: &Path, text: &str) -> Result<(), String> {
    use std::io::Write;
    let tmp = path.with_extension("txt.tmp");
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("writing {}: {e}", path.display())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> AutoAvoidSizeSettings {
        AutoAvoidSizeSettings {
            utility: 0.004,
            lambda: 0.5,
            min_turn_number: 0,
            max_turn_number: 50,
            max_poses: 1000,
        }
    }

    fn sample(mv: &str, turn: i64) -> PositionSample {
        let mut board = Board::new(9, 9).unwrap();
        board.play(Move::parse("E5", 9, 9).unwrap(), Player::Black);
        PositionSample {
            board,
            next_pla: Player::White,
            initial_turn_number: turn,
            hint: Some(Move::parse(mv, 9, 9).unwrap()),
            weight: 1.0,
        }
    }

    #[test]
    fn json_lines_are_katagos_and_read_back() {
        let s = sample("C3", 1);
        let line = s.to_json_line();
        // KataGo 1.17.2's toJsonLine of the same sample (nlohmann sorts keys).
        assert_eq!(
            line,
            "{\"board\":\"........./........./........./........./....X..../........./........./........./........./\",\"hintLoc\":\"C3\",\"initialTurnNumber\":1,\"moveLocs\":[],\"movePlas\":[],\"nextPla\":\"W\",\"weight\":1.0,\"xSize\":9,\"ySize\":9}"
        );
        assert_eq!(PositionSample::of_json_line(&line).unwrap(), Some(s));
        let with_moves = line.replace("\"moveLocs\":[]", "\"moveLocs\":[\"D4\"]");
        assert_eq!(PositionSample::of_json_line(&with_moves).unwrap(), None);
        for bad in [
            "",
            "{}",
            "{\"xSize\":9}",
            &line.replace("X", "Q"),
            &line.replace("\"C3\"", "\"Z99\""),
        ] {
            assert!(PositionSample::of_json_line(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn saved_moves_are_penalised_and_excess_files_deleted() {
        let dir = std::env::temp_dir().join(format!("engine-auto-avoid-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut avoid = AutoAvoidRepeat {
            dir: dir.join("avoid"),
            defaults: settings(),
            per_size: Vec::new(),
            save_chunk_size: 200,
        };
        // Nothing saved yet: an empty table.
        assert!(avoid.load_and_prune().unwrap().0.is_empty());
        avoid.save(&[sample("C4", 1), sample("G7", 60)], 1).unwrap();
        let (table, report) = avoid.load_and_prune().unwrap();
        // G7 was past the last turn saved: only C4's shape, in 16 forms.
        assert_eq!(report.len(), 1);
        assert_eq!(report[0].1.poses_used, 1);
        assert_eq!(table.len(), 16);
        // White played it: its bonus is against White in one colouring and
        // for it in the other.
        let mut values: Vec<f64> = table.entries().map(|(_, b)| b).collect();
        values.sort_by(f64::total_cmp);
        assert_eq!(values.first(), Some(&-0.004));
        assert_eq!(values.last(), Some(&0.004));
        // A second file past maxPoses=1 is deleted, newest kept.
        std::thread::sleep(std::time::Duration::from_millis(20));
        avoid.save(&[sample("D3", 2)], 2).unwrap();
        avoid.defaults.max_poses = 1;
        let (_, report) = avoid.load_and_prune().unwrap();
        assert_eq!(report[0].1.poses_used, 1);
        assert_eq!(report[0].1.deleted.len(), 1);
        assert!(report[0].1.deleted[0].ends_with("0000000000000001_poses.txt"));
        // Per-size settings win over the defaults.
        avoid.per_size.push((
            (9, 9),
            AutoAvoidSizeSettings {
                max_turn_number: 0,
                ..settings()
            },
        ));
        let (table, report) = avoid.load_and_prune().unwrap();
        assert!(table.is_empty());
        assert_eq!(report[0].1.poses_invalid, 1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
