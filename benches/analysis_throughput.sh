#!/usr/bin/env bash
# Analysis throughput: every turn (0..199) of the 200-move 19x19 game in
# benches/analysis_game.json at 100 visits per turn, one query with
# analyzeTurns 0..199, g170 b6c96 net, for 1 and 2 analysis threads (one
# search thread each, all sharing one evaluator).
#
# Reports, per run and as medians: positions/s (from sending the query to
# the 200th final response; network loading excluded) and the average NN
# batch size (the evaluator's rows / forward passes, printed by the engine
# at exit).
#
# usage: ./setup.sh benches/analysis_throughput.sh [RUNS] [THREADS...]
#   RUNS     runs per thread count (default 3)
#   THREADS  analysis thread counts (default "1 2")
# env: ENGINE (default target/release/engine), MODEL (default the g170 net
#   under ../shared or $ENGINE_SHARED_DIR), VISITS (default 100),
#   EXTRA_OVERRIDES (appended to -override-config, e.g. nnMaxBatchSize=16),
#   ENGINE_OVERRIDES (the same for the engine's runs only, e.g.
#   nnPrecision=bf16),
#   KATAGO and KATAGO_CONFIG: a KataGo binary and its analysis config (e.g.
#   cpp/configs/analysis_example.cfg); when set, every engine run is
#   followed by a KataGo run of the same query with the same thread
#   overrides (alternated, so both see the same machine), and the medians
#   and their ratio are printed.
set -euo pipefail

cd "$(dirname "$0")/.."
runs=${1:-3}
shift || true
threads=${*:-1 2}
engine=${ENGINE:-target/release/engine}
if [[ -z "${MODEL:-}" ]]; then
  for dir in ../shared "${ENGINE_SHARED_DIR:-}"; do
    if [[ -n "$dir" && -f "$dir/models/g170-b6c96-s175395328-d26788732.bin.gz" ]]; then
      MODEL="$dir/models/g170-b6c96-s175395328-d26788732.bin.gz"
      break
    fi
  done
fi
[[ -n "${MODEL:-}" ]] || { echo "no model: set MODEL or ENGINE_SHARED_DIR" >&2; exit 1; }
[[ -x "$engine" ]] || { echo "build first: ./setup.sh cargo build --release" >&2; exit 1; }

echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'), $(grep -o -w -E 'avx512f|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')$(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
exec python3 - "$engine" "$MODEL" "$runs" "${VISITS:-100}" "${EXTRA_OVERRIDES:-}" \
  "${KATAGO:-}" "${KATAGO_CONFIG:-}" "${ENGINE_OVERRIDES:-}" $threads <<'EOF'
import json, re, statistics, subprocess, sys, threading, time

engine, model, runs, visits, extra, katago, katago_config, engine_extra = sys.argv[1:9]
runs, visits = int(runs), int(visits)
thread_counts = [int(t) for t in sys.argv[9:]]
if katago and not katago_config:
    sys.exit("KATAGO needs KATAGO_CONFIG (its analysis config)")
game = json.load(open("benches/analysis_game.json"))
turns = len(game["moves"])

def run(n, who="engine"):
    overrides = f"numAnalysisThreads={n},numSearchThreadsPerAnalysisThread=1"
    if extra:
        overrides += "," + extra
    if who == "katago":
        cmd = [katago, "analysis", "-model", model, "-config", katago_config,
               "-override-config", overrides + ",logToStderr=false"]
    else:
        if engine_extra:
            overrides += "," + engine_extra
        cmd = [engine, "analysis", "-model", model, "-override-config", overrides]
    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    started = threading.Event()
    err_lines = []
    def read_err():
        for line in proc.stderr:
            err_lines.append(line)
            if "ready to begin handling requests" in line:
                started.set()
        started.set()
    t = threading.Thread(target=read_err)
    t.start()
    started.wait()
    query = dict(game, id="bench", maxVisits=visits, analyzeTurns=list(range(turns)))
    t0 = time.monotonic()
    proc.stdin.write(json.dumps(query) + "\n")
    proc.stdin.close()
    finals = 0
    for line in proc.stdout:
        r = json.loads(line)
        if "error" in r:
            sys.exit(f"engine error: {r}")
        if r.get("id") == "bench" and not r.get("isDuringSearch"):
            finals += 1
            if finals == turns:
                break
    elapsed = time.monotonic() - t0
    proc.wait()
    t.join()
    m = [re.search(r"average batch size ([0-9.]+)", l) for l in err_lines]
    batch = next((float(x.group(1)) for x in m if x), float("nan"))
    if finals != turns:
        sys.exit(f"only {finals}/{turns} responses; stderr:\n{''.join(err_lines)}")
    return turns / elapsed, batch

print(f"{turns} positions x {visits} visits, engine {engine}" + (f", KataGo {katago}" if katago else ""))
for n in thread_counts:
    results, kresults = [], []
    for _ in range(runs):
        pps, batch = run(n)
        results.append((pps, batch))
        print(f"  threads={n}: engine {pps:.2f} positions/s, avg batch {batch:.2f}", flush=True)
        if katago:
            kpps, _ = run(n, "katago")
            kresults.append(kpps)
            print(f"  threads={n}: KataGo {kpps:.2f} positions/s", flush=True)
    median = statistics.median(r[0] for r in results)
    print(f"analysis threads {n}: median {median:.2f} positions/s, "
          f"median avg batch {statistics.median(r[1] for r in results):.2f} ({runs} runs)", flush=True)
    if katago:
        kmedian = statistics.median(kresults)
        print(f"analysis threads {n}: KataGo median {kmedian:.2f} positions/s; "
              f"engine / KataGo {median / kmedian:.2f}", flush=True)
EOF
