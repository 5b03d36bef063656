// "Solve this corner": the tsumego query (docs/tsumego.md) and what the
// page shows of its answer. Pure functions, so node can test them.

/** The solve's search: enough for a corner problem, small enough to wait for. */
export const SOLVE_VISITS = 400;

/**
 * The analysis query that solves the position `position` (the page's
 * position fields): the server finds the problem's stones, frames them
 * and works out who attacks (`"auto"` region and goal, no ko threats).
 */
export function solveQuery(position, visitCap = Infinity) {
  return {
    ...position,
    maxVisits: Math.min(SOLVE_VISITS, visitCap),
    tsumego: { region: "auto", goal: "auto", koThreats: "none" },
  };
}

const COLOR = { B: "Black", W: "White" };

/** A group's line: "Black D9 (5 stones): dead", ko with who needs threats. */
export function groupText(g) {
  const stones = g.stones ?? [];
  const who = `${COLOR[g.color] ?? g.color} ${stones[0] ?? "?"}${stones.length > 1 ? ` (${stones.length} stones)` : ""}`;
  let status = g.status;
  if (g.status === "ko") {
    status = g.mustFindThreats ? `ko, ${COLOR[g.mustFindThreats] ?? g.mustFindThreats} must find a ko threat` : "ko";
  }
  return `${who}: ${status}`;
}

/** A line without its run of passes at the end, but for the first. */
export function trimPasses(line) {
  let end = line.length;
  while (end >= 2 && line[end - 1] === "pass" && line[end - 2] === "pass") end--;
  return line.slice(0, end);
}

/**
 * The page's view of a final tsumego response `msg` for the side `turn`
 * ("B"/"W"): `winning` (the correct first moves, best first), `summary`
 * (one sentence), `groups` (their lines, the target's first) and
 * `refutations` ([{ move, line }], the wrong first moves and how they
 * fail). Null when the response has no `tsumego` object.
 */
export function solutionOf(msg, turn) {
  const t = msg?.tsumego;
  if (!t) return null;
  const winning = (t.winningMoves ?? []).filter((m) => m !== "pass");
  const side = COLOR[turn] ?? turn;
  const goal = t.goal ?? "solve";
  const summary = winning.length
    ? `${side} to ${goal}: ${winning.join(", ")}.`
    : `${side} to ${goal}: no move found that works.`;
  const target = new Set(t.target ?? []);
  const groups = [...(t.groups ?? [])]
    .sort((a, b) => Number((b.stones ?? []).some((s) => target.has(s))) - Number((a.stones ?? []).some((s) => target.has(s))))
    .map((g) => ({ text: groupText(g), status: g.status }));
  const refutations = Object.entries(t.refutations ?? {}).map(([move, line]) => ({ move, line: trimPasses(line ?? []) }));
  return { winning, summary, groups, refutations };
}

/**
 * The message for a refused solve: the server's words (a field error on
 * `tsumego` says why the problem could not be framed: no stones, a
 * region too big).
 */
export function solveError(msg) {
  const text = msg?.error ?? "unknown error";
  return msg?.field === "tsumego" ? `Cannot solve: ${text}` : `solve: ${text}`;
}
