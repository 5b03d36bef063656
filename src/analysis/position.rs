//! Turning a parsed query into the positions to search: place the initial
//! stones, replay the moves, keep a copy of each requested turn.
//!
//! TEMPORARY: until the `game` module has `Rules` and `BoardHistory`, this
//! tracks stones without captures and checks only that moves go to empty
//! points. The replay will move onto `BoardHistory` (ko, superko, suicide,
//! encore, handicap bonus) when it lands.

use crate::game::{Color, Move, Player};

use super::query::{AnalyzeQuery, QueryError};

/// One position to analyse.
#[derive(Debug, Clone, PartialEq)]
pub struct Position {
    pub x_size: usize,
    pub y_size: usize,
    /// Stones, row-major from the top-left.
    pub stones: Vec<Color>,
    pub to_move: Player,
    /// Rules text as given.
    pub rules: String,
    pub komi: f32,
    /// The moves played to reach this position.
    pub history: Vec<(Player, Move)>,
}

impl Position {
    /// The colour at `(x, y)`.
    pub fn color(&self, x: usize, y: usize) -> Color {
        self.stones[y * self.x_size + x]
    }

    /// `(high, low)` hash of stones and player to move.
    pub fn this_hash(&self) -> (u64, u64) {
        hash_stones(self.x_size, self.y_size, self.to_move, |x, y| {
            self.color(x, y)
        })
    }

    /// The least hash over the 8 symmetries.
    pub fn sym_hash(&self) -> (u64, u64) {
        let (xs, ys) = (self.x_size, self.y_size);
        let mut best = self.this_hash();
        for sym in 1..8u8 {
            let transpose = sym & 4 != 0;
            if transpose && xs != ys {
                continue;
            }
            let (ox, oy) = if transpose { (ys, xs) } else { (xs, ys) };
            let h = hash_stones(ox, oy, self.to_move, |x, y| {
                let (mut sx, mut sy) = if transpose { (y, x) } else { (x, y) };
                if sym & 1 != 0 {
                    sx = xs - 1 - sx;
                }
                if sym & 2 != 0 {
                    sy = ys - 1 - sy;
                }
                self.color(sx, sy)
            });
            best = best.min(h);
        }
        best
    }
}

fn hash_stones(
    xs: usize,
    ys: usize,
    pla: Player,
    color: impl Fn(usize, usize) -> Color,
) -> (u64, u64) {
    let mut h1: u64 = 0xcbf2_9ce4_8422_2325 ^ (pla as u64);
    let mut h0: u64 = 0x8422_2325_cbf2_9ce4;
    for y in 0..ys {
        for x in 0..xs {
            let c = color(x, y) as u64;
            h1 = (h1 ^ c).wrapping_mul(0x0100_0000_01b3);
            h0 = (h0 ^ (c + 7))
                .wrapping_mul(0x0000_0100_0000_01b3)
                .rotate_left(5);
        }
    }
    (h1, h0)
}

/// The positions at the requested turns, or the error for the first
/// illegal move.
pub fn build_positions(q: &AnalyzeQuery) -> Result<Vec<(usize, Position)>, QueryError> {
    let (xs, ys) = (q.board_x_size, q.board_y_size);
    let mut stones = vec![Color::Empty; xs * ys];
    let idx = |mv: Move| mv.loc().map(|l| l.y(xs) * xs + l.x(xs));
    for s in &q.initial_stones {
        if let Some(i) = idx(s.mv) {
            stones[i] = s.player.color();
        }
    }
    let mut to_move = q.initial_player.unwrap_or_else(|| {
        q.moves.first().map_or_else(
            || {
                if stones.iter().any(|&c| c == Color::Black) && !stones.contains(&Color::White) {
                    Player::White
                } else {
                    Player::Black
                }
            },
            |m| m.player,
        )
    });
    let komi = q.komi.unwrap_or(7.5);
    let mut out = Vec::new();
    let mut history = Vec::new();
    for turn in 0..=q.moves.len() {
        if q.analyze_turns.contains(&turn) {
            out.push((
                turn,
                Position {
                    x_size: xs,
                    y_size: ys,
                    stones: stones.clone(),
                    to_move,
                    rules: q.rules.clone(),
                    komi,
                    history: history.clone(),
                },
            ));
        }
        let Some(m) = q.moves.get(turn) else { break };
        if let Some(i) = idx(m.mv) {
            if stones[i] != Color::Empty {
                return Err(QueryError::Field {
                    id: q.id.clone(),
                    field: "moves".into(),
                    message: format!("Illegal move {turn}: {}", m.mv.to_gtp(xs, ys)),
                });
            }
            stones[i] = m.player.color();
        }
        history.push((m.player, m.mv));
        to_move = m.player.opp();
    }
    Ok(out)
}
