// The rules the page needs by itself: coordinates, placing a stone with
// captures, and the legality checks that keep a click from sending the
// engine an illegal move (occupied point, suicide, simple ko). The engine
// stays the judge of everything else.

const LETTERS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"; // GTP skips I

/** Largest board side the engine takes. */
export const MAX_SIZE = 37;

/** Column `x`'s GTP letters: A to Z without I, then AA, AB, ... from the
 * 26th column on, as the engine (and KataGo) write them. */
export function columnName(x) {
  return (x >= 25 ? LETTERS[Math.floor(x / 25) - 1] : "") + LETTERS[x % 25];
}

/** [x, y] (y = 0 at the top) to GTP "D4"; "pass" for null. */
export function toGtp(vertex, size) {
  if (!vertex) return "pass";
  const [x, y] = vertex;
  return columnName(x) + String(size - y);
}

/** GTP "D4" (or "AB30" on a big board) to [x, y]; null for pass or
 * anything off the board. */
export function fromGtp(text, size) {
  const t = String(text).trim().toUpperCase();
  if (t === "PASS" || t === "") return null;
  const m = /^([A-HJ-Z]{1,2})(\d+)$/.exec(t);
  if (!m) return null;
  const letters = m[1];
  const x =
    letters.length === 1
      ? LETTERS.indexOf(letters)
      : (LETTERS.indexOf(letters[0]) + 1) * 25 + LETTERS.indexOf(letters[1]);
  const row = parseInt(m[2], 10);
  if (x < 0 || x >= size || !(row >= 1 && row <= size)) return null;
  return [x, size - row];
}

/** "B" → 1, "W" → -1 (Shudan's signs). */
export const signOf = (color) => (color === "B" ? 1 : -1);
export const other = (color) => (color === "B" ? "W" : "B");

export function emptyBoard(size) {
  return Array.from({ length: size }, () => new Array(size).fill(0));
}

function neighbours([x, y], size) {
  const out = [];
  if (x > 0) out.push([x - 1, y]);
  if (x < size - 1) out.push([x + 1, y]);
  if (y > 0) out.push([x, y - 1]);
  if (y < size - 1) out.push([x, y + 1]);
  return out;
}

/** The chain through `v` and whether it has a liberty. */
function chain(board, v, size) {
  const sign = board[v[1]][v[0]];
  const seen = new Set([v.join(",")]);
  const stones = [v];
  let liberty = false;
  for (let i = 0; i < stones.length; i++) {
    for (const n of neighbours(stones[i], size)) {
      const s = board[n[1]][n[0]];
      if (s === 0) liberty = true;
      else if (s === sign && !seen.has(n.join(","))) {
        seen.add(n.join(","));
        stones.push(n);
      }
    }
  }
  return { stones, liberty };
}

/**
 * Plays `sign` at `v` on a copy of `board`. Returns { board, captured }
 * or null when illegal (occupied, suicide, or retaking a ko: `previous`
 * is the board before the last move).
 */
export function play(board, v, sign, previous) {
  const size = board.length;
  if (!v) return { board, captured: 0 };
  if (board[v[1]][v[0]] !== 0) return null;
  const next = board.map((row) => row.slice());
  next[v[1]][v[0]] = sign;
  let captured = 0;
  for (const n of neighbours(v, size)) {
    if (next[n[1]][n[0]] === -sign) {
      const c = chain(next, n, size);
      if (!c.liberty) {
        for (const [x, y] of c.stones) next[y][x] = 0;
        captured += c.stones.length;
      }
    }
  }
  if (!chain(next, v, size).liberty) return null;
  if (previous && captured === 1 && sameBoard(next, previous)) return null;
  return { board: next, captured };
}

function sameBoard(a, b) {
  return a.every((row, y) => row.every((s, x) => s === b[y][x]));
}

/**
 * The positions of a game: boards[i] after i moves, with the captures
 * of each side so far. `game` = { size, setup: [[color, gtp]], moves:
 * [[color, gtp]] }. A move that does not fit (bad SGF) is taken as a pass
 * on the board, so the list stays the engine's.
 */
export function positions(game) {
  const { size } = game;
  let board = emptyBoard(size);
  for (const [color, gtp] of game.setup) {
    const v = fromGtp(gtp, size);
    if (v) board[v[1]][v[0]] = signOf(color);
  }
  const out = [{ board, captures: { B: 0, W: 0 } }];
  let previous = null;
  for (const [color, gtp] of game.moves) {
    const last = out[out.length - 1];
    const r = play(last.board, fromGtp(gtp, size), signOf(color), previous);
    const captures = { ...last.captures };
    if (r) captures[color] += r.captured;
    previous = last.board;
    out.push({ board: r ? r.board : last.board, captures });
  }
  return out;
}

/** Who moves after `moves` (after the setup: `first`). */
export function toMove(game, count) {
  const moves = game.moves.slice(0, count);
  if (moves.length) return other(moves[moves.length - 1][0]);
  return game.first;
}

/** Standard handicap points (x, y from the top left), as KataGo places them. */
export function handicapStones(size, count) {
  if (count < 2 || size < 7) return [];
  const e = size >= 13 ? 3 : 2;
  const lo = e;
  const hi = size - 1 - e;
  const mid = (size - 1) / 2;
  const corners = [[hi, lo], [lo, hi], [hi, hi], [lo, lo]];
  const odd = size % 2 === 1;
  const sides = odd ? [[lo, mid], [hi, mid], [mid, lo], [mid, hi]] : [];
  let stones = corners.slice(0, Math.min(count, 4));
  if (count >= 5 && odd) {
    const extra = count === 5 ? [] : count <= 7 ? sides.slice(0, 2) : sides;
    stones = corners.concat(extra);
    if (count % 2 === 1) stones.push([mid, mid]);
  }
  return stones.slice(0, count);
}
