#!/usr/bin/env python3
"""Long-running load on one engine process, with its resident memory sampled.

    scripts/soak/soak.py analysis [--queries 20000] [--in-flight 16]
    scripts/soak/soak.py gtp [--games 500]
    scripts/soak/soak.py selfplay [--minutes 60]

Common options: --engine (default target/release/engine), --model (default
the project's net in models/), --config-override KEY=VALUE,... (added to
the run's -override-config), --out FILE (the RSS samples as TSV).

analysis: `engine analysis` (configs/analysis.toml) answers QUERIES queries
  kept IN_FLIGHT at a time: board sizes 9, 13 and 19 in turn, 0 to 30
  random legal-looking moves, maxVisits 8 to 64, some with ownership, policy
  or moves ownership asked for, some with overrideSettings. Every query must
  get its final answer (or an error answer, for a move list that turns out
  illegal).
gtp: `engine gtp` plays GAMES 9x9 games against itself in one process
  (clear_board, then genmove for each side until two passes or 150 moves),
  maxVisits 8.
selfplay: `engine selfplay` (configs/selfplay.toml on 9x9, maxVisits 32,
  its NN cache and tree reuse on) for MINUTES minutes, then SIGINT.

The process's resident memory (VmRSS) is read every second. The report gives
the work done and the median RSS of the first and second halves of the run
(by time); memory is "flat" when the second half's median is within 10% of
the first's. Exit status 1 when it is not, or when a query went unanswered.
Plain Python 3, no dependencies; Linux (/proc).
"""
import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLS = "ABCDEFGHJKLMNOPQRST"


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


