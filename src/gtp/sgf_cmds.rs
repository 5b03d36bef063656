//! SGF commands: `loadsgf` and `printsgf`.

use crate::game::sgf::{parse_collection, write_sgf, GameRecord};
use crate::game::{Board, Color, Loc, Move, Player, Rules};

use super::engine::GtpEngine;
use crate::numfmt::parse_i64;

impl GtpEngine {
    pub(super) fn loadsgf(&mut self, a: &[String]) -> Result<String, String> {
        let (file, move_number) = match a {
            [f] => (f, None),
            [f, n] => {
                let n = parse_i64(n)
                    .map(|n| n - 1)
                    .filter(|n| (0..=10_000_000).contains(n))
                    .ok_or("Invalid value for moveNumber for loadsgf")?;
                (f, Some(n as usize))
            }
            _ => {
                return Err(format!(
                    "Expected one or two arguments for loadsgf but got '{}'",
                    a.join(" ")
                ))
            }
        };
        let text = std::fs::read_to_string(file).map_err(|_| "Cannot load file".to_string())?;
        let rec = parse_collection(&text)
            .and_then(|trees| {
                trees
                    .first()
                    .map(|t| t.record())
                    .unwrap_or_else(|| Ok(GameRecord::new(19, 19)))
            })
            .map_err(|e| format!("Could not load sgf: {e}"))?;
        let mut rules = *self.game.rules();
        if let Some(ru) = &rec.rules {
            match Rules::parse_without_komi(ru, rules.komi) {
                Ok(r) => rules = r,
                Err(e) => crate::logfile::startup(&format!(
                    "WARNING: could not read rules {ru:?} from sgf ({e}); keeping current rules"
                )),
            }
        }
        if let Some(k) = rec.komi {
            rules.komi = k;
        }
        if let Some(supported) = self.bot.lock().supported_rules(&rules) {
            crate::logfile::startup(&format!(
                "WARNING: Rules {} from sgf not supported by neural net, using {} instead",
                rules.to_json(false),
                supported.to_json(false)
            ));
            rules = supported;
        }
        if let Some(k) = self.settings.forced_komi {
            rules.komi = k;
        }
        let mut board =
            Board::new(rec.x_size, rec.y_size).map_err(|e| format!("Could not load sgf: {e}"))?;
        let setup: Vec<(Loc, Color)> = rec
            .setup
            .iter()
            .map(|&(c, (x, y))| (Loc::from_xy(x, y, rec.x_size), c))
            .collect();
        if !board.set_stones_fail_if_no_libs(&setup) {
            return Err("Could not load sgf: invalid setup stones".into());
        }
        let first = rec
            .player_to_move
            .or_else(|| rec.moves.first().map(|(p, _)| *p))
            .unwrap_or(Player::Black);
        let mut game = self.game.clone();
        game.restart(board, first, rules);
        let limit = move_number.unwrap_or(usize::MAX).min(rec.moves.len());
        for &(pla, pt) in &rec.moves[..limit] {
            let mv = match pt {
                Some((x, y)) => Move::Play(Loc::from_xy(x, y, rec.x_size)),
                None => Move::Pass,
            };
            // Tolerant like KataGo: a move onto a stone ends the replay.
            if !game.play(mv, pla) {
                break;
            }
        }
        if rules.komi != self.game.rules().komi {
            crate::logfile::line(&format!("Changing komi to {}", rules.komi));
        }
        self.game = game;
        self.recent_win_loss.clear();
        Ok(String::new())
    }

    pub(super) fn printsgf(&mut self, a: &[String]) -> Result<String, String> {
        if a.len() > 1 {
            return Err(format!(
                "Expected zero or one argument for print but got '{}'",
                a.join(" ")
            ));
        }
        let g = &self.game;
        let (xs, ys) = (g.x_size(), g.y_size());
        let mut rec = GameRecord::new(xs, ys);
        rec.komi = Some(g.rules().komi);
        rec.rules = Some(g.rules().to_compact_string());
        let init = g.initial_board();
        rec.setup = init
            .locs()
            .filter(|&l| init.get(l) != Color::Empty)
            .map(|l| (init.get(l), l.xy(xs)))
            .collect();
        let black_stones = rec.setup.iter().filter(|(c, _)| *c == Color::Black).count();
        if black_stones >= 2 && black_stones == rec.setup.len() {
            rec.handicap = Some(black_stones as u32);
        }
        if !rec.setup.is_empty() {
            rec.player_to_move = Some(g.initial_pla());
        }
        rec.moves = g
            .moves()
            .iter()
            .map(|&(m, p)| (p, m.loc().map(|l| l.xy(xs))))
            .collect();
        let _ = ys;
        let text = write_sgf(&rec);
        match a.first().map(String::as_str) {
            None | Some("-") => Ok(text),
            Some(path) => std::fs::write(path, text + "\n")
                .map(|_| String::new())
                .map_err(|_| format!("Could not open or write to file: {path}")),
        }
    }
}
