#!/usr/bin/env python3
"""serve_bench.py - positions/s of `engine serve` against `engine analysis`.

The same queries (seeded 9x9 positions, --visits each) are analysed two
ways, each in a fresh process after one warm-up query:

  stdin: all queries written at once to `engine analysis` on stdin, timed
         until the last final response;
  http:  --clients concurrent HTTP clients POSTing them one at a time to
         `engine serve` (/v1/analyze), timed until the last reply ends.

Both use the same net, config, visits and numAnalysisThreads. The runs
alternate (stdin, http, stdin, http, ...) --rounds times and the medians are
printed, with http/stdin as the last line:

  stdin 123.4 pos/s (median of 3), http 120.1 pos/s (median of 3), ratio 0.97

With --fairness instead: one `engine serve` with two keys; the median
latency of key B's 1-visit queries (sequential) on the idle server, then
while key A keeps --flood queries of --flood-visits in flight:

  idle 0.004 s, under A's flood 0.120 s (30.0x), A answered 37 queries meanwhile

Only the Python standard library is used.
"""

import argparse
import hashlib
import http.client
import os
import tempfile
import json
import random
import statistics
import subprocess
import sys
import threading
import time


def positions(n, seed):
    """n distinct 9x9 queries: 2 to 6 stones off the first line, alternating."""
    rng = random.Random(seed)
    inner = [(x, y) for x in range(1, 8) for y in range(1, 8)]
    out = []
    for i in range(n):
        pts = rng.sample(inner, rng.randint(2, 6))
        moves = [["B" if k % 2 == 0 else "W", "ABCDEFGHJ"[x] + str(9 - y)] for k, (x, y) in enumerate(pts)]
        out.append({"id": f"p{i}", "moves": moves, "rules": "tromp-taylor", "komi": 7.5,
                    "boardXSize": 9, "boardYSize": 9})
    return out


def engine_args(args, command):
    config = "configs/serve.toml" if command == "serve" else "configs/analysis.toml"
    return [args.engine, command, "-model", args.model, "-config", config, "-override-config",
            f"numAnalysisThreads={args.threads},maxVisits={args.visits},logToStderr=false"
            + (f",spareAnalysisThreads={args.spare}" if command == "serve" and args.spare is not None else "")]


