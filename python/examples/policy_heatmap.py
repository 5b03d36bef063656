#!/usr/bin/env python3
"""Plots a network's policy for a position as a heatmap.

    python examples/policy_heatmap.py MODEL.bin.gz [GAME.sgf] [-o policy.png]

The position is the end of the SGF's main line, or an empty 19x19 board.
matplotlib is optional: without it the script says so and prints the top
moves instead.
"""

import argparse
import sys

import numpy as np

import engine_go


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", help="a KataGo network (.bin.gz)")
    ap.add_argument("sgf", nargs="?", help="an SGF game (default: an empty 19x19 board)")
    ap.add_argument("-o", "--out", default="policy.png", help="image file to write")
    args = ap.parse_args()

    if args.sgf:
        with open(args.sgf) as f:
            pos = engine_go.Position.from_sgf(f.read())
    else:
        pos = engine_go.Position(19)
    net = engine_go.Net(args.model)
    out = net.evaluate([pos], symmetry="average")
    w, h = pos.size
    policy = out["policy"][0]
    grid = np.where(policy[:-1] < 0, np.nan, policy[:-1]).reshape(h, w)
    win, loss, _ = out["value"][0]
    title = (f"{pos.to_play} to play: win {win:.1%}, lead {out['score_lead'][0]:+.1f}, "
             f"pass {policy[-1]:.1%}")

    order = np.argsort(-np.nan_to_num(policy, nan=-1))[:5]
    gtp = {i: m for i, m in enumerate(_all_points(w, h))}
    print(title)
    for i in order:
        print(f"  {gtp.get(i, 'pass'):>5} {policy[i]:.3f}")

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)", file=sys.stderr)
        return 0
    fig, ax = plt.subplots(figsize=(6, 6 * h / w))
    im = ax.imshow(grid, cmap="viridis")
    b = pos.board
    ys, xs = np.nonzero(b)
    ax.scatter(xs, ys, c=["black" if v > 0 else "white" for v in b[ys, xs]],
               s=120, edgecolors="gray")
    letters = "ABCDEFGHJKLMNOPQRSTUVWXYZ"[:w]
    ax.set_xticks(range(w), list(letters))
    ax.set_yticks(range(h), [str(h - y) for y in range(h)])
    ax.set_title(title, fontsize=9)
    fig.colorbar(im, ax=ax, fraction=0.046)
    fig.savefig(args.out, dpi=120, bbox_inches="tight")
    print(f"wrote {args.out}")
    return 0


def _all_points(w, h):
    letters = "ABCDEFGHJKLMNOPQRSTUVWXYZ"
    for y in range(h):
        for x in range(w):
            yield f"{letters[x]}{h - y}"


if __name__ == "__main__":
    sys.exit(main())
