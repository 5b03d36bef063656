// The whole-game review: the server's review job (`POST /v1/reviews`,
// polled with `GET /v1/reviews/{id}`, cancelled with `DELETE`; see
// docs/serve.md). Plain HTTP with the page's key as a bearer token.

import { storedKey } from "./engine.js";

const headers = () => {
  const key = storedKey();
  const h = { "Content-Type": "application/json" };
  if (key) h.Authorization = `Bearer ${key}`;
  return h;
};

async function call(method, path, body) {
  const res = await fetch(path, { method, headers: headers(), body: body && JSON.stringify(body) });
  let json = null;
  try {
    json = await res.json();
  } catch {
    // No JSON body (a proxy's page, say): the status says it.
  }
  if (!res.ok) {
    const why = json?.error ?? res.statusText;
    throw new Error(res.status === 401 ? "a key is needed for reviews" : `${res.status} ${why}`);
  }
  return json;
}

/** The review request for `game` (the page's game object): fast mode. */
export const reviewBody = (game) => ({
  mode: "fast",
  moves: game.moves,
  boardXSize: game.size,
  boardYSize: game.size,
  komi: game.komi,
  rules: game.rules,
  initialStones: game.setup,
  initialPlayer: game.first,
});

export const startReview = (game) => call("POST", "/v1/reviews", reviewBody(game));
export const getReview = (id) => call("GET", `/v1/reviews/${encodeURIComponent(id)}`);
export const cancelReview = (id) => call("DELETE", `/v1/reviews/${encodeURIComponent(id)}`);

/** Whether `game` still holds the moves a review was made of. */
export function reviewFits(review, game) {
  const g = review.game;
  if (g === game) return true;
  return (
    g.size === game.size &&
    g.komi === game.komi &&
    g.rules === game.rules &&
    JSON.stringify(g.setup) === JSON.stringify(game.setup) &&
    game.moves.length >= g.moves.length &&
    g.moves.every(([c, v], i) => game.moves[i][0] === c && game.moves[i][1] === v)
  );
}

/** The mistakes of a finished (or partial) review, largest first. */
export function mistakesOf(job) {
  if (!job?.moves) return [];
  const byTurn = new Map(job.moves.map((m) => [m.turn, m]));
  return (job.mistakes ?? []).map((t) => byTurn.get(t)).filter(Boolean);
}

export const FINISHED = new Set(["done", "cancelled", "failed"]);
