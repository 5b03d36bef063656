//! Scoring commands: `final_score` and `final_status_list`, exact for a
//! finished game, counted for a settled one ([`settled_score`]), else from
//! the search's estimate.

use crate::game::{AreaOptions, Board, BoardHistory, Color, Loc, Move, Player, ScoringRule};

use super::engine::GtpEngine;

impl GtpEngine {
    /// Whether the game is over and the rules score it exactly (KataGo:
    /// finished under area scoring without friendly passes, or under
    /// territory scoring); otherwise scores come from a search.
    pub(super) fn scored_exactly(&self) -> bool {
        let hist = self.game.history();
        let rules = hist.rules();
        hist.is_game_finished()
            && ((rules.scoring_rule == ScoringRule::Area && !rules.friendly_pass_ok)
                || rules.scoring_rule == ScoringRule::Territory)
    }

    /// KataGo's `computeAnticipatedWinnerAndScore`: the winner (`None` for
    /// a draw or no result) and White minus Black.
    pub(super) fn anticipated_winner_and_score(&mut self) -> (Option<Player>, f64) {
        self.stop_background();
        if self.scored_exactly() {
            let hist = self.game.history();
            return (
                hist.winner(),
                f64::from(hist.final_white_minus_black_score()),
            );
        }
        let pla = self.game.next_pla();
        let estimate = self.bot.lock().estimate_final(&self.game, pla);
        if let Some(score) =
            settled_score(self.game.history(), self.game.board(), &estimate.ownership)
        {
            return (winner_of(score), score);
        }
        let lead = self.bot.lock().estimate_lead(&self.game, pla);
        let lead = if self.game.rules().game_result_will_be_integer() {
            lead.round()
        } else {
            (lead + 0.5).round() - 0.5
        };
        (winner_of(lead), lead)
    }

    pub(super) fn final_score(&mut self) -> String {
        match self.anticipated_winner_and_score() {
            (Some(Player::White), score) => format!("W+{score:.1}"),
            (Some(Player::Black), score) => format!("B+{:.1}", -score),
            (None, _) => "0".to_string(),
        }
    }

    /// Alive (true) or dead for every stone, by `Loc::idx`: from the rules'
    /// own scoring of a finished game, else from the search's ownership.
    pub(super) fn anticipated_statuses(&mut self) -> Vec<bool> {
        self.stop_background();
        let board = self.game.board().clone();
        if self.scored_exactly() {
            let mut hist = self.game.history().clone();
            if hist.is_no_result() {
                return vec![true; crate::game::MAX_ARR_SIZE];
            }
            let area = hist.end_and_score_game_now(&board);
            let mut alive = vec![true; crate::game::MAX_ARR_SIZE];
            for loc in board.locs() {
                alive[loc.idx()] = board.get(loc) == area.get(loc);
            }
            return alive;
        }
        let pla = self.game.next_pla();
        let own = self.bot.lock().estimate_final(&self.game, pla).ownership;
        chain_statuses(&board, &own)
    }

    pub(super) fn final_status_list(&mut self, a: &[String]) -> Result<String, String> {
        let [which] = a else {
            return Err(format!(
                "Expected one argument for final_status_list but got '{}'",
                a.join(" ")
            ));
        };
        let want_alive = match which.as_str() {
            "alive" => Some(true),
            "dead" => Some(false),
            "seki" => None,
            _ => {
                return Err(
                    "Argument to final_status_list must be 'alive' or 'seki' or 'dead'".into(),
                )
            }
        };
        let Some(want_alive) = want_alive else {
            return Ok(String::new());
        };
        let alive = self.anticipated_statuses();
        Ok(self
            .game
            .stone_vertices(|l| alive.get(l.idx()).copied().unwrap_or(true) == want_alive)
            .join(" "))
    }
}

/// The winner of a game White leads by `white_minus_black` (`None`: a draw).
fn winner_of(white_minus_black: f64) -> Option<Player> {
    if white_minus_black > 0.0 {
        Some(Player::White)
    } else if white_minus_black < 0.0 {
        Some(Player::Black)
    } else {
        None
    }
}

/// KataGo's ownership thresholds for a living chain (see
/// [`chain_statuses`]): mean ownership above this for its colour ...
const ALIVE_MEAN_OWNERSHIP: f64 = 0.2;
/// ... and no stone below this.
const ALIVE_WORST_OWNERSHIP: f64 = -0.6;

