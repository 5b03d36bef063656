#!/usr/bin/env python3
"""Issue 67's two throughput comparisons of the Python package (engine_go)
against the engine's own command line, on this machine's CPU.

1. ``Net.evaluate`` on batches of 64 distinct 19x19 positions against
   ``engine benchmark -nn -batch 64`` (same net, same number of network
   threads: ``numNNServerThreadsPerModel`` = ``Net(threads=)``).
2. ``Analyzer.analyze_many`` on N queries (one turn each of a 19x19 game
   from shared/vectors/games, ``maxVisits`` 50) against the same queries
   sent to ``engine analysis`` over stdin/stdout from Python (all written
   at once, every response read back), same config and threads.

    python scripts/python_bench.py --engine ENGINE_BINARY [--model M] [--threads 1]
        [--seconds 10] [--queries 200]

The machine may be shared: each side runs ``--rounds`` times (3 by
default), alternating with the other, and the best of each is compared.

Needs engine_go installed (``pip install ./python``) and a light-build
``engine`` binary of the same checkout. Prints the CPU (lscpu), each
measurement and the ratios, and one JSON line at the end.
"""

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import engine_go
import numpy as np

REPO = Path(__file__).resolve().parents[1]


def shared_dir() -> Path:
    env = os.environ.get("ENGINE_SHARED_DIR")
    d = Path(env) if env else REPO.parent / "shared"
    if not d.is_dir():
        sys.exit(f"reference data not found: {d} (set ENGINE_SHARED_DIR)")
    return d


def cpu_name() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown (no lscpu)"
    fields = dict(
        (k.strip(), v.strip()) for k, v in (line.split(":", 1) for line in out.splitlines() if ":" in line)
    )
    return f"{fields.get('Model name', '?')}, {fields.get('CPU(s)', '?')} CPUs"


