// A small SGF reader/writer for what the page keeps: the main line (first
// child at each branch), SZ, KM, RU, HA, AB/AW, PB/PW, RE. SGF points are
// two letters "dd" from the top left; "" or "tt" (boards up to 19) is pass.

import { MAX_SIZE, fromGtp, toGtp } from "./go.js";

const A = "a".charCodeAt(0);
const UPPER_A = "A".charCodeAt(0);

// SGF's point letters: a-z, then A-Z for boards above 26.
const sgfIndex = (c) => (c >= "a" && c <= "z" ? c.charCodeAt(0) - A : c >= "A" && c <= "Z" ? c.charCodeAt(0) - UPPER_A + 26 : -1);
const sgfLetter = (i) => String.fromCharCode(i < 26 ? A + i : UPPER_A + i - 26);

function pointToGtp(text, size) {
  if (text === "" || (text === "tt" && size <= 19)) return "pass";
  const x = sgfIndex(text[0] ?? "");
  const y = sgfIndex(text[1] ?? "");
  if (!(x >= 0 && x < size && y >= 0 && y < size)) return "pass";
  return toGtp([x, y], size);
}

function gtpToPoint(gtp, size) {
  const v = fromGtp(gtp, size);
  if (!v) return "";
  return sgfLetter(v[0]) + sgfLetter(v[1]);
}

/** The nodes of the main line: [{ IDENT: [values] }]. */
function mainLine(text) {
  let i = 0;
  const skipSpace = () => {
    while (i < text.length && /\s/.test(text[i])) i++;
  };
  const value = () => {
    let v = "";
    i++; // [
    while (i < text.length && text[i] !== "]") {
      if (text[i] === "\\") i++;
      v += text[i] ?? "";
      i++;
    }
    i++; // ]
    return v;
  };
  const node = () => {
    const props = {};
    i++; // ;
    for (;;) {
      skipSpace();
      const m = /^[A-Za-z]+/.exec(text.slice(i, i + 32));
      if (!m) return props;
      i += m[0].length;
      const ident = m[0].replace(/[a-z]/g, "");
      const values = [];
      skipSpace();
      while (text[i] === "[") {
        values.push(value());
        skipSpace();
      }
      (props[ident] ??= []).push(...values);
    }
  };
  // A game tree: its nodes, then its variations; only the first
  // variation's nodes are kept, the others are read past.
  const tree = (keep, out) => {
    i++; // (
    let followed = false;
    for (;;) {
      skipSpace();
      const c = text[i];
      if (c === undefined) return;
      if (c === ";") {
        const n = node();
        if (keep) out.push(n);
      } else if (c === "(") {
        tree(keep && !followed, out);
        followed = true;
      } else if (c === ")") {
        i++;
        return;
      } else {
        throw new Error(`SGF: unexpected '${c}' at ${i}`);
      }
    }
  };
  i = text.indexOf("(");
  if (i < 0) throw new Error("not an SGF file: no '('");
  const out = [];
  tree(true, out);
  return out;
}

/** Expands "aa:cc" point lists. */
function points(values) {
  const out = [];
  for (const v of values) {
    const [a, b] = v.split(":");
    if (!b) {
      out.push(a);
      continue;
    }
    for (let x = Math.min(a.charCodeAt(0), b.charCodeAt(0)); x <= Math.max(a.charCodeAt(0), b.charCodeAt(0)); x++)
      for (let y = Math.min(a.charCodeAt(1), b.charCodeAt(1)); y <= Math.max(a.charCodeAt(1), b.charCodeAt(1)); y++)
        out.push(String.fromCharCode(x, y));
  }
  return out;
}

const RULES = {
  chinese: "chinese",
  japanese: "japanese",
  korean: "korean",
  aga: "aga",
  "new zealand": "new-zealand",
  nz: "new-zealand",
  "tromp-taylor": "tromp-taylor",
  "tromp taylor": "tromp-taylor",
};

/** SGF text → { size, komi, rules, handicap, setup, moves, first, result }. */
export function parseSgf(text) {
  const nodes = mainLine(text);
  if (!nodes.length) throw new Error("not an SGF file: no node");
  const root = nodes[0];
  const size = parseInt(root.SZ?.[0] ?? "19", 10);
  if (!(size >= 2 && size <= MAX_SIZE)) throw new Error(`board size ${root.SZ?.[0]} is not supported (2 to ${MAX_SIZE})`);
  const komi = parseFloat(root.KM?.[0] ?? "");
  const rules = RULES[(root.RU?.[0] ?? "").trim().toLowerCase()] ?? "chinese";
  const setup = [];
  const moves = [];
  for (const node of nodes) {
    for (const p of points(node.AB ?? [])) setup.push(["B", pointToGtp(p, size)]);
    for (const p of points(node.AW ?? [])) setup.push(["W", pointToGtp(p, size)]);
    if (node.B) moves.push(["B", pointToGtp(node.B[0], size)]);
    else if (node.W) moves.push(["W", pointToGtp(node.W[0], size)]);
  }
  const first = root.PL?.[0]?.toUpperCase() === "W" || (!moves.length && setup.length > 1 && root.HA) ? "W" : moves[0]?.[0] ?? "B";
  return {
    size,
    komi: Number.isFinite(komi) ? komi : 7.5,
    rules,
    handicap: parseInt(root.HA?.[0] ?? "0", 10) || 0,
    setup: setup.filter(([, g]) => g !== "pass"),
    moves,
    first,
    result: root.RE?.[0] ?? "",
  };
}

const escape = (s) => String(s).replace(/([\]\\])/g, "\\$1");

/** The game → SGF text (main line only). */
export function writeSgf(game) {
  const { size } = game;
  let root = `;GM[1]FF[4]CA[UTF-8]AP[engine]SZ[${size}]KM[${game.komi}]RU[${escape(game.rules)}]`;
  if (game.handicap) root += `HA[${game.handicap}]`;
  if (game.black) root += `PB[${escape(game.black)}]`;
  if (game.white) root += `PW[${escape(game.white)}]`;
  if (game.result) root += `RE[${escape(game.result)}]`;
  for (const color of ["B", "W"]) {
    const pts = game.setup.filter(([c]) => c === color).map(([, g]) => `[${gtpToPoint(g, size)}]`);
    if (pts.length) root += `A${color}${pts.join("")}`;
  }
  if (game.first === "W" && !game.moves.length) root += "PL[W]";
  const moves = game.moves.map(([c, g]) => `;${c}[${gtpToPoint(g, size)}]`).join("");
  return `(${root}${moves})\n`;
}
