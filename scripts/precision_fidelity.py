#!/usr/bin/env python3
"""How far one nnPrecision's raw net outputs are from another's (fp32 by
default), on the positions of real game records.

Replays each SGF's main line into two `engine gtp` processes that load the
same net, one per precision, and asks both for `kata-raw-nn 0` (symmetry 0,
no search) every EVERY moves. Prints, per board size, a Markdown table row:
the policy's KL divergence from the baseline's (mean, 99th percentile,
largest), how often the policy's top move is one of the baseline's (within
10% of its top probability), and the differences
in White's win probability and lead (mean and largest).

    scripts/precision_fidelity.py --model NET [--test int8] [--every 10] SGF|DIR...

`--baseline-env` and `--test-env KEY=VALUE` (repeatable) set environment
variables for one side, e.g. two fp32 runs on different Winograd tiles:
    scripts/precision_fidelity.py --model NET --baseline fp32 --baseline-env ENGINE_WINOGRAD=f3 \
        --test fp32 --test-env ENGINE_WINOGRAD=f5 "$SGF_DIR"

Example (the project's net on the 19x19 games an `engine match` wrote to
its -sgf-output-dir, here SGF_DIR):
    scripts/precision_fidelity.py --model models/engine-9x9-13x13-b4c32-grow304.bin.gz \\
        --test int8 "$SGF_DIR"
"""
import argparse
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sgf_moves import sgf_moves  # noqa: E402

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sgf_paths(args):
    """Every .sgf named, or inside a folder named, in a stable order."""
    out = []
    for p in args:
        if os.path.isdir(p):
            out += sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".sgf"))
        else:
            out.append(p)
    return out


def commands(games, every, limit):
    """The GTP lines that replay every game and ask for the raw outputs
    every `every` moves, and the board size of each position asked."""
    lines, sizes = [], []
    for size, komi, moves in games:
        lines += [f"boardsize {size}", "clear_board", f"komi {komi}"]
        for ply in range(len(moves) + 1):
            if ply % every == 0 and len(sizes) < limit:
                lines.append("kata-raw-nn 0")
                sizes.append(size)
            if ply < len(moves):
                lines.append(f"play {moves[ply][0]} {moves[ply][1]}")
    lines.append("quit")
    return "\n".join(lines) + "\n", sizes


def raw_outputs(text):
    """Each `kata-raw-nn` response's whiteWin, whiteLead and policy (with
    pass last), in order."""
    out, cur, section = [], None, None
    for line in text.splitlines():
        w = line.split()
        if not w:
            continue
        if w[0] == "=" and len(w) > 1 and w[1] == "symmetry":
            cur = {"policy": []}
            out.append(cur)
            section = None
            continue
        if w[0] == "?":
            sys.exit(f"precision_fidelity.py: the engine refused a command: {line}")
        if cur is None:
            continue
        if w[0] == "policy":
            section = "policy"
            continue
        if w[0] == "policyPass":
            cur["policy"].append(float(w[1]))
            section = None
            continue
        if section == "policy" and not w[0][0].isalpha():
            cur["policy"] += [float(x) if x != "NAN" else float("nan") for x in w]
            continue
        section = None
        if len(w) == 2 and w[0] in ("whiteWin", "whiteLead"):
            cur[w[0]] = float(w[1])
    return out


def env_pairs(pairs):
    """`KEY=VALUE` strings as a dict (exits on one without `=`)."""
    out = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not eq or not key:
            sys.exit(f"precision_fidelity.py: {pair!r} is not KEY=VALUE")
        out[key] = value
    return out


def run_engine(binary, model, config, precision, env, script):
    """One engine's stdout for the whole script."""
    cmd = [binary, "gtp", "-model", model, "-config", config,
           "-override-config", f"nnPrecision={precision}"]
    done = subprocess.run(cmd, input=script, capture_output=True, text=True,
                          env={**os.environ, **env})
    if done.returncode != 0:
        sys.exit(f"precision_fidelity.py: {' '.join(cmd)} failed:\n{done.stderr[-2000:]}")
    return done.stdout


