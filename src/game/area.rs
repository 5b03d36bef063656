//! Pass-alive groups and territory (Benson's algorithm) and the area
//! calculations KataGo scores with (`Board::calculateArea`,
//! `Board::calculateIndependentLifeArea` in `cpp/game/board.cpp`).

use super::board::{Area, Board};
use super::scratch::Scratch;
use super::types::{Color, Loc, Player, MAX_ARR_SIZE, MAX_LEN, MAX_PLAY_SIZE};

/// What [`Board::calculate_area`] marks besides pass-alive stones and
/// pass-alive territory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AreaOptions {
    /// Also mark stones that are not pass-alive (and not inside the
    /// opponent's pass-alive territory) with their own colour.
    pub non_pass_alive_stones: bool,
    /// Also mark empty regions bordered only by one player's stones, all of
    /// them pass-alive.
    pub safe_big_territories: bool,
    /// Also mark empty regions bordered only by one player's stones,
    /// whatever their status (where not already claimed).
    pub unsafe_big_territories: bool,
    /// Compute pass-alive status as if multi-stone suicide were legal.
    pub multi_stone_suicide_legal: bool,
}

const MAX_REGIONS: usize = (MAX_LEN * MAX_LEN).div_ceil(2) + 1;

impl Board {
    /// Marks each point with the player for whom it is a pass-alive stone
    /// or pass-alive territory, plus the extras selected in `opts`; other
    /// points are `Empty`.
    pub fn calculate_area(&self, opts: AreaOptions) -> Area {
        let mut result = Area::empty();
        for pla in Player::BOTH {
            self.calculate_area_for_pla(
                pla,
                opts.safe_big_territories,
                opts.unsafe_big_territories,
                opts.multi_stone_suicide_legal,
                &mut result.0,
            );
        }
        if opts.non_pass_alive_stones {
            for loc in self.locs() {
                let l = loc.idx();
                if result.0[l] == Color::Empty {
                    result.0[l] = self.colors[l];
                }
            }
        }
        result
    }

    /// KataGo's `calculateIndependentLifeArea`: the area with all
    /// extras, then with every region that touches dame or holds a stone in
    /// atari (seki-like) stripped. `keep_territories` keeps the empty points
    /// of stripped regions, `keep_stones` keeps their stones. Returns the
    /// area and white minus black independent-life regions (for the group
    /// tax, two points each).
    pub fn calculate_independent_life_area(
        &self,
        keep_territories: bool,
        keep_stones: bool,
        multi_stone_suicide_legal: bool,
    ) -> (Area, i32) {
        let mut basic = [Color::Empty; MAX_ARR_SIZE];
        for pla in Player::BOTH {
            self.calculate_area_for_pla(pla, true, true, multi_stone_suicide_legal, &mut basic);
        }
        for loc in self.locs() {
            let l = loc.idx();
            if basic[l] == Color::Empty {
                basic[l] = self.colors[l];
            }
        }
        let mut result = Area::empty();
        let count = self.independent_life_helper(&basic, &mut result.0);
        for loc in self.locs() {
            let l = loc.idx();
            if basic[l] == Color::Empty {
                continue;
            }
            let is_stone = basic[l] == self.colors[l];
            if (keep_territories && !is_stone) || (keep_stones && is_stone) {
                result.0[l] = basic[l];
            }
        }
        (result, count)
    }

    fn independent_life_helper(
        &self,
        basic: &[Color; MAX_ARR_SIZE],
        result: &mut [Color; MAX_ARR_SIZE],
    ) -> i32 {
        let n = self.arr_len();
        let mut queue: Scratch<u16, MAX_ARR_SIZE> = Scratch::new();
        queue.fill(0, n);
        let mut count = 0;
        let mut is_seki: Scratch<bool, MAX_ARR_SIZE> = Scratch::new();
        is_seki.fill(false, n);
        let stride = self.stride;
        let adj = |l: usize| [l - stride, l - 1, l + 1, l + stride];

        // Regions that touch dame or hold an owner's stone in atari count
        // as seki.
        for loc in self.locs() {
            let l = loc.idx();
            if basic[l] == Color::Empty || is_seki[l] {
                continue;
            }
            let in_atari = self.colors[l] == basic[l] && self.num_liberties(loc) == 1;
            let touches_dame = adj(l)
                .iter()
                .any(|&a| self.colors[a] == Color::Empty && basic[a] == Color::Empty);
            if in_atari || touches_dame {
                is_seki[l] = true;
                flood_region(stride, basic, l, &mut queue, |a| {
                    let new = !is_seki[a];
                    is_seki[a] = true;
                    new
                });
            }
        }

        for loc in self.locs() {
            let l = loc.idx();
            if basic[l] == Color::Empty || is_seki[l] || result[l] == basic[l] {
                continue;
            }
            let owner = basic[l];
            count += if owner == Color::White { 1 } else { -1 };
            result[l] = owner;
            flood_region(stride, basic, l, &mut queue, |a| {
                let new = result[a] != owner;
                result[a] = owner;
                new
            });
        }
        count
    }

