#!/usr/bin/env python3
"""Life-and-death benchmark: the share of problems whose first move is
correct, with the analysis protocol's tsumego mode on and off.

Each problem of the set (scripts/tsumego_dev_set.json by default, built by
scripts/make_tsumego_dev_set.py) is sent to `engine analysis` as a query:

- mode "on":  the query carries `"tsumego": {"region": "auto", "goal":
  "auto"}` (the frame, the restriction to the problem, the judge);
- mode "off": the plain query, the whole board open: what a user gets from
  KataGo-style analysis of the position as given.

A problem counts as solved when the search's top move (`order` 0) is one of
the set's correct first moves. For mode "on" the share whose judge's first
winning move (`tsumego.winningMoves[0]`) is correct is reported too. A
query answered with an error counts as not solved.

The three "Cho Chikun Encyclopedia Life And Death" collections are the
held-out acceptance set: this script refuses a set that names them (in a
problem's id, file or collection), so that nobody tunes on them by accident.

Usage:
  scripts/tsumego_bench.py -model NET [-engine target/release/engine]
      [-set scripts/tsumego_dev_set.json] [-visits 200,800] [-modes on,off]
      [-per-collection N] [-threads 2] [-json OUT.json]
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time

HELD_OUT = "cho chikun"


def refuse_held_out(doc):
    names = [c.get("name", "") + " " + c.get("folder", "") for c in doc.get("collections", [])]
    names += [p.get("id", "") + " " + p.get("file", "") for p in doc["problems"]]
    for n in names:
        if HELD_OUT in n.lower():
            sys.exit(
                f"tsumego_bench: refusing a set with {n.strip()!r}: the Cho Chikun "
                "collections are the held-out acceptance set"
            )


def pick(problems, per_collection):
    if not per_collection:
        return problems
    seen, out = {}, []
    for p in problems:
        c = p["id"].split("/")[0]
        if seen.get(c, 0) < per_collection:
            seen[c] = seen.get(c, 0) + 1
            out.append(p)
    return out


def query(p, visits, mode, i):
    q = {
        "id": f"{mode}-{visits}-{i}",
        "boardXSize": p["size"],
        "boardYSize": p["size"],
        "rules": "chinese",
        "komi": 7.5,
        "initialStones": [["B", s] for s in p["black"]] + [["W", s] for s in p["white"]],
        "initialPlayer": p["toPlay"],
        "moves": [],
        "maxVisits": visits,
    }
    if mode == "on":
        q["tsumego"] = {"region": "auto", "goal": "auto"}
    return q


def run_engine(args, problems, visits, modes):
    cmd = [
        args.engine, "analysis", "-model", args.model,
        "-config", args.config,
        "-override-config", f"numSearchThreadsPerAnalysisThread=1,maxVisits={visits}",
        "-analysis-threads", str(args.threads),
    ]
    queries = [query(p, visits, m, i) for m in modes for i, p in enumerate(problems)]
    proc = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    start = time.time()
    out, _ = proc.communicate("".join(json.dumps(q) + "\n" for q in queries))
    secs = time.time() - start
    answers = {}
    for line in out.splitlines():
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "id" in r and not r.get("isDuringSearch"):
            answers[r["id"]] = r
    return answers, secs


def score(problems, answers, visits, mode):
    solved = judged = errors = 0
    rows = []
    for i, p in enumerate(problems):
        r = answers.get(f"{mode}-{visits}-{i}")
        top, win = None, None
        if r is None or "error" in r:
            errors += 1
        else:
            infos = sorted(r.get("moveInfos", []), key=lambda m: m.get("order", 0))
            top = infos[0]["move"] if infos else None
            win = (r.get("tsumego", {}).get("winningMoves") or [None])[0]
        ok = top in p["correct"]
        solved += ok
        judged += win in p["correct"]
        rows.append({"id": p["id"], "top": top, "winning": win, "correct": p["correct"], "ok": ok})
    return {"solved": solved, "judgeSolved": judged, "errors": errors, "rows": rows}


def cpu_name():
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-engine", default="target/release/engine")
    ap.add_argument("-model", required=True)
    ap.add_argument("-config", default="configs/analysis.toml")
    ap.add_argument("-set", default="scripts/tsumego_dev_set.json")
    ap.add_argument("-visits", default="200,800", help="comma list, e.g. 200,800,3200")
    ap.add_argument("-modes", default="on,off")
    ap.add_argument("-per-collection", type=int, default=0,
                    help="only the first N problems of each collection (0: all)")
    ap.add_argument("-threads", type=int, default=2, help="queries searched at once")
    ap.add_argument("-json", help="write every answer and the table here")
    args = ap.parse_args()
    with open(args.set) as fh:
        doc = json.load(fh)
    refuse_held_out(doc)
    problems = pick(doc["problems"], args.per_collection)
    modes = [m for m in args.modes.split(",") if m]
    if not problems or any(m not in ("on", "off") for m in modes):
        sys.exit("tsumego_bench: no problems, or a mode other than on/off")
    collections = sorted({p["id"].split("/")[0] for p in problems})
    print(f"set {args.set}: {len(problems)} problems from {', '.join(collections)}")
    print(f"net {os.path.basename(args.model)}, cpu {cpu_name()}")
    print()
    print("| visits | mode | first move correct | judge's winning move correct | errors | seconds |")
    print("| --- | --- | --- | --- | --- | --- |")
    results = []
    for v in [int(x) for x in args.visits.split(",") if x]:
        answers, secs = run_engine(args, problems, v, modes)
        for m in modes:
            s = score(problems, answers, v, m)
            n = len(problems)
            judge = f"{s['judgeSolved']}/{n} ({100 * s['judgeSolved'] / n:.1f}%)" if m == "on" else "-"
            print(f"| {v} | {m} | {s['solved']}/{n} ({100 * s['solved'] / n:.1f}%) | {judge} "
                  f"| {s['errors']} | {secs:.0f} (both modes) |", flush=True)
            results.append({"visits": v, "mode": m, **s})
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"set": args.set, "model": args.model, "cpu": cpu_name(),
                       "problems": len(problems), "results": results}, fh, indent=1)


if __name__ == "__main__":
    main()