def random_positions(n: int, seed: int = 1):
    """n distinct 19x19 mid-game positions: random legal games of 20-200 moves."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        pos = engine_go.Position(19, rules="chinese", komi=7.5)
        for _ in range(rng.randrange(20, 200)):
            moves = [m for m in pos.legal_moves() if m != "pass"]
            if not moves:
                break
            pos.play(rng.choice(moves))
        out.append(pos)
    return out


def cli_nn(engine: str, model: str, threads: int, seconds: float) -> float:
    cmd = [engine, "benchmark", "--nn", "--model", model, "--batch", "64",
           "--seconds", str(seconds), "--override-config", f"numNNServerThreadsPerModel={threads}"]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{res.stderr}")
    line = [ln for ln in res.stdout.splitlines() if ln.startswith("{")][-1]
    return json.loads(line)["nn_benchmark"]["results"][0]["evals_per_second"]


def bench_nn(engine: str, model: str, threads: int, seconds: float, rounds: int) -> dict:
    """Alternates the two measurements ``rounds`` times (the machine may be
    shared) and compares the best of each."""
    net = engine_go.Net(model, threads=threads, max_batch=64)
    batches = [random_positions(64, seed=s) for s in range(4)]
    for b in batches:  # warm-up
        net.evaluate(b)
    # The same rows as prebuilt inputs: the evaluator without the encoding.
    feats = [[p.features() for p in b] for b in batches]
    inputs = [(np.stack([f[0] for f in fs]), np.stack([f[1] for f in fs])) for fs in feats]

    def rate(call) -> float:
        count, start = 0, time.perf_counter()
        while count < 3 or time.perf_counter() - start < seconds:
            call(count % len(batches))
            count += 1
        return count * 64 / (time.perf_counter() - start)

    clis, pys, feat = [], [], []
    for _ in range(rounds):
        clis.append(cli_nn(engine, model, threads, seconds))
        pys.append(rate(lambda i: net.evaluate(batches[i])))
        feat.append(rate(lambda i: net.evaluate_features(*inputs[i])))
    cli, py, fe = max(clis), max(pys), max(feat)
    print(f"nn: engine benchmark -nn batch 64: {cli:.1f} evals/s; Net.evaluate(64 positions): "
          f"{py:.1f} evals/s = {py / cli:.1%}; Net.evaluate_features(64 rows): {fe:.1f} evals/s "
          f"= {fe / cli:.1%} (best of {rounds} alternating runs of {seconds:g} s; "
          f"all: cli {[round(x) for x in clis]}, evaluate {[round(x) for x in pys]}, "
          f"evaluate_features {[round(x) for x in feat]}; threads {threads}, {net.device})")
    return {"cli_evals_per_s": cli, "python_evals_per_s": py, "ratio": py / cli,
            "features_evals_per_s": fe, "features_ratio": fe / cli,
            "cli_runs": clis, "python_runs": pys, "features_runs": feat,
            "threads": threads, "device": net.device}


def game_queries(shared: Path, n: int, visits: int):
    sgf = shared / "vectors" / "games" / "game_065_19x19_territory.sgf"
    pos = engine_go.Position.from_sgf(sgf.read_text())
    rules = pos.rules
    komi = rules.pop("komi", 7.5)
    moves = [[c, m] for c, m in pos.moves]
    turns = list(range(len(moves)))
    return [{"id": f"q{i}", "moves": moves, "rules": rules, "komi": komi,
             "boardXSize": 19, "boardYSize": 19, "analyzeTurns": [turns[i % len(turns)]],
             "maxVisits": visits} for i in range(n)]


def cli_analysis(engine: str, model: str, threads: int, queries) -> float:
    n = len(queries)
    proc = subprocess.Popen(
        [engine, "analysis", "--model", model, "--analysis-threads", str(threads),
         "--override-config", "logErrorsAndWarnings=false"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    # Ready: the first answer to a version query.
    proc.stdin.write(json.dumps({"id": "v", "action": "query_version"}) + "\n")
    proc.stdin.flush()
    proc.stdout.readline()
    start = time.perf_counter()
    for q in queries:
        proc.stdin.write(json.dumps(q) + "\n")
    proc.stdin.flush()
    got = 0
    while got < n:
        r = json.loads(proc.stdout.readline())
        if "error" in r:
            sys.exit(f"engine analysis: {r}")
        if not r.get("isDuringSearch") and "warning" not in r:
            got += 1
    seconds = time.perf_counter() - start
    proc.stdin.close()
    proc.wait()
    return seconds


def python_analysis(model: str, threads: int, queries) -> float:
    a = engine_go.Analyzer(model, config={"logErrorsAndWarnings": False}, threads=threads)
    a.analyze({"id": "v", "action": "query_version"})
    start = time.perf_counter()
    got = sum(1 for r in a.analyze_many(queries) if not r.get("isDuringSearch"))
    seconds = time.perf_counter() - start
    a.close()
    assert got == len(queries)
    return seconds


def bench_analysis(engine: str, model: str, threads: int, queries, rounds: int) -> dict:
    """Alternates the two (a fresh engine each time, so no cache is
    shared) and compares the best of each."""
    n = len(queries)
    clis, pys = [], []
    for _ in range(rounds):
        clis.append(cli_analysis(engine, model, threads, queries))
        pys.append(python_analysis(model, threads, queries))
    cli_s, py_s = min(clis), min(pys)
    print(f"analysis: {n} queries x {queries[0]['maxVisits']} visits, {threads} analysis threads: "
          f"engine analysis over pipes {n / cli_s:.2f} queries/s ({cli_s:.1f} s), "
          f"Analyzer.analyze_many {n / py_s:.2f} queries/s ({py_s:.1f} s) = {cli_s / py_s:.1%} "
          f"(best of {rounds} alternating runs; all seconds: cli {[round(x, 1) for x in clis]}, "
          f"python {[round(x, 1) for x in pys]})")
    return {"queries": n, "cli_seconds": cli_s, "python_seconds": py_s, "ratio": cli_s / py_s,
            "cli_runs": clis, "python_runs": pys, "analysis_threads": threads}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", required=True, help="the light-build engine binary")
    ap.add_argument("--model", help="network (default: shared/models/g170 b6c96)")
    ap.add_argument("--threads", type=int, default=1, help="network threads for the nn comparison")
    ap.add_argument("--analysis-threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--visits", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=3,
                    help="alternating runs of each side; the best of each is compared")
    ap.add_argument("--skip-nn", action="store_true")
    ap.add_argument("--skip-analysis", action="store_true")
    args = ap.parse_args()
    shared = shared_dir()
    model = args.model or str(shared / "models" / "g170-b6c96-s175395328-d26788732.bin.gz")
    cpu = cpu_name()
    print(f"CPU: {cpu}; model {Path(model).name}; engine_go {engine_go.__version__}")
    result = {"cpu": cpu, "model": Path(model).name}
    if not args.skip_nn:
        result["nn"] = bench_nn(args.engine, model, args.threads, args.seconds, args.rounds)
    if not args.skip_analysis:
        queries = game_queries(shared, args.queries, args.visits)
        result["analysis"] = bench_analysis(args.engine, model, args.analysis_threads, queries,
                                            args.rounds)
    print(json.dumps({"python_bench": result}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