/// The exact score (White minus Black) of a settled position, or `None`.
///
/// Settled: with the chains `ownership` calls dead taken off, every empty
/// region borders one colour only, and the ownership agrees with that
/// colour over the region as KataGo's rule asks of a living chain (mean
/// above 0.2 for the owner, no point below -0.6). KataGo answers
/// `final_score` from the net's lead estimate even then; counting is exact
/// once the statuses are known, which is what a controller asking at the
/// end of a game wants, and it does not hang on how well the net estimates
/// a score.
pub fn settled_score(hist: &BoardHistory, board: &Board, ownership: &[f64]) -> Option<f64> {
    let alive = chain_statuses(board, ownership);
    let (xs, ys) = (board.x_size(), board.y_size());
    let mut cleaned = board.clone();
    for loc in board.locs() {
        if board.get(loc).player().is_some() && !alive[loc.idx()] {
            cleaned.set_stone(loc, Color::Empty);
        }
    }
    let area = cleaned.calculate_area(AreaOptions {
        non_pass_alive_stones: true,
        safe_big_territories: true,
        unsafe_big_territories: true,
        multi_stone_suicide_legal: hist.suicide_legal_for_pass_alive(),
    });
    // Owner's view of a point's ownership (White positive in `ownership`).
    let owned = |loc: Loc, owner: Player| -> Option<f64> {
        let own = *ownership.get(Move::Play(loc).policy_index(xs, ys))?;
        Some(if owner == Player::White { own } else { -own })
    };
    let mut seen = vec![false; crate::game::MAX_ARR_SIZE];
    let mut region = Vec::new();
    for start in board.locs() {
        let owner = area.get(start).player()?;
        if let Some(stone) = cleaned.get(start).player() {
            // A living chain already passed the ownership test; it must
            // also be its own colour's area (not inside pass-alive
            // territory of the other).
            if stone != owner {
                return None;
            }
            continue;
        }
        if seen[start.idx()] {
            continue;
        }
        // The empty region of `start`, all of `owner`'s area.
        seen[start.idx()] = true;
        region.clear();
        region.push(start);
        let mut next = 0;
        while next < region.len() {
            let loc = region[next];
            next += 1;
            for adj in cleaned.adjacent_locs(loc) {
                if cleaned.get(adj) == Color::Empty && !seen[adj.idx()] {
                    seen[adj.idx()] = true;
                    region.push(adj);
                }
            }
        }
        let mut sum = 0.0;
        for &loc in &region {
            let own = owned(loc, owner)?;
            if own <= ALIVE_WORST_OWNERSHIP || area.get(loc).player() != Some(owner) {
                return None;
            }
            sum += own;
        }
        if sum / region.len() as f64 <= ALIVE_MEAN_OWNERSHIP {
            return None;
        }
    }
    let mut scored = hist.clone();
    scored.end_and_score_game_now(&cleaned);
    // Under territory scoring the history already counts every stone
    // played against its player, so a dead stone taken off the board is
    // a prisoner without more ado.
    Some(f64::from(scored.final_white_minus_black_score()))
}

