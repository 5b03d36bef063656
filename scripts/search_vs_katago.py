#!/usr/bin/env python3
"""Deterministic search comparison with KataGo 1.17.2's analysis engine.

Both engines analyse the same positions with nnRandomize=false (every
evaluation in symmetry 0), one search thread and no root noise, so with the
same net their searches should visit the same moves the same number of times
and report the same values; any difference is a difference of search
algorithm (or a float near-tie in the net). Prints, per position, whether
the moveInfos (the same moves with the same visits; winrate, scoreLead and
utility within float rounding, see TOLERANCE) and rootInfo agree, and the
first difference.

  scripts/search_vs_katago.py --katago KATAGO --katago-config analysis_example.cfg \\
      --model NET --sgf GAME.sgf [--turns 20,40,60] [--visits 100] [--graph true]
      [--engine target/release/engine] [--setting key=value ...]
"""
import argparse, json, subprocess, sys

from sgf_moves import sgf_moves


def analyse(cmd, queries):
    out = subprocess.run(cmd, shell=True, input="\n".join(json.dumps(q) for q in queries) + "\n",
                         capture_output=True, text=True, timeout=3600).stdout
    answers = {}
    for line in out.splitlines():
        d = json.loads(line)
        if "moveInfos" in d:
            answers[d["id"]] = d
    return answers


def summary(d):
    """(root visits, root values), {move: (visits, values)}; values are
    winrate, scoreLead, utility."""
    r = d["rootInfo"]
    root = (r["visits"], (r["winrate"], r["scoreLead"], r["utility"]))
    moves = {m["move"]: (m["visits"], (m["winrate"], m["scoreLead"], m["utility"])) for m in d["moveInfos"]}
    return root, moves


# How far values may differ: the nets' outputs differ by float rounding
# (about 1e-6 in winrate, 1e-4 in points), which averaging keeps small.
TOLERANCE = (2e-5, 5e-4, 5e-5)


def compare(k, e):
    """None when the searches agree, else the first difference."""
    (kv, kvals), kmoves = k
    (ev, evals), emoves = e
    if kv != ev:
        return f"root visits {kv} vs {ev}"
    if sorted(kmoves) != sorted(emoves):
        return f"moves {sorted(kmoves)} vs {sorted(emoves)}"
    items = [("root", kvals, evals)] + [(m, kmoves[m][1], emoves[m][1]) for m in sorted(kmoves)]
    for m in sorted(kmoves):
        if kmoves[m][0] != emoves[m][0]:
            return f"{m}: visits {kmoves[m][0]} vs {emoves[m][0]}"
    for name, a, b in items:
        for x, y, tol in zip(a, b, TOLERANCE):
            if abs(x - y) > tol:
                return f"{name}: values {a} vs {b}"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--katago", required=True)
    ap.add_argument("--katago-config", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--sgf", required=True)
    ap.add_argument("--engine", default="target/release/engine")
    ap.add_argument("--engine-config", default="configs/analysis.toml")
    ap.add_argument("--turns", default="20,40,60,80,100")
    ap.add_argument("--visits", type=int, default=100)
    ap.add_argument("--graph", default="true")
    ap.add_argument("--setting", action="append", default=[], help="an overrideSettings key=value for both")
    a = ap.parse_args()
    size, komi, moves = sgf_moves(a.sgf)
    over = {"wideRootNoise": 0.0}
    for kv in a.setting:
        k, v = kv.split("=", 1)
        over[k] = json.loads(v)
    queries = [{"id": f"t{t}", "moves": moves[:t], "rules": "tromp-taylor", "komi": komi,
                "boardXSize": size, "boardYSize": size, "maxVisits": a.visits, "overrideSettings": over}
               for t in map(int, a.turns.split(",")) if t <= len(moves)]
    cfg = f"numSearchThreadsPerAnalysisThread=1,numAnalysisThreads=1,nnRandomize=false,useGraphSearch={a.graph}"
    kg = analyse(f"{a.katago} analysis -model {a.model} -config {a.katago_config} -override-config {cfg},logDir=", queries)
    en = analyse(f"{a.engine} analysis -model {a.model} -config {a.engine_config} -override-config {cfg}", queries)
    same = 0
    for q in queries:
        i = q["id"]
        if i not in kg or i not in en:
            print(f"{i}: no answer from {'KataGo' if i not in kg else 'engine'}")
            continue
        k, e = summary(kg[i]), summary(en[i])
        diff = compare(k, e)
        if diff is None:
            same += 1
            print(f"{i}: same ({k[0][0]} visits, {len(k[1])} moves)")
        else:
            print(f"{i}: DIFFERENT: {diff}")
    print(f"{same}/{len(queries)} positions the same")
    return 0 if same == len(queries) else 1


if __name__ == "__main__":
    sys.exit(main())