def run_stdin(args, queries):
    p = subprocess.Popen(engine_args(args, "analysis"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def finals(n):
        got = 0
        while got < n:
            line = p.stdout.readline()
            if not line:
                raise SystemExit("engine analysis ended early")
            v = json.loads(line)
            if "error" in v:
                raise SystemExit(f"engine analysis: {v}")
            if "turnNumber" in v and not v.get("isDuringSearch"):
                got += 1

    p.stdin.write(json.dumps(dict(queries[0], id="warm")) + "\n")
    p.stdin.flush()
    finals(1)
    start = time.perf_counter()
    p.stdin.write("".join(json.dumps(q) + "\n" for q in queries))
    p.stdin.flush()
    finals(len(queries))
    elapsed = time.perf_counter() - start
    p.stdin.close()
    p.wait(timeout=60)
    return len(queries) / elapsed


def run_http(args, queries):
    p = subprocess.Popen(engine_args(args, "serve") + ["-listen", "127.0.0.1:0"], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    addr = None
    for line in p.stderr:
        if line.startswith("engine serve: listening on http://"):
            addr = line.split("http://")[1].split(",")[0]
            break
    if addr is None:
        raise SystemExit("engine serve did not start")
    threading.Thread(target=lambda: [None for _ in p.stderr], daemon=True).start()
    host, port = addr.rsplit(":", 1)

    def post(conn, q):
        body = json.dumps(q)
        conn.request("POST", "/v1/analyze", body, {"Content-Type": "application/json"})
        r = conn.getresponse()
        text = r.read().decode()
        if r.status != 200:
            raise SystemExit(f"HTTP {r.status}: {text}")

    post(http.client.HTTPConnection(host, int(port)), dict(queries[0], id="warm"))
    todo = list(queries)
    lock = threading.Lock()

    def client():
        conn = http.client.HTTPConnection(host, int(port))
        while True:
            with lock:
                if not todo:
                    return
                q = todo.pop()
            post(conn, q)

    threads = [threading.Thread(target=client) for _ in range(args.clients)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    p.terminate()
    p.wait(timeout=60)
    return len(queries) / elapsed


def start_serve(args, extra):
    p = subprocess.Popen(engine_args(args, "serve") + ["-listen", "127.0.0.1:0"] + extra, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in p.stderr:
        if line.startswith("engine serve: listening on http://"):
            threading.Thread(target=lambda: [None for _ in p.stderr], daemon=True).start()
            host, port = line.split("http://")[1].split(",")[0].rsplit(":", 1)
            return p, host, int(port)
    raise SystemExit("engine serve did not start")


def timed_post(host, port, secret, q):
    conn = http.client.HTTPConnection(host, port)
    start = time.perf_counter()
    conn.request("POST", "/v1/analyze", json.dumps(q), {"Authorization": f"Bearer {secret}"})
    r = conn.getresponse()
    text = r.read().decode()
    if r.status != 200:
        raise SystemExit(f"HTTP {r.status}: {text}")
    return time.perf_counter() - start


def run_fairness(args, queries):
    keys = "".join(f'[[key]]\nname = "{n}"\nsha256 = "{hashlib.sha256(n.encode()).hexdigest()}"\n\n'
                   for n in ("a", "b"))
    fd, path = tempfile.mkstemp(suffix=".toml")
    os.write(fd, keys.encode())
    os.close(fd)
    p, host, port = start_serve(args, ["-keys", path])
    try:
        probe = [dict(q, id=f"b{i}", maxVisits=1) for i, q in enumerate(queries[:args.probes])]
        idle = statistics.median(timed_post(host, port, "b", q) for q in probe)
        stop = threading.Event()
        answered = [0]

        def flood(i):
            k = 0
            while not stop.is_set():
                q = dict(queries[(i + k) % len(queries)], id=f"a{i}-{k}", maxVisits=args.flood_visits)
                timed_post(host, port, "a", q)
                answered[0] += 1
                k += 1

        threads = [threading.Thread(target=flood, args=(i,), daemon=True) for i in range(args.flood)]
        for t in threads:
            t.start()
        time.sleep(1.0)
        before = answered[0]
        loaded = statistics.median(timed_post(host, port, "b", q) for q in probe)
        print(f"idle {idle:.3f} s, under A's flood {loaded:.3f} s ({loaded / idle:.1f}x), "
              f"A answered {answered[0] - before} queries meanwhile")
        stop.set()
    finally:
        p.terminate()
        p.wait(timeout=60)
        os.unlink(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", default="target/release/engine")
    ap.add_argument("--model", default="models/engine-9x9-13x13-b4c32-grow304.bin.gz")
    ap.add_argument("--positions", type=int, default=96)
    ap.add_argument("--visits", type=int, default=100)
    ap.add_argument("--threads", type=int, default=2, help="numAnalysisThreads of both")
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--fairness", action="store_true", help="measure fairness instead (see above)")
    ap.add_argument("--flood", type=int, default=64, help="--fairness: key A's queries in flight")
    ap.add_argument("--flood-visits", type=int, default=400, help="--fairness: visits of key A's queries")
    ap.add_argument("--probes", type=int, default=10, help="--fairness: key B's 1-visit queries")
    ap.add_argument("--spare", type=int, default=None,
                    help="spareAnalysisThreads of engine serve (default: the config's)")
    args = ap.parse_args()
    queries = positions(args.positions, args.seed)
    if args.fairness:
        return run_fairness(args, queries)
    stdin_rates, http_rates = [], []
    for r in range(args.rounds):
        stdin_rates.append(run_stdin(args, queries))
        http_rates.append(run_http(args, queries))
        print(f"round {r + 1}: stdin {stdin_rates[-1]:.1f} pos/s, http {http_rates[-1]:.1f} pos/s", flush=True)
    s, h = statistics.median(stdin_rates), statistics.median(http_rates)
    print(f"stdin {s:.1f} pos/s (median of {args.rounds}), http {h:.1f} pos/s (median of {args.rounds}), "
          f"ratio {h / s:.2f}")


if __name__ == "__main__":
    sys.exit(main())
