#!/usr/bin/env python3
"""Life-and-death benchmark: the share of problems whose first move is
correct, with the analysis protocol's tsumego mode on and off, and KataGo's
analysis engine on the same problems (same net, visits and threads).

Each problem of the set (scripts/tsumego_dev_set.json by default, built by
scripts/make_tsumego_dev_set.py) is sent to `engine analysis` as a query:

- mode "on":  the query carries `"tsumego": {"region": "auto", "goal":
  "auto"}` (the frame, the restriction to the problem, the judge);
- mode "off": the plain query, the whole board open: what a user gets from
  KataGo-style analysis of the position as given;
- mode "katago-bare": the same plain query sent to KataGo's own analysis
  engine (`katago analysis -model NET -config CFG`, `-katago BIN`);
- mode "katago-allow": that KataGo query plus `allowMoves` for the side to
  move (`untilDepth` 1, KataGo's usual use) over the points the engine's
  tsumego mode lets its search play (the response's `tsumego.playable`:
  the region and the outside liberties of its stones) plus pass. The
  points come from the engine itself: one tsumego query per problem at 1
  visit before the runs (the region does not depend on visits).
- mode "katago-allow-both": as katago-allow, but `allowMoves` for both
  players down to depth 1000, the nearest KataGo gets to the engine's
  restriction at every depth (KataGo 1.17.2 takes one entry per player).

KataGo's config is written by this script into a temporary folder:
`numAnalysisThreads` = -threads, `numSearchThreadsPerAnalysisThread` = 1
(as the engine's run), `maxVisits` = the visits of the run (and the same
`maxVisits` in each query), `logFile` in that folder, `logToStderr` false;
every other key (NN cache, batch size, Eigen threads, noise, time limits:
none) is KataGo's default. Both programs get the same rules (chinese),
komi (7.5), board and side to move.

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
      [-katago BIN]  (needed by the katago-* modes)
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

HELD_OUT = "cho chikun"
ENGINE_MODES = ("on", "off")
KATAGO_MODES = ("katago-bare", "katago-allow", "katago-allow-both")


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


def query(p, visits, mode, i, playable=None):
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
    if mode in ("katago-allow", "katago-allow-both"):
        occupied = set(p["black"]) | set(p["white"])
        points = [m for m in playable[i] if m not in occupied] + ["pass"]
        if mode == "katago-allow":
            q["allowMoves"] = [{"player": p["toPlay"], "moves": points, "untilDepth": 1}]
        else:
            q["allowMoves"] = [
                {"player": pla, "moves": points, "untilDepth": 1000} for pla in ("B", "W")
            ]
    return q


def read_answers(out):
    answers = {}
    for line in out.splitlines():
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(r, dict) and "id" in r and not r.get("isDuringSearch"):
            # KataGo may send a warning for an id before its answer: keep
            # the answer (or the error), not the warning.
            if "warning" in r and "moveInfos" not in r and r["id"] in answers:
                continue
            answers[r["id"]] = r
    return answers


def engine_playable(args, problems):
    """The points the engine's tsumego mode lets its search play, per
    problem (None where the engine refused the problem): one 1-visit
    tsumego query each."""
    cmd = [
        args.engine, "analysis", "-model", args.model, "-config", args.config,
        "-override-config", "numSearchThreadsPerAnalysisThread=1,maxVisits=1",
        "-analysis-threads", str(args.threads),
    ]
    queries = [dict(query(p, 1, "on", i), id=f"region-{i}") for i, p in enumerate(problems)]
    out = subprocess.run(
        cmd, input="".join(json.dumps(q) + "\n" for q in queries),
        capture_output=True, text=True, check=False,
    ).stdout
    answers = read_answers(out)
    playable = []
    for i in range(len(problems)):
        t = answers.get(f"region-{i}", {}).get("tsumego", {})
        if "tsumego" in answers.get(f"region-{i}", {}) and "playable" not in t:
            sys.exit("tsumego_bench: the engine's tsumego answer has no `playable` field "
                     "(an engine older than this script?)")
        playable.append(t.get("playable"))
    return playable


def run_katago(args, problems, visits, modes, playable):
    with tempfile.TemporaryDirectory(prefix="tsumego_bench_katago_") as tmp:
        cfg = os.path.join(tmp, "analysis.cfg")
        with open(cfg, "w") as fh:
            fh.write(
                f"logFile = {os.path.join(tmp, 'katago.log')}\n"
                "logToStderr = false\n"
                f"numAnalysisThreads = {args.threads}\n"
                "numSearchThreadsPerAnalysisThread = 1\n"
                f"maxVisits = {visits}\n"
            )
        queries = [
            query(p, visits, m, i, playable)
            for m in modes for i, p in enumerate(problems)
            # A problem the engine's tsumego mode refused has no region to
            # allow: it is not sent (and counts as an error).
            if m == "katago-bare" or playable[i] is not None
        ]
        cmd = [args.katago, "analysis", "-model", args.model, "-config", cfg]
        start = time.time()
        proc = subprocess.run(
            cmd, input="".join(json.dumps(q) + "\n" for q in queries),
            capture_output=True, text=True, check=False,
        )
        secs = time.time() - start
        if proc.returncode != 0:
            sys.exit(f"tsumego_bench: katago exited with {proc.returncode}: {proc.stderr[-2000:]}")
    return read_answers(proc.stdout), secs


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
    return read_answers(out), secs


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
    ap.add_argument("-katago", help="KataGo's binary (for the katago-* modes)")
    args = ap.parse_args()
    with open(args.set) as fh:
        doc = json.load(fh)
    refuse_held_out(doc)
    problems = pick(doc["problems"], args.per_collection)
    modes = [m for m in args.modes.split(",") if m]
    if not problems or any(m not in ENGINE_MODES + KATAGO_MODES for m in modes):
        sys.exit("tsumego_bench: no problems, or a mode other than "
                 + "/".join(ENGINE_MODES + KATAGO_MODES))
    emodes = [m for m in modes if m in ENGINE_MODES]
    kmodes = [m for m in modes if m in KATAGO_MODES]
    if kmodes and not args.katago:
        sys.exit("tsumego_bench: the katago-* modes need -katago BIN")
    playable = None
    if any(m != "katago-bare" for m in kmodes):
        playable = engine_playable(args, problems)
        refused = sum(x is None for x in playable)
        print(f"engine regions: {len(problems) - refused} problems, {refused} refused")
    collections = sorted({p["id"].split("/")[0] for p in problems})
    print(f"set {args.set}: {len(problems)} problems from {', '.join(collections)}")
    print(f"net {os.path.basename(args.model)}, cpu {cpu_name()}")
    print()
    print("| visits | mode | first move correct | judge's winning move correct | errors | seconds |")
    print("| --- | --- | --- | --- | --- | --- |")
    results = []
    for v in [int(x) for x in args.visits.split(",") if x]:
        for group, run in ((emodes, run_engine), (kmodes, run_katago)):
            if not group:
                continue
            if run is run_katago:
                answers, secs = run_katago(args, problems, v, group, playable)
            else:
                answers, secs = run_engine(args, problems, v, group)
            for m in group:
                s = score(problems, answers, v, m)
                n = len(problems)
                judge = (f"{s['judgeSolved']}/{n} ({100 * s['judgeSolved'] / n:.1f}%)"
                         if m == "on" else "-")
                print(f"| {v} | {m} | {s['solved']}/{n} ({100 * s['solved'] / n:.1f}%) | {judge} "
                      f"| {s['errors']} | {secs:.0f} ({'+'.join(group)}) |", flush=True)
                results.append({"visits": v, "mode": m, "seconds": secs, **s})
            # Written after every run, so a long benchmark stopped part way
            # keeps the answers of the runs that finished.
            if args.json:
                write_json(args, problems, playable, results)


def write_json(args, problems, playable, results):
    tmp = args.json + ".tmp"
    with open(tmp, "w") as fh:
        json.dump({"set": args.set, "model": args.model, "cpu": cpu_name(),
                   "problems": len(problems), "playable": playable,
                   "results": results}, fh, indent=1)
    os.replace(tmp, args.json)


if __name__ == "__main__":
    main()
