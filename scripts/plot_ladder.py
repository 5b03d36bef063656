#!/usr/bin/env python3
"""Draws the strength ladder (scripts/ladder.sh) of the project's nets.

    plot_ladder.py MODELS_DIR

Reads MODELS_DIR/ladder.tsv (one row per net and rung) and the first run's
per-generation measurements (MODELS_DIR/training-run/strength.tsv, with
generations.tsv for each generation's training time), and writes:

- MODELS_DIR/ladder.svg: Elo against each opponent by training hours, one
  line per opponent, size and visits; changes to the learning recipe
  listed in MODELS_DIR/ladder-changes.tsv (`hours<TAB>label`, optional)
  are drawn as labelled vertical lines;
- MODELS_DIR/ladder.md: the ladder as a table.

Stdlib only.
"""
import csv
import os
import sys
from collections import defaultdict


def read_tsv(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f, delimiter="\t"))


def generation_hours(gens):
    """Generation number -> training hours up to its end (generation 0,
    the random net, at 0)."""
    hours, total = {0: 0.0}, 0.0
    for r in gens:
        total += float(r["seconds"])
        hours[int(r["generation"])] = total / 3600.0
    return hours


def main():
    models = sys.argv[1]
    ladder = read_tsv(os.path.join(models, "ladder.tsv"))
    run = os.path.join(models, "training-run")
    hours_of = generation_hours(read_tsv(os.path.join(run, "generations.tsv")))
    series = defaultdict(list)
    # A measurement the ladder holds too is drawn once, as the ladder's.
    in_ladder = {(r["model"], r["opponent"], r["visits"]) for r in ladder}
    for r in read_tsv(os.path.join(run, "strength.tsv")):
        g = int(r["generation"])
        if g not in hours_of or (r["model"], r["opponent"], r["visits"]) in in_ladder:
            continue
        opp = r["opponent"]
        name = ("round robin of generations (64 visits, generation 0 = 0)" if opp.startswith("round-robin")
                else f"9x9 vs {opp} ({r['visits']} visits, {r['games']} games)")
        series[name].append((hours_of[g], float(r["elo_vs_opponent"])))
    for r in ladder:
        if not r["hours"]:
            continue
        name = f"{r['size']}x{r['size']} vs {r['opponent']} ({r['visits']} visits)"
        series[name].append((float(r["hours"]), float(r["elo_vs_opponent"])))
    changes = [(float(r["hours"]), r["label"]) for r in read_tsv(os.path.join(models, "ladder-changes.tsv"))]
    write_svg(os.path.join(models, "ladder.svg"), series, changes)
    write_table(os.path.join(models, "ladder.md"), ladder)


def write_svg(path, series, changes):
    W, H, L, R, T, B = 820, 460, 60, 20, 40, 50
    legend_h = 16 * len(series)
    xs = [x for s in series.values() for x, _ in s] + [0.0]
    ys = [y for s in series.values() for _, y in s] + [0.0]
    x0, x1 = 0.0, max(max(xs) * 1.05, 1.0)
    y0, y1 = min(ys) - 50, max(ys) + 50
    sx = lambda x: L + (x - x0) / (x1 - x0) * (W - L - R)
    sy = lambda y: H - B - (y - y0) / (y1 - y0) * (H - T - B)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H + legend_h}" '
           'font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H + legend_h}" fill="white"/>',
           f'<text x="{W / 2}" y="20" text-anchor="middle" font-size="14">'
           'Elo against each opponent by training time</text>',
           f'<line x1="{L}" y1="{sy(0)}" x2="{W - R}" y2="{sy(0)}" stroke="#999" stroke-dasharray="4"/>',
           f'<line x1="{L}" y1="{T}" x2="{L}" y2="{H - B}" stroke="black"/>',
           f'<line x1="{L}" y1="{H - B}" x2="{W - R}" y2="{H - B}" stroke="black"/>',
           f'<text x="{W / 2}" y="{H - 12}" text-anchor="middle">'
           'training hours (self-play + training, 2-core CPU, wall clock)</text>']
    for k in range(5):
        y = y0 + (y1 - y0) * k / 4
        out.append(f'<text x="{L - 6}" y="{sy(y) + 4}" text-anchor="end">{y:.0f}</text>')
        x = x0 + (x1 - x0) * k / 4
        out.append(f'<text x="{sx(x)}" y="{H - B + 16}" text-anchor="middle">{x:.1f}</text>')
    for hours, label in changes:
        out.append(f'<line x1="{sx(hours)}" y1="{T}" x2="{sx(hours)}" y2="{H - B}" stroke="#888"/>')
        out.append(f'<text x="{sx(hours) + 3}" y="{T + 12}" fill="#555">{label}</text>')
    colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2"]
    for i, (name, pts) in enumerate(sorted(series.items())):
        c = colours[i % len(colours)]
        pts.sort()
        if len(pts) > 1:
            points = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts)
            out.append(f'<polyline points="{points}" fill="none" stroke="{c}" stroke-width="2"/>')
        for x, y in pts:
            out.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="{c}"/>')
        ly = H + 16 * i
        out.append(f'<rect x="{L}" y="{ly - 9}" width="10" height="10" fill="{c}"/>')
        out.append(f'<text x="{L + 16}" y="{ly}">{name}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def write_table(path, ladder):
    lines = ["# Strength ladder", "",
             "Written by `scripts/plot_ladder.py` from `ladder.tsv` (rows appended by `scripts/ladder.sh`;",
             "do not edit by hand). Elo is against that opponent, from the score with half a game added",
             "to each side; colours alternate, Chinese rules, GNU Go scores finished games.", "",
             "| net | training hours | board | opponent | visits | games | score | win rate | Elo | date | machine |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in ladder:
        lines.append(f"| {r['model']} | {r['hours'] or '?'} | {r['size']}x{r['size']} | {r['opponent']} | "
                     f"{r['visits']} | {r['games']} | {r['score']} | {float(r['win_rate']):.1%} | "
                     f"{r['elo_vs_opponent']} | {r['date']} | {r['machine']} |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
