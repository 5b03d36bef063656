// The engine's move under a human SL profile: drawn from the human
// policy of the query's answer (`humanPolicy` when the server has a
// `-human-model` beside its main net, else `policy` of a human main net),
// sharpened by the temperature of configs/gtp_human5k.toml
// (`chosenMoveTemperature` 0.7), as KaTrain's human-style AI draws its
// moves. The search decides when to pass (`humanSLChosenMoveIgnorePass`).

import { toGtp } from "./go.js";

const TEMPERATURE = 0.7;

export function humanMove(msg, size, best, random = Math.random) {
  if (!best || best.move === "pass") return "pass";
  const policy = msg.humanPolicy ?? msg.policy;
  if (!policy) return best.move;
  const weights = policy.slice(0, size * size).map((p) => (p > 0 ? p ** (1 / TEMPERATURE) : 0));
  const total = weights.reduce((a, b) => a + b, 0);
  if (!(total > 0)) return best.move;
  let r = random() * total;
  for (let i = 0; i < weights.length; i++) {
    r -= weights[i];
    if (weights[i] > 0 && r <= 0) return toGtp([i % size, Math.floor(i / size)], size);
  }
  return best.move;
}
