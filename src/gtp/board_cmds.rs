//! Board commands: `boardsize`, `komi`, `play`, `set_position` and the
//! handicap commands.

use crate::game::{Board, Loc, Move, Player, MAX_LEN, MIN_LEN};

use super::engine::GtpEngine;
use super::position::fixed_handicap_points;
use crate::numfmt::{parse_finite_f64, parse_i64};

impl GtpEngine {
    pub(super) fn boardsize(&mut self, a: &[String]) -> Result<String, String> {
        let int = |s: &str| parse_i64(s);
        let size = match a {
            [one] => match one.split_once(':') {
                Some((x, y)) => int(x).zip(int(y)),
                None => int(one).map(|n| (n, n)),
            },
            [x, y] => int(x).zip(int(y)),
            _ => None,
        };
        let (xs, ys) = size.ok_or_else(|| {
            format!(
                "Expected int argument for boardsize or pair of ints but got '{}'",
                a.join(" ")
            )
        })?;
        // "unacceptable size" is the GTP spec's wording; the range says
        // what would have been accepted.
        let range = MIN_LEN as i64..=MAX_LEN as i64;
        if !range.contains(&xs) || !range.contains(&ys) {
            return Err(format!(
                "unacceptable size: each side must be {MIN_LEN} to {MAX_LEN}"
            ));
        }
        let board = Board::new(xs as usize, ys as usize).map_err(|e| e.to_string())?;
        let rules = *self.game.rules();
        self.game.restart(board, Player::Black, rules);
        self.recent_win_loss.clear();
        self.tsumego_frame = None;
        Ok(String::new())
    }

    pub(super) fn komi(&mut self, a: &[String]) -> Result<String, String> {
        let komi = match a {
            [k] => parse_finite_f64(k),
            _ => None,
        }
        .ok_or_else(|| {
            format!(
                "Expected single float argument for komi but got '{}'",
                a.join(" ")
            )
        })?;
        if !(-400.0..=400.0).contains(&komi) {
            return Err("unacceptable komi".into());
        }
        if (komi * 2.0).fract() != 0.0 {
            return Err("komi must be an integer or half-integer".into());
        }
        let komi = self.settings.forced_komi.unwrap_or(komi as f32);
        self.game.set_komi(komi);
        self.maybe_ponder(!self.game.moves().is_empty());
        Ok(String::new())
    }

    pub(super) fn play(&mut self, a: &[String]) -> Result<String, String> {
        let [colour, vertex] = a else {
            return Err(format!(
                "Expected two arguments for play but got '{}'",
                a.join(" ")
            ));
        };
        let pla =
            Player::parse(colour).ok_or_else(|| format!("Could not parse color: '{colour}'"))?;
        let mv = Move::parse(vertex, self.game.x_size(), self.game.y_size())
            .map_err(|_| format!("Could not parse vertex: '{vertex}'"))?;
        if !self.game.play(mv, pla) {
            return Err("illegal move".into());
        }
        self.maybe_ponder(true);
        Ok(String::new())
    }

    pub(super) fn set_position(&mut self, a: &[String]) -> Result<String, String> {
        let all = a.join(" ");
        let prefix = || {
            format!("Expected a space-separated sequence of <COLOR> <VERTEX> pairs but got '{all}'")
        };
        if !a.len().is_multiple_of(2) {
            return Err(prefix());
        }
        let mut stones = Vec::with_capacity(a.len() / 2);
        for pair in a.chunks(2) {
            let pla = Player::parse(&pair[0])
                .ok_or_else(|| format!("{}: could not parse color: '{}'", prefix(), pair[0]))?;
            let loc = Move::parse(&pair[1], self.game.x_size(), self.game.y_size())
                .ok()
                .and_then(Move::loc)
                .ok_or_else(|| format!("{}: could not parse vertex: '{}'", prefix(), pair[1]))?;
            stones.push((loc, pla.color()));
        }
        if !self.game.set_position(&stones) {
            return Err(
                "Illegal stone placements - overlapping stones or stones with no liberties?".into(),
            );
        }
        self.recent_win_loss.clear();
        Ok(String::new())
    }

