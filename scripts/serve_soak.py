#!/usr/bin/env python3
"""serve_soak.py - a long mixed load on `engine serve`, checking every answer.

--clients threads (default 32) each loop until --minutes (default 10) have
passed, each round picking one of:

  ndjson: POST /v1/analyze, read the NDJSON reply;
  sse:    the same with Accept: text/event-stream;
  ws:     a WebSocket with 1-4 queries in flight, sometimes a `terminate`
          of one of them.

Queries are seeded 9x9 positions, 10 to 150 visits, some with
analyzeTurns (2-3 turns) and some with reportDuringSearchEvery. About one
round in ten the client drops its connection mid-answer (a disconnect).

Every answer line must be JSON with the query's id; every query that was
not dropped must get exactly one final response per analysed turn, and
nothing after it: a missing final is "lost", anything else "malformed".
The server's RSS (/proc/PID/status, VmRSS) is sampled after --warmup
seconds and at the end; afterwards /metrics must show no search running
and no position queued.

  python3 scripts/serve_soak.py --engine target/release/engine

Needs the `websockets` package (PyPI); the rest is the standard library.
Prints one summary line; exits 1 if anything was lost or malformed.
"""

import argparse
import http.client
import json
import random
import re
import socket
import subprocess
import sys
import threading
import time

try:
    from websockets.sync.client import connect as ws_connect
except ImportError:  # pragma: no cover - a hint for the person running it
    raise SystemExit("serve_soak.py needs the websockets package: pip install websockets")


def position(rng, qid):
    """A random 9x9 query: 2-8 stones off the first line."""
    pts = rng.sample([(x, y) for x in range(1, 8) for y in range(1, 8)], rng.randint(2, 8))
    moves = [["B" if k % 2 == 0 else "W", "ABCDEFGHJ"[x] + str(9 - y)] for k, (x, y) in enumerate(pts)]
    q = {"id": qid, "moves": moves, "rules": "tromp-taylor", "komi": 7.5,
         "boardXSize": 9, "boardYSize": 9, "maxVisits": rng.randint(10, 150)}
    turns = [len(moves)]
    if rng.random() < 0.3:
        turns = sorted(rng.sample(range(len(moves) + 1), rng.randint(2, 3)))
        q["analyzeTurns"] = turns
    if rng.random() < 0.3:
        q["reportDuringSearchEvery"] = 0.05
    return q, turns


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {"queries": 0, "finals": 0, "partials": 0, "dropped": 0,
                       "terminated": 0, "lost": 0, "malformed": 0}
        self.problems = []

    def add(self, **kw):
        with self.lock:
            for k, v in kw.items():
                self.counts[k] += v

    def problem(self, kind, text):
        with self.lock:
            self.counts[kind] += 1
            if len(self.problems) < 20:
                self.problems.append(f"{kind}: {text[:300]}")


def check_lines(tally, q, turns, objs):
    """Counts one query's answer lines: one final per turn, nothing after."""
    finals = {}
    for o in objs:
        if not isinstance(o, dict) or o.get("id") != q["id"]:
            tally.problem("malformed", f"{q['id']}: {o}")
            continue
        if "error" in o:
            tally.problem("malformed", f"{q['id']}: error answer {o}")
            continue
        if o.get("isDuringSearch"):
            if o.get("turnNumber") in finals:
                tally.problem("malformed", f"{q['id']}: a report after the final of its turn")
            tally.add(partials=1)
            continue
        finals[o.get("turnNumber")] = finals.get(o.get("turnNumber"), 0) + 1
    for t in turns:
        n = finals.get(t, 0)
        if n == 0:
            tally.problem("lost", f"{q['id']} turn {t}: no final response")
        elif n > 1:
            tally.problem("malformed", f"{q['id']} turn {t}: {n} final responses")
    extra = set(finals) - set(turns)
    if extra:
        tally.problem("malformed", f"{q['id']}: finals for turns {sorted(extra)} not asked")
    tally.add(finals=sum(finals.values()))


def http_round(args, rng, tally, qid, sse):
    q, turns = position(rng, qid)
    conn = http.client.HTTPConnection(args.host, args.port, timeout=120)
    headers = {"Content-Type": "application/json"}
    if sse:
        headers["Accept"] = "text/event-stream"
    conn.request("POST", "/v1/analyze", json.dumps(q), headers)
    r = conn.getresponse()
    if r.status != 200:
        tally.problem("malformed", f"{qid}: HTTP {r.status} {r.read()[:200]!r}")
        conn.close()
        return
    tally.add(queries=1)
    if rng.random() < 0.1:
        r.readline()
        conn.sock.shutdown(socket.SHUT_RDWR)
        conn.close()
        tally.add(dropped=1)
        return
    objs = []
    for raw in r.read().decode().splitlines():
        line = raw.strip()
        if sse:
            if not line.startswith("data:"):
                continue
            line = line[5:].strip()
        if not line:
            continue
        try:
            objs.append(json.loads(line))
        except ValueError:
            tally.problem("malformed", f"{qid}: not JSON: {line}")
    conn.close()
    check_lines(tally, q, turns, objs)