class Sampler(threading.Thread):
    """Samples a process's RSS every second until stopped."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid = pid
        self.samples = []  # (seconds since start, kB)
        self.start_time = time.time()
        self.halt = threading.Event()

    def run(self):
        while not self.halt.is_set():
            kb = rss_kb(self.pid)
            if kb is not None:
                self.samples.append((time.time() - self.start_time, kb))
            self.halt.wait(1.0)

    def stop(self):
        self.halt.set()
        self.join()


def report(name, work, sampler, out):
    s = sampler.samples
    if len(s) < 4:
        print(f"{name}: too few RSS samples ({len(s)})")
        return False
    end = s[-1][0]
    first = [kb for t, kb in s if t < end / 2]
    second = [kb for t, kb in s if t >= end / 2]
    m1, m2 = statistics.median(first), statistics.median(second)
    ratio = m2 / m1
    flat = abs(ratio - 1.0) <= 0.10
    print(f"{name}: {work}; {end:.0f} s; RSS median first half {m1 / 1024:.1f} MB, "
          f"second half {m2 / 1024:.1f} MB (ratio {ratio:.3f}), peak {max(kb for _, kb in s) / 1024:.1f} MB: "
          f"{'flat' if flat else 'NOT flat'}")
    if out:
        with open(out, "w") as f:
            f.write("seconds\trss_kb\n")
            for t, kb in s:
                f.write(f"{t:.1f}\t{kb}\n")
    return flat


def overrides(args, base):
    extra = [base] + ([args.config_override] if args.config_override else [])
    return ",".join(x for x in extra if x)


def soak_analysis(args):
    cmd = [args.engine, "analysis", "-model", args.model, "-config",
           os.path.join(ROOT, "configs/analysis.toml"), "-override-config",
           overrides(args, f"numAnalysisThreads={args.in_flight}")]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, bufsize=1)
    sampler = Sampler(proc.pid)
    sampler.start()
    rng = random.Random(7)
    sizes = [9, 13, 19]
    answered, errors = set(), 0
    sent = 0
    pending = set()

    def query(i):
        size = sizes[i % 3]
        moves, used = [], set()
        for k in range(rng.randrange(0, 31)):
            x, y = rng.randrange(size), rng.randrange(size)
            if (x, y) in used:
                continue
            used.add((x, y))
            moves.append(["B" if k % 2 == 0 else "W", f"{COLS[x]}{y + 1}"])
        q = {"id": f"q{i}", "moves": moves, "rules": rng.choice(["tromp-taylor", "japanese", "chinese"]),
             "komi": rng.choice([6.5, 7.5, 0.5]), "boardXSize": size, "boardYSize": size,
             "maxVisits": rng.choice([8, 16, 32, 64])}
        if i % 4 == 0:
            q["includeOwnership"] = True
        if i % 5 == 0:
            q["includePolicy"] = True
        if i % 11 == 0:
            q["includeMovesOwnership"] = True
        if i % 7 == 0:
            q["overrideSettings"] = {"rootPolicyTemperature": 1.2, "wideRootNoise": 0.02}
        return q

    while sent < min(args.in_flight, args.queries):
        proc.stdin.write(json.dumps(query(sent)) + "\n")
        pending.add(f"q{sent}")
        sent += 1
    for line in proc.stdout:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        qid = msg.get("id")
        if qid not in pending:
            continue
        if "error" in msg:
            errors += 1
        elif msg.get("isDuringSearch"):
            continue
        pending.discard(qid)
        answered.add(qid)
        if sent < args.queries:
            proc.stdin.write(json.dumps(query(sent)) + "\n")
            pending.add(f"q{sent}")
            sent += 1
        elif not pending:
            break
    proc.stdin.close()
    proc.wait(timeout=600)
    sampler.stop()
    work = f"{len(answered)} of {args.queries} queries answered ({errors} error answers), {args.in_flight} in flight"
    flat = report("engine analysis", work, sampler, args.out)
    return flat and len(answered) == args.queries


def soak_gtp(args):
    cmd = [args.engine, "gtp", "-model", args.model, "-override-config",
           overrides(args, "maxVisits=8")]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, bufsize=1)
    sampler = Sampler(proc.pid)
    sampler.start()

    def ask(command):
        proc.stdin.write(command + "\n")
        lines = []
        while True:
            line = proc.stdout.readline()
            if line == "":
                raise RuntimeError(f"engine exited during {command!r}")
            if line.strip() == "" and lines:
                break
            if line.strip():
                lines.append(line.strip())
        answer = " ".join(lines)
        if not answer.startswith("="):
            raise RuntimeError(f"{command!r}: {answer}")
        return answer[1:].strip()

    ask("boardsize 9")
    ask("komi 7")
    moves = 0
    for _ in range(args.games):
        ask("clear_board")
        passes, color = 0, "b"
        for _ in range(150):
            mv = ask(f"genmove {color}").lower()
            moves += 1
            passes = passes + 1 if mv == "pass" else 0
            if passes >= 2 or mv == "resign":
                break
            color = "w" if color == "b" else "b"
    ask("quit")
    proc.wait(timeout=60)
    sampler.stop()
    return report("engine gtp", f"{args.games} games, {moves} genmoves", sampler, args.out)


def soak_selfplay(args):
    out_dir = tempfile.mkdtemp(prefix="soak-selfplay-")
    cmd = [args.engine, "selfplay", "-config", os.path.join(ROOT, "configs/selfplay.toml"),
           "-model", args.model, "-output-dir", out_dir, "-override-config",
           overrides(args, "bSizes=9,bSizeRelProbs=1,maxVisits=32,cheapSearchVisits=8,"
                           "reducedVisitsMin=8,numGameThreads=4,dataBoardLen=9")]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    sampler = Sampler(proc.pid)
    sampler.start()
    time.sleep(args.minutes * 60)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    sampler.stop()
    summary = [l for l in err.splitlines() if "games" in l and "rows" in l]
    work = summary[-1].strip() if summary else "no summary line"
    subprocess.run(["rm", "-rf", out_dir])
    return report("engine selfplay", work, sampler, args.out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["analysis", "gtp", "selfplay"])
    ap.add_argument("--engine", default=os.path.join(ROOT, "target/release/engine"))
    ap.add_argument("--model", default=os.path.join(ROOT, "models/training-run/engine-9x9-b4c32-gen60.bin.gz"))
    ap.add_argument("--config-override", default="")
    ap.add_argument("--queries", type=int, default=20000)
    ap.add_argument("--in-flight", type=int, default=16)
    ap.add_argument("--games", type=int, default=500)
    ap.add_argument("--minutes", type=float, default=60.0)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    if not os.path.exists(args.engine):
        sys.exit(f"soak.py: no engine binary at {args.engine} (cargo build --release, or --engine)")
    cpu = subprocess.run(["sh", "-c", "lscpu | sed -n 's/^Model name: *//p' | head -1"],
                         capture_output=True, text=True).stdout.strip()
    print(f"soak {args.mode}: {cpu}, {os.cpu_count()} cores, model {os.path.basename(args.model)}")
    ok = {"analysis": soak_analysis, "gtp": soak_gtp, "selfplay": soak_selfplay}[args.mode](args)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
