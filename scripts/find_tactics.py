#!/usr/bin/env python3
"""Find tactical test positions: where the raw policy's favourite move differs from a search's.

How the cases in tests/search_tactics.rs were found (9x9, g170 net):

  # 1. games of the net's raw policy (deterministic for a given seed and net)
  scripts/find_tactics.py games --count 15 --seed 1 --early-moves 9 --late-temp 0.3 > games-a.txt
  scripts/find_tactics.py games --count 40 --seed 7 --early-moves 18 --late-temp 0.5 > games-b.txt
  # 2. scan them (Black to move): any disagreement, or only positions with a working
  #    ladder / a legal ko capture for Black, where the search's best move is that move
  scripts/find_tactics.py scan games-a.txt --kind any      # -> capturing race, game 8 move 26
  scripts/find_tactics.py scan games-b.txt --kind ladder   # -> game 1 move 34 (H5)
  scripts/find_tactics.py scan games-b.txt --kind ko       # -> game 29 move 38 (F8)

Every hit was then read by hand and re-checked at 1000+ visits. Needs a release build
(target/release/engine) and ../shared/models. Plain Python 3, no dependencies.
"""
import argparse
import os
import pathlib
import random
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SHARED = pathlib.Path(os.environ.get("ENGINE_SHARED_DIR", ROOT.parent / "shared"))
MODEL = SHARED / "models/g170-b6c96-s175395328-d26788732.bin.gz"
COLS = "ABCDEFGHJKLMNOPQRST"


