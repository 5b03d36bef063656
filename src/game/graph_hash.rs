//! KataGo's graph hash (`game/graphhash.cpp`): what makes two positions the
//! same node of the search graph. It is the situation hash (position,
//! player, ko and superko bans, encore state, rules, komi) with whether a
//! pass would end the phase, whether the game is over and the count of
//! ending passes folded in; and where the last move (or a pass) could be
//! undone within `rep_bound` moves, the hash of the path so far too, so
//! that positions that might repeat stay apart (the search then never
//! merges two points of a cycle it could go round).

use super::board::Board;
use super::history::BoardHistory;
use super::scratch::Scratch;
use super::types::{Color, Loc, Move, Player, MAX_ARR_SIZE};
use super::zobrist::Hash128;

/// Folded in when a pass by the player to move would end the phase
/// (KataGo's `Board::ZOBRIST_PASS_ENDS_PHASE`).
const PASS_ENDS_PHASE: Hash128 = Hash128::from_katago(0x853E_097C_279E_BF4E, 0xE315_3DEF_9E14_A62C);
/// Folded in once the game is over (KataGo's `Board::ZOBRIST_GAME_IS_OVER`).
const GAME_IS_OVER: Hash128 = Hash128::from_katago(0xb6f9_e465_597a_77ee, 0xf1d5_83d9_60a4_ce7f);
/// KataGo's multipliers of the count of ending passes.
const CONSEC_PASS_MULT0: u64 = 2862933555777941757;
const CONSEC_PASS_MULT1: u64 = 3202034522624059733;

/// KataGo's `GraphHash::getStateHash`: the graph hash of the state alone.
pub fn state_hash(
    board: &Board,
    hist: &BoardHistory,
    next: Player,
    draw_equivalent_wins_for_white: f64,
) -> Hash128 {
    let mut h = hist.situation_rules_and_ko_hash(board, next, draw_equivalent_wins_for_white);
    if hist.pass_would_end_phase(board, next) {
        h ^= PASS_ENDS_PHASE;
    }
    if hist.is_game_finished() {
        h ^= GAME_IS_OVER;
    }
    let passes = u64::from(hist.consecutive_ending_passes());
    add(
        h,
        Hash128::from_katago(
            CONSEC_PASS_MULT0.wrapping_mul(passes),
            CONSEC_PASS_MULT1.wrapping_mul(passes),
        ),
    )
}

/// KataGo's `GraphHash::getGraphHash`: the graph hash of the state after
/// the last move of `hist`, where `prev` is the graph hash before it. The
/// state's own hash when the last move cannot be undone within `rep_bound`
/// moves (its chain and the empty points around it are more than
/// `rep_bound`), else `prev` mixed and the state's hash added.
pub fn graph_hash(
    prev: Hash128,
    board: &Board,
    hist: &BoardHistory,
    next: Player,
    rep_bound: usize,
    draw_equivalent_wins_for_white: f64,
) -> Hash128 {
    let state = state_hash(board, hist, next, draw_equivalent_wins_for_white);
    let chained = match hist.moves().last() {
        None => false,
        Some((Move::Pass, _)) => true,
        Some(&(Move::Play(loc), _)) => !simple_repetition_bound_gt(board, loc, rep_bound),
    };
    if !chained {
        return state;
    }
    let hash0 = split_mix64(prev.lo() ^ prev.hi());
    let hash1 = nasam(prev.hi()).wrapping_add(hash0);
    add(Hash128::from_katago(hash0, hash1), state)
}

/// KataGo's `GraphHash::getGraphHashFromScratch`: the graph hash of the
/// position after `hist`'s moves (`board`, `next` to move), chained over
/// the whole game from its initial position, as a search from the start
/// would have reached it. What a search's root starts from.
pub fn graph_hash_from_scratch(
    board: &Board,
    hist: &BoardHistory,
    next: Player,
    rep_bound: usize,
    draw_equivalent_wins_for_white: f64,
) -> Hash128 {
    let mut hash = Hash128::ZERO;
    hist.replay(|b, h, pla| {
        hash = graph_hash(hash, b, h, pla, rep_bound, draw_equivalent_wins_for_white);
    });
    graph_hash(
        hash,
        board,
        hist,
        next,
        rep_bound,
        draw_equivalent_wins_for_white,
    )
}