/// KataGo's life-and-death call from ownership (White positive): a chain
/// is alive when its mean ownership is above 0.2 for its colour and no
/// stone of it is below -0.6. Indexed by `Loc::idx`.
pub fn chain_statuses(board: &Board, ownership: &[f64]) -> Vec<bool> {
    let xs = board.x_size();
    let mut alive = vec![true; crate::game::MAX_ARR_SIZE];
    let mut solved = vec![false; crate::game::MAX_ARR_SIZE];
    for loc in board.locs() {
        let Some(pla) = board.get(loc).player() else {
            continue;
        };
        if solved[loc.idx()] {
            continue;
        }
        let sign = if pla == Player::White { 1.0 } else { -1.0 };
        let vals: Vec<f64> = board
            .chain_stones(loc)
            .map(|l| {
                sign * ownership
                    .get(Move::Play(l).policy_index(xs, board.y_size()))
                    .copied()
                    .unwrap_or(0.0)
            })
            .collect();
        let mean = vals.iter().sum::<f64>() / vals.len().max(1) as f64;
        let worst = vals.iter().copied().fold(f64::INFINITY, f64::min);
        let is_alive = mean > ALIVE_MEAN_OWNERSHIP && worst > ALIVE_WORST_OWNERSHIP;
        for l in board.chain_stones(loc) {
            alive[l.idx()] = is_alive;
            solved[l.idx()] = true;
        }
    }
    alive
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{GameOptions, GameState, Loc, Rules};

    /// Black wall on E, White wall on F (9x9, komi 6.5), then `extra`
    /// White stones.
    fn walls(rules: Rules, extra: &[&str]) -> GameState {
        let board = Board::new(9, 9).unwrap();
        let mut rules = rules;
        rules.komi = 6.5;
        let mut state = GameState::start(board, Player::Black, rules, GameOptions::default());
        for row in 1..=9 {
            state.play(Move::parse(&format!("E{row}"), 9, 9).unwrap());
            state.play(Move::parse(&format!("F{row}"), 9, 9).unwrap());
        }
        for v in extra {
            state.play_tolerant(Move::parse(v, 9, 9).unwrap(), Player::White);
        }
        state
    }

    /// Ownership that gives columns A-E to Black and F-J to White, at
    /// `strength`; points listed in `flip` get the other sign.
    fn ownership(strength: f64, flip: &[&str]) -> Vec<f64> {
        let mut own = vec![0.0; 81];
        for y in 0..9 {
            for x in 0..9 {
                let loc = Loc::from_xy(x, y, 9);
                let mut o = if x <= 4 { -strength } else { strength };
                if flip.iter().any(|v| Loc::parse(v, 9, 9).unwrap() == loc) {
                    o = -o;
                }
                own[Move::Play(loc).policy_index(9, 9)] = o;
            }
        }
        own
    }

    /// `own` with White's ownership of `vertex` set to `value`.
    fn with(mut own: Vec<f64>, vertex: &str, value: f64) -> Vec<f64> {
        let loc = Loc::parse(vertex, 9, 9).unwrap();
        own[Move::Play(loc).policy_index(9, 9)] = value;
        own
    }

    #[test]
    fn walls_are_counted_exactly_under_area_and_territory_rules() {
        for rules in [Rules::tromp_taylor(), Rules::chinese(), Rules::japanese()] {
            let s = walls(rules, &[]);
            // Black 45 points, White 36 + 6.5 (area); 36 against 27 + 6.5
            // (territory): Black by 2.5 either way.
            assert_eq!(
                settled_score(&s.hist, &s.board, &ownership(0.9, &[])),
                Some(-2.5)
            );
        }
    }

    #[test]
    fn a_dead_stone_is_taken_off_and_counted_as_a_prisoner() {
        let dead_b5 = ownership(0.9, &[]);
        let area = walls(Rules::tromp_taylor(), &["B5"]);
        assert_eq!(settled_score(&area.hist, &area.board, &dead_b5), Some(-2.5));
        let territory = walls(Rules::japanese(), &["B5"]);
        assert_eq!(
            settled_score(&territory.hist, &territory.board, &dead_b5),
            Some(-3.5)
        );
    }

    /// What a small net says of the lone stone (measured): the stone's own
    /// point about even, the points round it weakly Black's. The region
    /// as a whole is Black's, so the position counts as settled.
    #[test]
    fn a_region_counts_as_a_whole_not_point_by_point() {
        let s = walls(Rules::tromp_taylor(), &["B5"]);
        let own = with(with(ownership(0.6, &[]), "B5", 0.01), "A4", -0.1);
        assert_eq!(settled_score(&s.hist, &s.board, &own), Some(-2.5));
        // One point strongly White's breaks it.
        let own = with(own, "A4", 0.7);
        assert_eq!(settled_score(&s.hist, &s.board, &own), None);
    }

    #[test]
    fn unsettled_or_doubted_positions_are_left_to_the_estimate() {
        // B5 alive by the ownership: Black's side touches White stones.
        let s = walls(Rules::tromp_taylor(), &["B5"]);
        assert_eq!(
            settled_score(&s.hist, &s.board, &ownership(0.9, &["B5"])),
            None
        );
        // The net doubts a point of White's side.
        let s = walls(Rules::tromp_taylor(), &[]);
        assert_eq!(
            settled_score(&s.hist, &s.board, &ownership(0.9, &["H3"])),
            None
        );
        // Too weak to call anything settled.
        assert_eq!(settled_score(&s.hist, &s.board, &ownership(0.1, &[])), None);
        // An empty board is never settled.
        let empty = GameState::start(
            Board::new(9, 9).unwrap(),
            Player::Black,
            Rules::tromp_taylor(),
            GameOptions::default(),
        );
        assert_eq!(
            settled_score(&empty.hist, &empty.board, &ownership(0.9, &[])),
            None
        );
    }
}