def ws_round(args, rng, tally, qid):
    queries = [position(rng, f"{qid}-{k}") for k in range(rng.randint(1, 4))]
    with ws_connect(f"ws://{args.host}:{args.port}/v1/ws", open_timeout=30,
                    max_size=1 << 24) as ws:
        for q, _ in queries:
            ws.send(json.dumps(q))
        tally.add(queries=len(queries))
        terminated = None
        if rng.random() < 0.3:
            terminated = rng.choice(queries)[0]["id"]
            ws.send(json.dumps({"id": f"{qid}-t", "action": "terminate",
                                "terminateId": terminated}))
            tally.add(terminated=1)
        drop = rng.random() < 0.1
        want = {q["id"]: set(turns) for q, turns in queries}
        got = {q["id"]: [] for q, _ in queries}
        deadline = time.monotonic() + 120
        while any(want.values()):
            if drop:
                tally.add(dropped=1)
                return  # leaving the with block closes the socket mid-answer
            try:
                text = ws.recv(timeout=max(0.1, deadline - time.monotonic()))
            except TimeoutError:
                break
            try:
                o = json.loads(text)
            except ValueError:
                tally.problem("malformed", f"{qid}: not JSON: {text}")
                continue
            if o.get("action") == "terminate":
                continue
            if o.get("id") not in got:
                tally.problem("malformed", f"{qid}: answer for another id: {text}")
                continue
            got[o["id"]].append(o)
            if not o.get("isDuringSearch") and "error" not in o:
                want[o["id"]].discard(o.get("turnNumber"))
        for q, turns in queries:
            check_lines(tally, q, turns, got[q["id"]])


def client(args, index, stop, tally):
    rng = random.Random(args.seed * 1000 + index)
    k = 0
    while not stop.is_set():
        kind = rng.choice(["ndjson", "sse", "ws"])
        qid = f"c{index}-{k}"
        k += 1
        try:
            if kind == "ws":
                ws_round(args, rng, tally, qid)
            else:
                http_round(args, rng, tally, qid, kind == "sse")
        except Exception as e:  # a broken connection is a finding, not a crash of the soak
            tally.problem("malformed", f"{qid} ({kind}): {type(e).__name__}: {e}")


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def metric(args, name):
    conn = http.client.HTTPConnection(args.host, args.port, timeout=30)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    conn.close()
    total = 0.0
    for line in text.splitlines():
        m = re.match(re.escape(name) + r"(\{[^}]*\})? (\S+)$", line)
        if m:
            total += float(m.group(2))
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", default="target/release/engine")
    ap.add_argument("--model", default="models/engine-9x9-13x13-b4c32-grow304.bin.gz")
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--warmup", type=float, default=60.0, help="seconds before the first RSS sample")
    ap.add_argument("--threads", type=int, default=2, help="numAnalysisThreads")
    ap.add_argument("--override", default="", help="more -override-config settings (k=v,...)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    overrides = f"numAnalysisThreads={args.threads},logToStderr=false"
    if args.override:
        overrides += "," + args.override
    p = subprocess.Popen([args.engine, "serve", "-model", args.model, "-config", "configs/serve.toml",
                          "-listen", "127.0.0.1:0", "-override-config", overrides],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in p.stderr:
        if line.startswith("engine serve: listening on http://"):
            args.host, port = line.split("http://")[1].split(",")[0].rsplit(":", 1)
            args.port = int(port)
            break
    else:
        raise SystemExit("engine serve did not start")
    threading.Thread(target=lambda: [None for _ in p.stderr], daemon=True).start()
    tally, stop = Tally(), threading.Event()
    threads = [threading.Thread(target=client, args=(args, i, stop, tally), daemon=True)
               for i in range(args.clients)]
    start = time.monotonic()
    try:
        for t in threads:
            t.start()
        time.sleep(args.warmup)
        rss_start = rss_kib(p.pid)
        samples = [rss_start]
        end = start + args.minutes * 60
        while time.monotonic() < end:
            time.sleep(min(30.0, max(0.0, end - time.monotonic())))
            samples.append(rss_kib(p.pid))
        rss_end = samples[-1]
        stop.set()
        for t in threads:
            t.join(timeout=180)
        time.sleep(1.0)
        running = metric(args, "engine_serve_searches_running")
        queued = metric(args, "engine_serve_queue_depth")
        in_flight = metric(args, "engine_serve_queries_in_flight")
    finally:
        p.terminate()
        p.wait(timeout=60)
    c = tally.counts
    growth = (rss_end - rss_start) / rss_start * 100 if rss_start else 0.0
    print(f"soak {time.monotonic() - start:.0f} s, {args.clients} clients: {c['queries']} queries, "
          f"{c['finals']} finals, {c['partials']} reports, {c['terminated']} terminates, "
          f"{c['dropped']} disconnects; lost {c['lost']}, malformed {c['malformed']}; "
          f"RSS {rss_start / 1024:.1f} -> {rss_end / 1024:.1f} MiB ({growth:+.1f}%) after {args.warmup:.0f} s "
          f"warm-up; afterwards running {running:.0f}, queued {queued:.0f}, in flight {in_flight:.0f}; "
          f"exit code {p.returncode}")
    print("RSS every 30 s after the warm-up (MiB): " + " ".join(f"{k / 1024:.1f}" for k in samples))
    for line in tally.problems:
        print("  " + line)
    bad = c["lost"] or c["malformed"] or running or queued or in_flight or p.returncode != 0
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