/// KataGo's `Board::simpleRepetitionBoundGt`: whether taking back the
/// stone at `loc` would need more than `bound` moves, counting the stones
/// of its chain and the empty regions touching it (for an empty `loc`, a
/// suicide, its own empty region).
pub fn simple_repetition_bound_gt(board: &Board, loc: Loc, bound: usize) -> bool {
    let mut count = 0;
    let mut counted: Scratch<bool, MAX_ARR_SIZE> = Scratch::new();
    counted.fill(false, board.arr_len());
    // One flood-fill queue for every region (each point enters it once).
    let mut queue: Scratch<Loc, MAX_ARR_SIZE> = Scratch::new();
    queue.fill(Loc(0), board.arr_len());
    if board.get(loc) == Color::Empty {
        return count_empty(board, &mut counted, &mut queue, loc, &mut count, bound);
    }
    count += board.chain_size(loc);
    if count + board.num_liberties(loc) > bound {
        return true;
    }
    for stone in board.chain_stones(loc) {
        for lib in board.adjacent_locs(stone) {
            if board.get(lib) == Color::Empty
                && count_empty(board, &mut counted, &mut queue, lib, &mut count, bound)
            {
                return true;
            }
        }
    }
    false
}

/// KataGo's `countEmptyHelper`: adds the empty region of `start` (not
/// counted yet) to `count`; true as soon as it exceeds `bound`.
fn count_empty(
    board: &Board,
    counted: &mut [bool],
    queue: &mut [Loc],
    start: Loc,
    count: &mut usize,
    bound: usize,
) -> bool {
    if counted[start.idx()] {
        return false;
    }
    *count += 1;
    counted[start.idx()] = true;
    if *count > bound {
        return true;
    }
    let (mut len, mut next) = (1, 0);
    queue[0] = start;
    while next < len {
        let cur = queue[next];
        next += 1;
        for adj in board.adjacent_locs(cur) {
            if board.get(adj) == Color::Empty && !counted[adj.idx()] {
                *count += 1;
                counted[adj.idx()] = true;
                if *count > bound {
                    return true;
                }
                queue[len] = adj;
                len += 1;
            }
        }
    }
    false
}

/// KataGo adds hashes half by half.
fn add(a: Hash128, b: Hash128) -> Hash128 {
    Hash128::from_katago(a.lo().wrapping_add(b.lo()), a.hi().wrapping_add(b.hi()))
}

/// KataGo's `Hash::splitMix64`.
fn split_mix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d049bb133111eb);
    x ^ (x >> 31)
}

