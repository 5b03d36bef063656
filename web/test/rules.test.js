// The page's own logic without a browser: `npm test` (node --test).
import { test } from "node:test";
import assert from "node:assert/strict";
import { fromGtp, handicapStones, play, positions, toGtp } from "../src/go.js";
import { parseSgf, writeSgf } from "../src/sgf.js";
import { score } from "../src/score.js";

test("GTP coordinates skip I and count rows from the bottom", () => {
  assert.equal(toGtp([8, 0], 9), "J9");
  assert.equal(toGtp([0, 8], 9), "A1");
  assert.deepEqual(fromGtp("j9", 9), [8, 0]);
  assert.equal(fromGtp("pass", 9), null);
  assert.equal(fromGtp("K1", 9), null);
  assert.equal(fromGtp("A10", 9), null);
});

test("big boards: columns past the 25th are AA, AB, ... as the engine writes them", () => {
  assert.equal(toGtp([24, 0], 37), "Z37");
  assert.equal(toGtp([25, 0], 37), "AA37");
  assert.equal(toGtp([36, 36], 37), "AM1");
  assert.deepEqual(fromGtp("aa37", 37), [25, 0]);
  assert.deepEqual(fromGtp("AM1", 37), [36, 36]);
  assert.equal(fromGtp("AN1", 37), null, "off a 37x37 board");
  assert.equal(fromGtp("AA1", 25), null, "off a 25x25 board");
  assert.equal(fromGtp("A38", 37), null);
  for (let x = 0; x < 37; x++) assert.deepEqual(fromGtp(toGtp([x, 3], 37), 37), [x, 3]);
});

test("captures, suicide and simple ko", () => {
  // White A9 in the corner, Black B9 and A8 take it.
  const game = { size: 9, setup: [], first: "W", moves: [["W", "A9"], ["B", "B9"], ["W", "E5"], ["B", "A8"]] };
  const last = positions(game).at(-1);
  assert.equal(last.board[0][0], 0);
  assert.equal(last.captures.B, 1);
  // White may not play back at A9: suicide.
  assert.equal(play(last.board, [0, 0], -1, null), null);
  // A ko: Black F5 takes White E5; White may not retake at E5 at once.
  const ko = {
    size: 9,
    setup: [["B", "D5"], ["B", "E6"], ["B", "E4"], ["W", "F6"], ["W", "F4"], ["W", "G5"], ["W", "E5"]],
    first: "B",
    moves: [["B", "F5"]],
  };
  const [before, after] = positions(ko);
  assert.equal(after.captures.B, 1);
  assert.equal(after.board[4][4], 0);
  assert.equal(play(after.board, fromGtp("E5", 9), -1, before.board), null, "the ko retake is refused");
  assert.ok(play(after.board, fromGtp("E5", 9), -1, null), "legal without the ko");
});

test("handicap stones", () => {
  assert.deepEqual(handicapStones(19, 2).map((v) => toGtp(v, 19)), ["Q16", "D4"]);
  assert.equal(handicapStones(19, 9).length, 9);
  assert.deepEqual(handicapStones(9, 5).map((v) => toGtp(v, 9)).sort(), ["C3", "C7", "E5", "G3", "G7"]);
});

test("SGF: main line, setup, escapes, and back", () => {
  const g = parseSgf("(;GM[1]SZ[9]KM[6.5]RU[Japanese]AB[aa:ab]C[a \\] b];B[ee](;W[cc];B[]C[x])(;W[dd]))");
  assert.deepEqual(g.moves, [["B", "E5"], ["W", "C7"], ["B", "pass"]]);
  assert.deepEqual(g.setup, [["B", "A9"], ["B", "A8"]]);
  assert.equal(g.rules, "japanese");
  assert.equal(g.komi, 6.5);
  const again = parseSgf(writeSgf({ ...g, result: "B+R" }));
  assert.deepEqual(again, { ...g, result: "B+R" });
  assert.throws(() => parseSgf("not sgf"));
});

test("SGF: 37x37 points past z are A-K (tt is a point), and back", () => {
  const game = parseSgf("(;GM[1]FF[4]SZ[37]KM[7.5];B[AK];W[tt];B[])");
  assert.equal(game.size, 37);
  assert.deepEqual(game.moves, [["B", "AB1"], ["W", "U18"], ["B", "pass"]]);
  const again = parseSgf(writeSgf(game));
  assert.deepEqual(again.moves, game.moves);
  assert.throws(() => parseSgf("(;SZ[38])"), /not supported \(2 to 37\)/);
});

test("score: dead stones from ownership, area and territory counts", () => {
  // 5x5: Black owns the left three columns, White the right two; a White
  // stone at A5 is dead (owned by Black).
  const size = 5;
  const game = { size, komi: 0.5, rules: "chinese", setup: [["B", "C3"], ["W", "D3"], ["W", "A5"]], moves: [], first: "B" };
  const pos = positions(game)[0];
  const ownership = [];
  for (let y = 0; y < size; y++) for (let x = 0; x < size; x++) ownership.push(x < 3 ? 0.9 : -0.9);
  const area = score(game, pos, { ownership });
  assert.deepEqual([...area.dead], ["A5"]);
  assert.equal(area.result, "B+4.5"); // 15 - 10 - 0.5
  const territory = score({ ...game, rules: "japanese" }, pos, { ownership });
  // Black: 13 empty + the dead stone counted twice = 15; White: 9 empty.
  assert.equal(territory.result, "B+5.5");
});