    pub(super) fn parse_handicap_count(&self, cmd: &str, a: &[String]) -> Result<usize, String> {
        let [n] = a else {
            return Err(format!(
                "Expected one argument for {cmd} but got '{}'",
                a.join(" ")
            ));
        };
        let count = parse_i64(n)
            .ok_or_else(|| format!("Could not parse number of handicap stones: '{n}'"))?;
        if count < 2 {
            return Err(format!("Number of handicap stones less than 2: '{n}'"));
        }
        if !self.game.board().is_empty() {
            return Err("Board is not empty".into());
        }
        Ok(count as usize)
    }

    pub(super) fn handicap_response(&self) -> String {
        self.game.stone_vertices(|_| true).join(" ")
    }

    pub(super) fn fixed_handicap(&mut self, a: &[String]) -> Result<String, String> {
        let n = self.parse_handicap_count("fixed_handicap", a)?;
        let locs = fixed_handicap_points(self.game.x_size(), self.game.y_size(), n)
            .map_err(|e| format!("{e}, try place_free_handicap"))?;
        self.game.set_handicap(&locs);
        self.recent_win_loss.clear();
        Ok(self.handicap_response())
    }

    /// The network places free handicap stones, as KataGo's (from its raw
    /// policy at temperature 0.25); a bot without one uses the fixed
    /// points where they exist and spreads the rest over the board's third
    /// and fourth lines.
    pub(super) fn place_free_handicap(&mut self, a: &[String]) -> Result<String, String> {
        let (xs, ys) = (self.game.x_size(), self.game.y_size());
        let n = self
            .parse_handicap_count("place_free_handicap", a)?
            .min((xs * ys / 4).min(30));
        if let Some(locs) = self.bot.lock().free_handicap(&self.game, n) {
            if !self.game.set_handicap(&locs) {
                return Err("Handicap placement is invalid".into());
            }
            self.recent_win_loss.clear();
            return Ok(self.handicap_response());
        }
        let mut locs = fixed_handicap_points(xs, ys, n.min(9)).unwrap_or_default();
        if locs.len() < n {
            let board = Board::new(xs, ys).map_err(|e| e.to_string())?;
            let taken = |locs: &Vec<Loc>, l: Loc| {
                let (x, y) = l.xy(xs);
                locs.iter().any(|o| {
                    let (ox, oy) = o.xy(xs);
                    x.abs_diff(ox) + y.abs_diff(oy) <= 1
                })
            };
            for step in [3usize, 2, 1] {
                for l in board.locs() {
                    let (x, y) = l.xy(xs);
                    if locs.len() < n
                        && x % step == step / 2
                        && y % step == step / 2
                        && !taken(&locs, l)
                    {
                        locs.push(l);
                    }
                }
            }
        }
        locs.truncate(n);
        if !self.game.set_handicap(&locs) {
            return Err("Handicap placement is invalid".into());
        }
        self.recent_win_loss.clear();
        Ok(self.handicap_response())
    }

    pub(super) fn set_free_handicap(&mut self, a: &[String]) -> Result<String, String> {
        if !self.game.board().is_empty() {
            return Err("Board is not empty".into());
        }
        let mut locs = Vec::with_capacity(a.len());
        for v in a {
            let loc = Move::parse(v, self.game.x_size(), self.game.y_size())
                .ok()
                .and_then(Move::loc)
                .ok_or_else(|| format!("Invalid handicap location: {v}"))?;
            locs.push(loc);
        }
        if !self.game.set_handicap(&locs) {
            return Err("Handicap placement is invalid".into());
        }
        self.recent_win_loss.clear();
        Ok(String::new())
    }
}