    /// Whether a `pla` stone of the chain headed by `head` touches `loc`.
    #[inline]
    fn is_adjacent_to_pla_head(&self, pla: Color, loc: usize, head: u16) -> bool {
        let s = self.stride;
        [loc - s, loc - 1, loc + 1, loc + s]
            .iter()
            .any(|&a| self.colors[a] == pla && self.chain_head[a] == head)
    }

    /// Benson's algorithm for one player, marking `result` as KataGo does.
    fn calculate_area_for_pla(
        &self,
        pla: Player,
        safe_big_territories: bool,
        unsafe_big_territories: bool,
        multi_stone_suicide_legal: bool,
        result: &mut [Color; MAX_ARR_SIZE],
    ) {
        let pc = pla.color();
        let oc = pla.opp().color();
        let stride = self.stride;
        let adj = |l: usize| [l - stride, l - 1, l + 1, l + stride];

        // Maximal connected regions of empty-or-opponent points. The
        // scratch is sized by this board (see `scratch`): per point, per
        // region (at most half the points plus one), per vital entry (at
        // most four per region).
        let n = self.arr_len();
        let max_regions = (self.x_size * self.y_size).div_ceil(2) + 1;
        let mut region_idx_by_loc: Scratch<i16, MAX_ARR_SIZE> = Scratch::new();
        region_idx_by_loc.fill(-1, n);
        let mut next_empty_or_opp: Scratch<u16, MAX_ARR_SIZE> = Scratch::new();
        next_empty_or_opp.fill(0, n);
        let mut borders_non_pass_alive: Scratch<bool, MAX_ARR_SIZE> = Scratch::new(); // by region head
        borders_non_pass_alive.fill(false, n);
        // Per region, the pla chains it is "vital" for: every empty point
        // of the region (every point, when suicide is legal) touches them.
        let mut vital_lists: Scratch<u16, { MAX_REGIONS * 4 }> = Scratch::new();
        vital_lists.fill(0, max_regions * 4);
        let mut vital_total = 0usize;
        let mut num_regions = 0usize;
        let mut region_heads: Scratch<u16, MAX_REGIONS> = Scratch::new();
        region_heads.fill(0, max_regions);
        let mut vital_start: Scratch<u16, MAX_REGIONS> = Scratch::new();
        vital_start.fill(0, max_regions);
        let mut vital_len: Scratch<u16, MAX_REGIONS> = Scratch::new();
        vital_len.fill(0, max_regions);
        // 0, 1 or 2+ points of the region not next to any pla stone.
        let mut internal_spaces: Scratch<u8, MAX_REGIONS> = Scratch::new();
        internal_spaces.fill(0, max_regions);
        let mut contains_opp: Scratch<bool, MAX_REGIONS> = Scratch::new();
        contains_opp.fill(false, max_regions);
        let mut queue: Scratch<u16, MAX_ARR_SIZE> = Scratch::new();
        queue.fill(0, n);

        let mut at_least_one_pla = false;
        for loc in self.locs() {
            let l = loc.idx();
            if region_idx_by_loc[l] != -1 {
                continue;
            }
            if self.colors[l] != Color::Empty {
                at_least_one_pla |= self.colors[l] == pc;
                continue;
            }
            let r = num_regions;
            num_regions += 1;
            region_heads[r] = l as u16;
            vital_start[r] = vital_total as u16;
            let vs = vital_total;
            let mut vlen = 0usize;
            for a in adj(l) {
                if self.colors[a] == pc {
                    let h = self.chain_head[a];
                    if !vital_lists[vs..vs + vlen].contains(&h) {
                        vital_lists[vs + vlen] = h;
                        vlen += 1;
                    }
                }
            }

            // Breadth-first fill, filtering the vital list as we go.
            let mut tail_target = l as u16;
            let (mut qh, mut qt) = (0usize, 1usize);
            queue[0] = l as u16;
            region_idx_by_loc[l] = r as i16;
            while qh != qt {
                let cur = queue[qh] as usize;
                qh += 1;
                if vlen > 0 && (multi_stone_suicide_legal || self.colors[cur] == Color::Empty) {
                    let mut new_len = 0;
                    for i in 0..vlen {
                        let h = vital_lists[vs + i];
                        if self.is_adjacent_to_pla_head(pc, cur, h) {
                            vital_lists[vs + new_len] = h;
                            new_len += 1;
                        }
                    }
                    vlen = new_len;
                }
                if internal_spaces[r] < 2 && !adj(cur).iter().any(|&a| self.colors[a] == pc) {
                    internal_spaces[r] += 1;
                }
                if self.colors[cur] == oc {
                    contains_opp[r] = true;
                }
                next_empty_or_opp[cur] = tail_target;
                tail_target = cur as u16;
                for a in adj(cur) {
                    let c = self.colors[a];
                    if (c == Color::Empty || c == oc) && region_idx_by_loc[a] == -1 {
                        queue[qt] = a as u16;
                        qt += 1;
                        region_idx_by_loc[a] = r as i16;
                    }
                }
            }
            // Close the circular list.
            next_empty_or_opp[l] = tail_target;
            vital_len[r] = vlen as u16;
            vital_total += vlen;
        }

        let mut pla_heads: Scratch<u16, MAX_PLAY_SIZE> = Scratch::new();
        for loc in self.locs() {
            let l = loc.idx();
            if self.colors[l] == pc && self.chain_head[l] as usize == l {
                pla_heads.push(l as u16);
            }
        }
        let num_pla_heads = pla_heads.len();
        let mut killed: Scratch<bool, MAX_PLAY_SIZE> = Scratch::new();
        killed.fill(false, num_pla_heads);
        let mut vital_count: Scratch<i32, MAX_ARR_SIZE> = Scratch::new();
        vital_count.fill(0, n);
        for r in 0..num_regions {
            let s = vital_start[r] as usize;
            for &h in &vital_lists[s..s + vital_len[r] as usize] {
                vital_count[h as usize] += 1;
            }
        }

        // Benson iteration: chains with fewer than two vital regions die,
        // and regions they border stop counting as vital.
        loop {
            let mut killed_any = false;
            for i in 0..num_pla_heads {
                if killed[i] {
                    continue;
                }
                let head = pla_heads[i] as usize;
                if vital_count[head] >= 2 {
                    continue;
                }
                killed[i] = true;
                killed_any = true;
                let mut cur = head;
                loop {
                    for a in adj(cur) {
                        let r = region_idx_by_loc[a];
                        if r < 0 {
                            continue;
                        }
                        let r = r as usize;
                        let rh = region_heads[r] as usize;
                        let c = self.colors[a];
                        if !borders_non_pass_alive[rh] && (c == Color::Empty || c == oc) {
                            borders_non_pass_alive[rh] = true;
                            let s = vital_start[r] as usize;
                            for &h in &vital_lists[s..s + vital_len[r] as usize] {
                                vital_count[h as usize] -= 1;
                            }
                        }
                    }
                    cur = self.next_in_chain[cur] as usize;
                    if cur == head {
                        break;
                    }
                }
            }
            if !killed_any {
                break;
            }
        }

        for i in 0..num_pla_heads {
            if !killed[i] {
                let head = pla_heads[i];
                for s in self.chain_stones(Loc(head)) {
                    result[s.idx()] = pc;
                }
            }
        }

        for r in 0..num_regions {
            let head = region_heads[r] as usize;
            let borders_dead = borders_non_pass_alive[head];
            let should_mark = (internal_spaces[r] <= 1 && !borders_dead && at_least_one_pla)
                || (safe_big_territories && !contains_opp[r] && !borders_dead && at_least_one_pla);
            if should_mark {
                let mut cur = head;
                loop {
                    result[cur] = pc;
                    cur = next_empty_or_opp[cur] as usize;
                    if cur == head {
                        break;
                    }
                }
            } else if unsafe_big_territories && !contains_opp[r] && at_least_one_pla {
                let mut cur = head;
                loop {
                    if result[cur] == Color::Empty {
                        result[cur] = pc;
                    }
                    cur = next_empty_or_opp[cur] as usize;
                    if cur == head {
                        break;
                    }
                }
            }
        }
    }
}

/// Breadth-first flood from `start` (already marked by the caller) over the
/// points connected to it whose `basic` colour equals `basic[start]`.
/// `mark(a)` marks point `a` and says whether it was unmarked before, so each
/// point is queued once; the caller keeps the marks (seki flags or owners).
/// `queue` is the caller's scratch array, so the flood does not allocate.
#[inline]
fn flood_region(
    stride: usize,
    basic: &[Color; MAX_ARR_SIZE],
    start: usize,
    queue: &mut [u16],
    mut mark: impl FnMut(usize) -> bool,
) {
    let owner = basic[start];
    let (mut head, mut tail) = (0, 1);
    queue[0] = start as u16;
    while head != tail {
        let n = queue[head] as usize;
        head += 1;
        for a in [n - stride, n - 1, n + 1, n + stride] {
            if basic[a] == owner && mark(a) {
                queue[tail] = a as u16;
                tail += 1;
            }
        }
    }
}
