//! Situation hashes: what a search or a network cache keys on.

use super::BoardHistory;
use crate::game::board::Board;
use crate::game::types::Player;
use crate::game::zobrist::{basic_lcong, murmur_mix, Hash128, ZOBRIST};

impl BoardHistory {
    // Hashes

    /// Position, player to move and simple-ko ban (no rules, no history).
    pub fn situation_and_simple_ko_hash(board: &Board, next: Player) -> Hash128 {
        board.sit_hash_with_simple_ko(next)
    }

    /// Everything that decides the game from here: position, player, encore
    /// phase and its marks, ko and superko bans, komi from `next`'s view
    /// (with bonuses, discretised to 1/256) and the rules. What a search or
    /// network cache keys on.
    pub fn situation_rules_and_ko_hash(
        &self,
        board: &Board,
        next: Player,
        draw_equivalent_wins_for_white: f64,
    ) -> Hash128 {
        let z = &ZOBRIST;
        let mut h =
            board.pos_hash() ^ z.player[next.index()] ^ z.encore[self.encore_phase as usize];
        let ko = board.ko_loc();
        if self.encore_phase == 0 {
            if let Some(k) = ko {
                h ^= z.ko_loc[k.idx()];
            }
            for loc in board.locs() {
                if self.super_ko_banned[loc.idx()] && Some(loc) != ko {
                    h ^= z.ko_loc[loc.idx()];
                }
            }
        } else {
            for loc in board.locs() {
                let l = loc.idx();
                if self.super_ko_banned[l] {
                    h ^= z.ko_loc[l];
                }
                if self.ko_recap_blocked[l] {
                    h ^= z.ko_mark[l];
                }
                if self.encore_phase == 2 {
                    if let Some(p) = self.second_encore_start_colors[l].player() {
                        h ^= z.second_encore_start[l][p.index()];
                    }
                }
            }
        }
        let self_komi = self.current_self_komi(next, draw_equivalent_wins_for_white);
        // KataGo's komi key: the komi in 1/256 (in f32, as KataGo), mixed.
        let komi_hash = murmur_mix((self_komi * 256.0f32) as i64 as u64);
        h ^= Hash128::from_katago(komi_hash, basic_lcong(komi_hash));
        let r = &self.rules;
        h ^= z.ko_rule[r.ko_rule as usize];
        h ^= z.scoring_rule[r.scoring_rule as usize];
        h ^= z.tax_rule[r.tax_rule as usize];
        if r.multi_stone_suicide_legal {
            h ^= z.multi_stone_suicide;
        }
        if self.has_button {
            h ^= z.button;
        }
        if r.friendly_pass_ok {
            h ^= z.friendly_pass_ok;
        }
        if self.always_compute_pass_alive_under_suicide_rules && !r.multi_stone_suicide_legal {
            h ^= z.pass_alive_under_suicide;
        }
        h
    }
}
