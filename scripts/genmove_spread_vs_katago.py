#!/usr/bin/env python3
"""Genmove's random play compared with KataGo 1.17.2's, position by position.

The deterministic checks (search_vs_katago.py, reuse_vs_katago.py,
genmove_vs_katago.py) set nnRandomize=false and no move temperature, so
that both engines see the same numbers. Real play has two sources of
randomness they leave out: a random symmetry per network evaluation and
the opening's random move choice (chosenMoveTemperatureEarly). This script
asks both engines `genmove` many times in the same positions with their
play settings (random symmetries, temperatures as configured; the search
tree and the NN cache cleared before every sample) and tests whether the
two engines' moves come from the same distribution: per position a
chi-square statistic of the two samples' move counts, its p-value by
permutation (pooling both samples and dealing them out again), and the
same over all positions together.

  scripts/genmove_spread_vs_katago.py --katago KATAGO --katago-config gtp_example.cfg \\
      --model NET --sgf GAME.sgf [--sgf ...] [--turns 0,1,2,5,10,20,30,50] \\
      [--samples 40] [--visits 100] [--engine target/release/engine] [--setting key=value,...]

Exits 1 when the pooled p-value is below 0.01.
"""
import argparse, os, random, sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from genmove_vs_katago import Gtp  # noqa: E402
from sgf_moves import sgf_moves  # noqa: E402


def chi_square(a, b):
    """Chi-square homogeneity statistic of two lists of moves."""
    ca, cb = Counter(a), Counter(b)
    na, nb = len(a), len(b)
    stat = 0.0
    for m in set(ca) | set(cb):
        tot = ca[m] + cb[m]
        for c, n in ((ca[m], na), (cb[m], nb)):
            exp = tot * n / (na + nb)
            stat += (c - exp) ** 2 / exp
    return stat


def permutation_p(pairs, rounds, rng):
    """p-value of the summed chi-square of the (a, b) sample pairs when each
    pair's moves are dealt out again at random."""
    observed = sum(chi_square(a, b) for a, b in pairs)
    at_least = 0
    for _ in range(rounds):
        total = 0.0
        for a, b in pairs:
            pool = a + b
            rng.shuffle(pool)
            total += chi_square(pool[:len(a)], pool[len(a):])
        at_least += total >= observed - 1e-9
    return observed, (at_least + 1) / (rounds + 1)


def sample(gtp, size, komi, moves, n):
    """n genmoves for the side to move after `moves`, each from scratch."""
    out = []
    pla = "w" if moves and moves[-1][0] == "B" else "b"
    for _ in range(n):
        gtp.ask("clear_board")
        gtp.ask(f"komi {komi}")
        for color, vertex in moves:
            gtp.ask(f"play {color} {vertex}")
        gtp.ask("clear_cache")
        out.append(gtp.ask(f"genmove {pla}").upper())
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--katago", required=True)
    ap.add_argument("--katago-config", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--engine", default="target/release/engine")
    ap.add_argument("--engine-config", default="configs/gtp.toml")
    ap.add_argument("--sgf", action="append", required=True)
    ap.add_argument("--turns", default="0,1,2,5,10,20,30,50")
    ap.add_argument("--samples", type=int, default=40)
    ap.add_argument("--visits", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=2000, help="permutation rounds")
    ap.add_argument("--setting", default="", help="more -override-config settings for both")
    a = ap.parse_args()
    settings = f"maxVisits={a.visits},numSearchThreads=1,ponderingEnabled=false,allowResignation=false" + (
        f",{a.setting}" if a.setting else "")
    rng = random.Random(12345)
    pairs = []
    turns = [int(t) for t in a.turns.split(",")]
    for path in a.sgf:
        size, komi, moves = sgf_moves(path)
        kg = Gtp(f"{a.katago} gtp -model {a.model} -config {a.katago_config} "
                 f"-override-config {settings},logDir=,logFile=/dev/null")
        en = Gtp(f"{a.engine} gtp -model {a.model} -config {a.engine_config} -override-config {settings}")
        for g in (kg, en):
            g.ask(f"boardsize {size}")
        for turn in turns:
            if turn > len(moves):
                continue
            k = sample(kg, size, komi, moves[:turn], a.samples)
            e = sample(en, size, komi, moves[:turn], a.samples)
            stat, p = permutation_p([(k, e)], a.rounds, rng)
            top = lambda xs: " ".join(f"{m}:{c}" for m, c in Counter(xs).most_common(5))
            print(f"{os.path.basename(path)} turn {turn}: chi2 {stat:.1f} p {p:.3f}\n"
                  f"  KataGo {top(k)}\n  engine {top(e)}", flush=True)
            pairs.append((k, e))
        kg.close()
        en.close()
    stat, p = permutation_p(pairs, a.rounds, rng)
    print(f"all {len(pairs)} positions, {a.samples} samples each: chi2 {stat:.1f}, permutation p {p:.4f} ({settings})")
    return 1 if p < 0.01 else 0


if __name__ == "__main__":
    sys.exit(main())
