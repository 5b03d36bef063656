// The "Solve this corner" query and how its answer is shown.
import { test } from "node:test";
import assert from "node:assert/strict";
import { SOLVE_VISITS, groupText, trimPasses, solutionOf, solveError, solveQuery } from "../src/tsumego.js";

test("the solve query is the position plus an auto tsumego field", () => {
  const position = { boardXSize: 9, boardYSize: 9, moves: [], initialPlayer: "W" };
  assert.deepEqual(solveQuery(position), {
    ...position,
    maxVisits: SOLVE_VISITS,
    tsumego: { region: "auto", goal: "auto", koThreats: "none" },
  });
  // A key's visit limit caps it.
  assert.equal(solveQuery(position, 50).maxVisits, 50);
});

// The response of docs/tsumego.md's example, trimmed.
const response = {
  id: "q3",
  isDuringSearch: false,
  tsumego: {
    region: ["A9", "B9"],
    playable: ["A9", "B9"],
    attacker: "W",
    goal: "kill",
    target: ["A8", "D9", "D8", "C8", "B8"],
    groups: [
      { stones: ["E9", "E8", "E7"], color: "W", status: "alive", owner: "W", mustFindThreats: null },
      { stones: ["D9", "A8", "B8", "C8", "D8"], color: "B", status: "dead", owner: "W", mustFindThreats: null },
    ],
    winningMoves: ["B9"],
    refutations: { D6: ["D6", "B9", "pass", "pass", "pass"] },
    koThreats: [],
  },
};

test("a solved problem: correct moves, the target's group first, refutations", () => {
  const s = solutionOf(response, "W");
  assert.deepEqual(s.winning, ["B9"]);
  assert.equal(s.summary, "White to kill: B9.");
  assert.deepEqual(s.groups, [
    { text: "Black D9 (5 stones): dead", status: "dead" },
    { text: "White E9 (3 stones): alive", status: "alive" },
  ]);
  assert.deepEqual(s.refutations, [{ move: "D6", line: ["D6", "B9", "pass"] }]);
});

test("no winning move is said, and pass is no move to mark", () => {
  const msg = { tsumego: { ...response.tsumego, goal: "live", winningMoves: ["pass"] } };
  const s = solutionOf(msg, "B");
  assert.deepEqual(s.winning, []);
  assert.equal(s.summary, "Black to live: no move found that works.");
});

test("a ko names the side that must find threats", () => {
  assert.equal(
    groupText({ stones: ["A1"], color: "B", status: "ko", mustFindThreats: "W" }),
    "Black A1: ko, White must find a ko threat",
  );
  assert.equal(groupText({ stones: ["A1"], color: "W", status: "seki", mustFindThreats: null }), "White A1: seki");
});

test("a response without a tsumego object, and errors", () => {
  assert.equal(solutionOf({ moveInfos: [] }, "B"), null);
  assert.equal(
    solveError({ error: "no stones to solve", field: "tsumego" }),
    "Cannot solve: no stones to solve",
  );
  assert.equal(solveError({ error: "connection closed" }), "solve: connection closed");
});

test("a line keeps one pass of its run at the end", () => {
  assert.deepEqual(trimPasses(["D6", "B9", "pass", "pass", "pass"]), ["D6", "B9", "pass"]);
  assert.deepEqual(trimPasses(["pass", "B9"]), ["pass", "B9"]);
  assert.deepEqual(trimPasses(["pass", "pass"]), ["pass"]);
  assert.deepEqual(trimPasses([]), []);
});
