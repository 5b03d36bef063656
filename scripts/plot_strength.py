#!/usr/bin/env python3
"""Draws strength.tsv (scripts/loop_eval.sh) as an SVG line chart: Elo
against each opponent per generation. Stdlib only.

    plot_strength.py strength.tsv strength.svg
"""
import csv
import os
import sys
from collections import defaultdict

rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
series = defaultdict(list)
for r in rows:
    series[f"vs {r['opponent']} ({r['visits']} visits)"].append(
        (int(r["generation"]), float(r["elo_vs_opponent"]))
    )
W, H, L, R, T, B = 720, 420, 60, 20, 40, 50
xs = [x for s in series.values() for x, _ in s] or [0, 1]
ys = [y for s in series.values() for _, y in s] or [0, 1]
x0, x1 = min(xs), max(max(xs), min(xs) + 1)
y0, y1 = min(min(ys), 0) - 50, max(max(ys), 0) + 50
sx = lambda x: L + (x - x0) / (x1 - x0) * (W - L - R)
sy = lambda y: H - B - (y - y0) / (y1 - y0) * (H - T - B)
out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
       f'<rect width="{W}" height="{H}" fill="white"/>',
       f'<text x="{W/2}" y="20" text-anchor="middle" font-size="14">Strength per generation (Elo difference to the opponent)</text>',
       f'<line x1="{L}" y1="{sy(0)}" x2="{W-R}" y2="{sy(0)}" stroke="#999" stroke-dasharray="4"/>',
       f'<line x1="{L}" y1="{T}" x2="{L}" y2="{H-B}" stroke="black"/>',
       f'<line x1="{L}" y1="{H-B}" x2="{W-R}" y2="{H-B}" stroke="black"/>',
       f'<text x="{W/2}" y="{H-12}" text-anchor="middle">generation</text>']
for k in range(5):
    y = y0 + (y1 - y0) * k / 4
    out.append(f'<text x="{L-6}" y="{sy(y)+4}" text-anchor="end">{y:.0f}</text>')
for k in range(min(int(x1 - x0), 10) + 1):
    x = x0 + (x1 - x0) * k / max(min(int(x1 - x0), 10), 1)
    out.append(f'<text x="{sx(x)}" y="{H-B+16}" text-anchor="middle">{x:.0f}</text>')
colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"]
for i, (name, pts) in enumerate(sorted(series.items())):
    c = colours[i % len(colours)]
    pts.sort()
    path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts)
    out.append(f'<polyline points="{path}" fill="none" stroke="{c}" stroke-width="2"/>')
    out += [f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="{c}"/>' for x, y in pts]
    out.append(f'<text x="{L+10}" y="{T+16*(i+1)}" fill="{c}">{name}</text>')
out.append("</svg>")
# Written to a temporary name and renamed: a reader never sees half a file.
tmp = sys.argv[2] + ".tmp"
with open(tmp, "w") as f:
    f.write("\n".join(out) + "\n")
os.replace(tmp, sys.argv[2])