class Engine:
    """`engine gtp` driven line by line."""

    def __init__(self, overrides):
        cmd = [str(ROOT / "target/release/engine"), "gtp", "-model", str(MODEL),
               "-config", str(ROOT / "configs/gtp.toml"), "-override-config",
               "nnRandomize=false,allowResignation=false,numSearchThreads=1" + overrides]
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)

    def cmd(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        out = []
        while True:
            text = self.p.stdout.readline()
            if not text:
                sys.exit(f"engine died on {line!r}")
            if text.strip() == "":
                if out:
                    break
                continue
            out.append(text.rstrip("\n"))
        if not out[0].startswith("="):
            sys.exit(f"{line!r}: {out}")
        return out

    def setup(self, size, moves):
        self.cmd(f"boardsize {size}")
        self.cmd("clear_board")
        self.cmd("komi 7.5")
        colour = "b"
        for m in moves:
            self.cmd(f"play {colour} {m}")
            colour = "w" if colour == "b" else "b"

    def raw_policy(self, size):
        """{move: probability} of the raw net (identity symmetry)."""
        lines = self.cmd("kata-raw-nn 0")
        i = lines.index("policy")
        policy = {}
        for y in range(size):
            for x, v in enumerate(lines[i + 1 + y].split()):
                if v != "NAN":
                    policy[f"{COLS[x]}{size - y}"] = float(v)
        policy["pass"] = float(lines[i + 1 + size].split()[1])
        return policy

    def search(self, colour):
        """{move: (visits, winrate)} of a search, which is then taken back."""
        lines = self.cmd(f"kata-genmove_analyze {colour} 0")
        infos = [l for l in lines if l.startswith("info")]
        found = {}
        for part in (infos[-1] if infos else "").split(" info "):
            m = re.search(r"move (\S+) visits (\d+)", part)
            w = re.search(r"winrate (\S+)", part)
            if m and w:
                found[m.group(1)] = (int(m.group(2)), float(w.group(1)))
        if not lines[-1].endswith("resign"):
            self.cmd("undo")
        return found


# --- a tiny board for finding ladders and kos -------------------------------------------

def neighbours(p, n):
    x, y = p
    for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        if 0 <= x + dx < n and 0 <= y + dy < n:
            yield (x + dx, y + dy)


def chain(board, p, n):
    stones, todo, libs = {p}, [p], set()
    while todo:
        q = todo.pop()
        for r in neighbours(q, n):
            if board.get(r) == board[p] and r not in stones:
                stones.add(r)
                todo.append(r)
            elif r not in board:
                libs.add(r)
    return stones, libs


def play(board, p, colour, n):
    """Plays on `board` (a dict) and returns the captured points."""
    board[p] = colour
    opp = "w" if colour == "b" else "b"
    captured = []
    for r in neighbours(p, n):
        if board.get(r) == opp:
            stones, libs = chain(board, r, n)
            if not libs:
                for s in stones:
                    del board[s]
                    captured.append(s)
    return captured


def escapes(board, p, n, depth, deepest):
    """White's chain at p, in atari with White to move: can it escape a ladder?"""
    deepest[0] = max(deepest[0], depth)
    if depth > 60:
        return True
    stones, libs = chain(board, p, n)
    tries = set(libs)
    for s in stones:  # capturing an attacker in atari also escapes
        for r in neighbours(s, n):
            if board.get(r) == "b":
                _, l = chain(board, r, n)
                if len(l) == 1:
                    tries |= l
    for mv in tries:
        b = dict(board)
        play(b, mv, "w", n)
        _, l = chain(b, p, n)
        if len(l) >= 3 or (len(l) == 2 and not ladder_captures(b, p, n, depth + 1, deepest)):
            return True
    return False


def ladder_captures(board, p, n, depth, deepest):
    """White's chain at p has two liberties, Black to move: does an atari ladder it?"""
    _, libs = chain(board, p, n)
    for a in libs:
        b = dict(board)
        play(b, a, "b", n)
        if len(chain(b, a, n)[1]) < 2:
            continue
        if p not in b or not escapes(b, p, n, depth + 1, deepest):
            return True
    return False


def ladder_moves(board, n):
    """Black ataris that start a ladder of at least two more ataris."""
    moves, seen = set(), set()
    for p, colour in list(board.items()):
        if colour != "w" or p in seen:
            continue
        stones, libs = chain(board, p, n)
        seen |= stones
        if len(libs) != 2:
            continue
        for a in libs:
            b = dict(board)
            play(b, a, "b", n)
            deepest = [0]
            if len(chain(b, a, n)[1]) >= 2 and not escapes(b, p, n, 0, deepest) and deepest[0] >= 4:
                moves.add(a)
    return moves


def ko_captures(board, n):
    """Black moves that capture one stone and leave the capturing stone alone in atari."""
    moves = set()
    for x in range(n):
        for y in range(n):
            p = (x, y)
            if p in board:
                continue
            b = dict(board)
            if len(play(b, p, "b", n)) == 1:
                stones, libs = chain(b, p, n)
                if len(stones) == 1 and len(libs) == 1:
                    moves.add(p)
    return moves


def vertex(p, n):
    return f"{COLS[p[0]]}{p[1] + 1}"


def point(m):
    return None if m == "pass" else (COLS.index(m[0]), int(m[1:]) - 1)


# --- commands ----------------------------------------------------------------------------

def games(args):
    rng = random.Random(args.seed)
    engine = Engine("")
    n = args.size
    for _ in range(args.count):
        engine.setup(n, [])
        moves, colour, passes = [], "b", 0
        while len(moves) < 2 * n * n and passes < 2:
            policy = engine.raw_policy(n)
            temp = 1.0 if len(moves) < args.early_moves else args.late_temp
            names = list(policy)
            weights = [max(policy[m], 1e-9) ** (1 / temp) for m in names]
            m = rng.choices(names, weights=weights)[0]
            engine.cmd(f"play {colour} {m}")
            moves.append(m)
            passes = passes + 1 if m == "pass" else 0
            colour = "w" if colour == "b" else "b"
        print(n, " ".join(moves), flush=True)


def scan(args):
    engine = Engine(f",maxVisits={args.visits}")
    for g, line in enumerate(open(args.games)):
        n, *record = line.split()
        n = int(n)
        board = {}
        for k, mv in enumerate(record):
            if k % 2 == 0:  # Black to move
                if args.kind == "ladder":
                    targets = {vertex(p, n) for p in ladder_moves(board, n)}
                elif args.kind == "ko":
                    targets = {vertex(p, n) for p in ko_captures(board, n)}
                else:
                    targets = None
                if targets is None or targets:
                    report(engine, n, g, record[:k], targets, args.min_gain)
            p = point(mv)
            if p:
                play(board, p, "b" if k % 2 == 0 else "w", n)


def report(engine, n, g, moves, targets, min_gain):
    engine.setup(n, moves)
    policy = engine.raw_policy(n)
    raw = max(policy, key=policy.get)
    found = engine.search("b")
    if not found:
        return
    best = max(found, key=lambda m: found[m][0])
    if best == raw or (targets is not None and best not in targets):
        return
    gain = found[best][1] - found.get(raw, (0, 0.0))[1]
    if gain >= min_gain:
        print(f"game {g} move {len(moves)}: raw {raw} ({policy[raw]:.2f}) search {best} "
              f"{found[best]} raw-move {found.get(raw)} :: {' '.join(moves)}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("games", help="raw-policy games, one per line: size and GTP moves")
    g.add_argument("--size", type=int, default=9)
    g.add_argument("--count", type=int, default=10)
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--early-moves", type=int, default=9, help="moves sampled at temperature 1")
    g.add_argument("--late-temp", type=float, default=0.3)
    s = sub.add_parser("scan", help="positions where raw policy and search disagree")
    s.add_argument("games")
    s.add_argument("--kind", choices=["any", "ladder", "ko"], default="any")
    s.add_argument("--visits", type=int, default=300)
    s.add_argument("--min-gain", type=float, default=0.05, help="winrate the search gains over the raw move")
    args = ap.parse_args()
    games(args) if args.cmd == "games" else scan(args)


if __name__ == "__main__":
    main()