/// KataGo's `Hash::nasam`.
fn nasam(mut x: u64) -> u64 {
    x ^= x.rotate_right(25) ^ x.rotate_right(47);
    x = x.wrapping_mul(0x9e6c63d0676a9a99);
    x ^= (x >> 23) ^ (x >> 51);
    x = x.wrapping_mul(0x9e6d62d06f6a9a9b);
    x ^ (x >> 23) ^ (x >> 51)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Rules;

    /// Plays `moves` (alternating from Black) on an empty `n`x`n` board and
    /// returns the graph hash after each, chained from the start.
    fn hashes(n: usize, moves: &[(usize, usize)], rep_bound: usize) -> Vec<Hash128> {
        let mut board = Board::new(n, n).expect("size");
        let mut hist = BoardHistory::new(&board, Player::Black, Rules::tromp_taylor());
        let mut pla = Player::Black;
        let mut h = state_hash(&board, &hist, pla, 0.5);
        let mut out = Vec::new();
        for &(x, y) in moves {
            let mv = if x == usize::MAX {
                Move::Pass
            } else {
                Move::Play(board.loc(x, y))
            };
            hist.play(&mut board, mv, pla);
            pla = pla.opp();
            h = graph_hash(h, &board, &hist, pla, rep_bound, 0.5);
            out.push(h);
        }
        out
    }

    #[test]
    fn transposed_moves_meet_and_passes_keep_paths_apart() {
        // Four separate stones in either order: the same node.
        let a = hashes(9, &[(2, 2), (6, 6), (2, 6), (6, 2)], 11);
        let b = hashes(9, &[(2, 6), (6, 2), (2, 2), (6, 6)], 11);
        assert_eq!(a[3], b[3]);
        assert_ne!(a[2], b[2]);
        // Where every move could be undone within the bound (5x5 has 25
        // points, the bound is 30), the path is part of the hash: apart.
        let a = hashes(5, &[(1, 1), (3, 3), (1, 3), (3, 1)], 30);
        let b = hashes(5, &[(1, 3), (3, 1), (1, 1), (3, 3)], 30);
        assert_ne!(a[3], b[3]);
        // With KataGo's smallest bound they meet.
        let a = hashes(5, &[(1, 1), (3, 3), (1, 3), (3, 1)], 3);
        let b = hashes(5, &[(1, 3), (3, 1), (1, 1), (3, 3)], 3);
        assert_eq!(a[3], b[3]);
        // A pass always chains: the same stones after a pass and after a
        // move then a pass back are apart.
        const P: usize = usize::MAX;
        let c = hashes(9, &[(2, 2), (6, 6), (P, 0)], 11);
        let d = hashes(9, &[(2, 2), (6, 6), (P, 0), (P, 0)], 11);
        assert_ne!(c[2], d[3]);
    }

    /// From scratch is the chain a search from the initial position
    /// builds move by move; where the last move could be undone, the
    /// game before it is part of the hash.
    #[test]
    fn from_scratch_is_the_chain_from_the_start() {
        let moves = [(1, 1), (3, 3), (1, 3), (3, 1), (2, 2)];
        let mut board = Board::new(5, 5).expect("size");
        let mut hist = BoardHistory::new(&board, Player::Black, Rules::tromp_taylor());
        let mut pla = Player::Black;
        let mut chained = graph_hash(Hash128::ZERO, &board, &hist, pla, 30, 0.5);
        for &(x, y) in &moves {
            let mv = Move::Play(board.loc(x, y));
            hist.play(&mut board, mv, pla);
            pla = pla.opp();
            chained = graph_hash(chained, &board, &hist, pla, 30, 0.5);
            assert_eq!(
                graph_hash_from_scratch(&board, &hist, pla, 30, 0.5),
                chained
            );
        }
        // Chained from nothing at the last position instead: another hash.
        assert_ne!(
            graph_hash(Hash128::ZERO, &board, &hist, pla, 30, 0.5),
            chained
        );
    }

    /// KataGo 1.17.2's own graph hashes (`tests/data/graph_hash/katago.txt`,
    /// made by `scripts/katago_graph_hash.sh`): before the first move and
    /// after each of 19 sequences on 5x5 to 19x19 (transpositions, a ko
    /// fought twice, passes ending the game or the phase, encore phases,
    /// seven rule sets, komi, bounds 3, 11 and 30), equal here.
    #[test]
    fn equal_to_katagos_on_recorded_sequences() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests")
            .join("data")
            .join("graph_hash")
            .join("katago.txt");
        let text = std::fs::read_to_string(path).expect("katago.txt");
        let mut checked = 0;
        for line in text.lines() {
            let (input, expected) = line.split_once(" => ").expect("a => b");
            let mut words = input.split_whitespace();
            let mut next = || words.next().expect("field");
            let size: usize = next().parse().expect("size");
            let rules_name = next();
            let komi: f32 = next().parse().expect("komi");
            let rep_bound: usize = next().parse().expect("bound");
            let rules = Rules::parse_without_komi(rules_name, komi).expect("rules");
            let mut board = Board::new(size, size).expect("size");
            let mut hist = BoardHistory::new(&board, Player::Black, rules);
            let mut pla = Player::Black;
            let mut ours = vec![graph_hash_from_scratch(&board, &hist, pla, rep_bound, 0.5)];
            for word in words {
                let (who, vertex) = word.split_once(':').expect("P:V");
                let mover = Player::parse(who).expect("player");
                let mv = Move::parse(vertex, size, size).expect("move");
                hist.play(&mut board, mv, mover);
                pla = mover.opp();
                ours.push(graph_hash_from_scratch(&board, &hist, pla, rep_bound, 0.5));
            }
            let ours: Vec<String> = ours.iter().map(|h| h.to_string()).collect();
            assert_eq!(ours.join(" "), expected.to_uppercase(), "{input}");
            checked += 1;
        }
        assert_eq!(checked, 19);
    }

    #[test]
    fn small_groups_near_few_empty_points_chain_the_path() {
        let mut board = Board::new(5, 5).expect("size");
        let mut hist = BoardHistory::new(&board, Player::Black, Rules::tromp_taylor());
        let b2 = board.loc(1, 1);
        hist.play(&mut board, Move::Play(b2), Player::Black);
        // One stone in 24 empty points: could be captured and replayed
        // within 25 moves, not within 11.
        assert!(simple_repetition_bound_gt(&board, b2, 11));
        assert!(!simple_repetition_bound_gt(&board, b2, 25));
        // Empty point (a suicide): its region of 24 points.
        assert!(!simple_repetition_bound_gt(&board, board.loc(3, 3), 24));
        assert!(simple_repetition_bound_gt(&board, board.loc(3, 3), 23));
    }
}
