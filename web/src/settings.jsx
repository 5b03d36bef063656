// The new-game form, and the settings read from the page's URL (the test
// hook `/?size=9&color=black&visits=50`; also komi, rules, handicap and
// analysisVisits).

import { useState } from "preact/hooks";
import { MAX_SIZE } from "./go.js";

export const RULES = ["chinese", "japanese", "korean", "aga", "tromp-taylor", "new-zealand"];
// The usual sizes first, then every other size the engine takes (2-37).
const COMMON_SIZES = [9, 13, 19];
const OTHER_SIZES = Array.from({ length: MAX_SIZE - 1 }, (_, i) => i + 2).filter((n) => !COMMON_SIZES.includes(n));

// Human SL profiles offered (every name the engine takes is in
// docs/gtp.md; these are KataGo's usual ones).
const RANKS = [
  ...Array.from({ length: 20 }, (_, i) => `${20 - i}k`),
  ...Array.from({ length: 9 }, (_, i) => `${i + 1}d`),
];
const PROFILE_GROUPS = [
  ["Rank (modern)", RANKS.map((r) => `rank_${r}`)],
  ["Rank (before AlphaZero)", RANKS.map((r) => `preaz_${r}`)],
  ["Professional of the year", [1800, 1850, 1900, 1950, 1980, 2000, 2010, 2015, 2020, 2023].map((y) => `proyear_${y}`)],
];
export const PROFILES = PROFILE_GROUPS.flatMap(([, names]) => names);

const num = (v, lo, hi, dflt) => {
  const n = Number(v);
  return v !== null && v !== "" && Number.isFinite(n) && n >= lo && n <= hi ? n : dflt;
};

export function readSettings(params) {
  const size = num(params.get("size"), 2, MAX_SIZE, 9);
  const color = (params.get("color") ?? "").toLowerCase().startsWith("w") ? "W" : "B";
  const rules = RULES.includes(params.get("rules")) ? params.get("rules") : "chinese";
  return {
    size: Math.round(size),
    color,
    komi: num(params.get("komi"), -150, 150, rules === "japanese" || rules === "korean" ? 6.5 : 7.5),
    rules,
    handicap: Math.round(num(params.get("handicap"), 0, 9, 0)),
    visits: Math.round(num(params.get("visits"), 1, 1e6, 100)),
    analysisVisits: Math.round(num(params.get("analysisVisits"), 1, 1e7, 2000)),
    // A human SL profile as the strength (only when the server has a
    // human net; else the visits are).
    profile: PROFILES.includes(params.get("profile")) ? params.get("profile") : "",
  };
}

export function NewGame({ settings, onStart, humanNet }) {
  const [s, setS] = useState(settings);
  const set = (k, parse = (v) => v) => (e) => setS({ ...s, [k]: parse(e.target.value) });
  return (
    // data-human-net: "true" when the server has a human SL net (profiles
    // offered), "false" when not, "unknown" before it answers.
    <details class="new-game" data-human-net={humanNet === null ? "unknown" : String(humanNet)}>
      <summary>New game</summary>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          onStart(s);
        }}
      >
        <label>
          Size
          <select value={s.size} onChange={set("size", Number)}>
            {COMMON_SIZES.map((n) => (
              <option value={n}>{n}×{n}</option>
            ))}
            <optgroup label="other sizes">
              {OTHER_SIZES.map((n) => (
                <option value={n}>{n}×{n}</option>
              ))}
            </optgroup>
          </select>
        </label>
        <label>
          You play
          <select value={s.color} onChange={set("color")}>
            <option value="B">Black</option>
            <option value="W">White</option>
          </select>
        </label>
        <label>
          Komi
          <input type="number" step="0.5" value={s.komi} onInput={set("komi", Number)} />
        </label>
        <label>
          Rules
          <select value={s.rules} onChange={set("rules")}>
            {RULES.map((r) => (
              <option value={r}>{r}</option>
            ))}
          </select>
        </label>
        <label>
          Handicap
          <select value={s.handicap} onChange={set("handicap", Number)}>
            {[0, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => (
              <option value={n}>{n || "none"}</option>
            ))}
          </select>
        </label>
        <label>
          Strength (visits)
          <input type="number" min="1" value={s.visits} onInput={set("visits", (v) => Math.max(1, Math.round(Number(v)) || 1))} />
        </label>
        {humanNet && (
          <label>
            Human-like play
            <select value={s.profile} onChange={set("profile")} data-testid="human-profile">
              <option value="">off (visits)</option>
              {PROFILE_GROUPS.map(([name, names]) => (
                <optgroup label={name}>
                  {names.map((n) => (
                    <option value={n}>{n}</option>
                  ))}
                </optgroup>
              ))}
            </select>
          </label>
        )}
        <button type="submit">Start</button>
      </form>
    </details>
  );
}