def kl(p, q):
    """KL(p || q) over the legal moves (NaN marks illegal ones); q's
    printed zeros count as 1e-6, the output's resolution."""
    total = 0.0
    for a, b in zip(p, q):
        if a == a and a > 0:
            total += a * math.log(a / max(b, 1e-6))
    return total


def same_top_move(p, q):
    """Whether q's most likely move is one of p's: p gives it at least 90%
    of its top probability (symmetric positions, the empty board first,
    have several equal top moves, endgames near-equal ones, of which either
    precision may pick any)."""
    legal = [i for i, x in enumerate(q) if x == x]
    best_q = max(legal, key=lambda i: q[i])
    best_p = max(x for x in p if x == x)
    return p[best_q] >= 0.9 * best_p


def percentile(xs, f):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(f * len(xs)))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", default=os.path.join(HERE, "target/release/engine"))
    ap.add_argument("--model", required=True)
    ap.add_argument("--config", default=os.path.join(HERE, "configs/gtp.toml"))
    ap.add_argument("--baseline", default="fp32", help="nnPrecision compared against")
    ap.add_argument("--test", default="int8", help="nnPrecision compared")
    ap.add_argument("--baseline-env", action="append", default=[], metavar="KEY=VALUE",
                    help="an environment variable for the baseline's engine (repeatable)")
    ap.add_argument("--test-env", action="append", default=[], metavar="KEY=VALUE",
                    help="an environment variable for the tested engine (repeatable)")
    ap.add_argument("--every", type=int, default=10, help="ask every this many moves")
    ap.add_argument("--limit", type=int, default=2000, help="at most this many positions")
    ap.add_argument("sgf", nargs="+", help="SGF files or folders of them")
    a = ap.parse_args()
    games = [sgf_moves(p) for p in sgf_paths(a.sgf)]
    if not games:
        sys.exit("precision_fidelity.py: no SGF files")
    script, sizes = commands(games, a.every, a.limit)
    base_env, test_env = env_pairs(a.baseline_env), env_pairs(a.test_env)
    base = raw_outputs(run_engine(a.engine, a.model, a.config, a.baseline, base_env, script))
    test = raw_outputs(run_engine(a.engine, a.model, a.config, a.test, test_env, script))
    if len(base) != len(sizes) or len(test) != len(sizes):
        sys.exit(f"precision_fidelity.py: asked {len(sizes)} positions, got {len(base)} and {len(test)}")
    named = lambda precision, env: " ".join([precision] + [f"{k}={v}" for k, v in env.items()])
    print(f"{named(a.test, test_env)} against {named(a.baseline, base_env)}, "
          f"{os.path.basename(a.model)}, {len(games)} games, every {a.every} moves")
    print("| board | positions | policy KL mean / p99 / max | same top move | "
          "win prob. diff mean / max | lead diff mean / max |")
    print("| --- | --- | --- | --- | --- | --- |")
    for size in sorted(set(sizes)):
        rows = [(b, t) for b, t, s in zip(base, test, sizes) if s == size]
        kls = [kl(b["policy"], t["policy"]) for b, t in rows]
        top = sum(same_top_move(b["policy"], t["policy"]) for b, t in rows)
        win = [abs(b["whiteWin"] - t["whiteWin"]) for b, t in rows]
        lead = [abs(b["whiteLead"] - t["whiteLead"]) for b, t in rows]
        print(f"| {size}x{size} | {len(rows)} | {sum(kls) / len(kls):.4f} / {percentile(kls, 0.99):.4f} / "
              f"{max(kls):.4f} | {100 * top / len(rows):.1f}% | {sum(win) / len(win):.4f} / {max(win):.4f} | "
              f"{sum(lead) / len(lead):.2f} / {max(lead):.2f} |")


if __name__ == "__main__":
    main()
