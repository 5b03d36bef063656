// The review request and mistakes, and the human-like move draw.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mistakesOf, reviewBody, reviewFits } from "../src/review.js";
import { humanMove } from "../src/human.js";

const game = {
  size: 9,
  komi: 6.5,
  rules: "japanese",
  handicap: 0,
  setup: [["B", "C7"]],
  first: "W",
  moves: [["W", "E5"], ["B", "D6"]],
  result: "",
};

test("the review request carries the game's position fields", () => {
  assert.deepEqual(reviewBody(game), {
    mode: "fast",
    moves: [["W", "E5"], ["B", "D6"]],
    boardXSize: 9,
    boardYSize: 9,
    komi: 6.5,
    rules: "japanese",
    initialStones: [["B", "C7"]],
    initialPlayer: "W",
  });
});

test("a review fits the game while the game starts with its moves", () => {
  const review = { game };
  assert.ok(reviewFits(review, game));
  assert.ok(reviewFits(review, { ...game, moves: [...game.moves, ["W", "pass"]] }));
  assert.ok(!reviewFits(review, { ...game, moves: [["W", "E5"], ["B", "D5"]] }));
  assert.ok(!reviewFits(review, { ...game, moves: [["W", "E5"]] }));
  assert.ok(!reviewFits(review, { ...game, komi: 7.5 }));
});

test("mistakes come in the job's order, from its moves", () => {
  const job = {
    mistakes: [1, 0],
    moves: [
      { turn: 0, move: "E5", pointsLost: 1 },
      { turn: 1, move: "D6", pointsLost: 4 },
    ],
  };
  assert.deepEqual(mistakesOf(job).map((m) => m.move), ["D6", "E5"]);
  assert.deepEqual(mistakesOf({ status: "running" }), []);
});

test("the human move is drawn from the human policy; the search decides pass", () => {
  const policy = new Array(82).fill(0);
  policy[40] = 1; // E5
  policy[81] = 0.9; // pass: never drawn
  const msg = { humanPolicy: policy, policy: new Array(82).fill(-1) };
  assert.equal(humanMove(msg, 9, { move: "C3" }, () => 0.99), "E5");
  assert.equal(humanMove(msg, 9, { move: "pass" }), "pass");
  // A human main net: its policy is the human one.
  assert.equal(humanMove({ policy }, 9, { move: "C3" }, () => 0.5), "E5");
  assert.equal(humanMove({}, 9, { move: "C3" }), "C3");
});
