// The end-of-game count from the engine's ownership of the final position:
// a stone owned by the other side is dead; each point goes to the side
// that owns it. Area rules count stones and territory; territory rules
// (japanese, korean) count territory, dead stones and captures.

import { toGtp } from "./go.js";

/** The owner of a point: 1 (Black), -1 (White), 0 (unsettled). */
const owner = (o) => (o > 0.5 ? 1 : o < -0.5 ? -1 : 0);

export function score(game, position, msg) {
  const { size, komi } = game;
  const own = msg.ownership;
  if (!own || own.length !== size * size) {
    // No ownership (e.g. a stand-in search): the engine's score lead.
    const lead = msg.rootInfo?.scoreLead ?? 0;
    return { result: resultText(lead), dead: new Set(), note: "Counted from the engine's score lead." };
  }
  const territoryRules = game.rules === "japanese" || game.rules === "korean";
  const dead = new Set();
  const points = { 1: 0, "-1": 0 };
  position.board.forEach((row, y) =>
    row.forEach((stone, x) => {
      const o = owner(own[y * size + x]);
      if (stone !== 0 && o === -stone) {
        dead.add(toGtp([x, y], size));
        // Territory rules: the point and the prisoner both count.
        points[o] += territoryRules ? 2 : 1;
      } else if (stone !== 0) {
        if (!territoryRules) points[stone] += 1;
      } else if (o !== 0) {
        points[o] += 1;
      }
    }),
  );
  if (territoryRules) {
    points[1] += position.captures.B;
    points[-1] += position.captures.W;
  }
  const diff = points[1] - points[-1] - komi;
  return {
    result: resultText(diff),
    dead,
    note: `Black ${points[1]}, White ${points[-1]} + ${komi} komi${dead.size ? `; ${dead.size} dead stones marked ✕` : ""}.`,
  };
}

function resultText(diff) {
  if (Math.abs(diff) < 1e-9) return "0";
  return `${diff > 0 ? "B" : "W"}+${Math.abs(diff)}`;
}
