#!/usr/bin/env python3
"""The work of scripts/gpu_check.sh (see `scripts/gpu_check.sh --help`).

Stages run in order, each under its own time cap and the run's overall
budget; a stage that fails or runs out of time leaves rows saying so and
the next stage starts. The report ($OUT/gpu_report.md and .json) is
written after every stage, so a run that is killed still leaves one.
Standard library only (the GPU machine has no internet).
"""

import argparse
import glob
import json
import lzma
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

# The profiles: the stages in order, each with its time cap in seconds for
# the real run and for --dry-run, and the limit at which the whole run stops
# itself. `budget` (the default) fits one call of a 15-minute device lease
# (caps summing to at most 450 s, the run stopping at 480 s); `full` is the
# longer list for a longer lease (25 minutes; or run it in parts with
# --only). The help text lists them.
PROFILES = {
    "budget": {
        "limit": 480,
        "caps": {
            "link": (15, 30),
            "parity": (90, 60),
            "search": (120, 45),
            "nn": (60, 30),
            "selfplay": (75, 30),
            "train": (50, 60),
            "analysis": (40, 30),
        },
    },
    "full": {
        "limit": 1500,
        "caps": {
            "link": (30, 30),
            "parity": (210, 60),
            "search": (240, 45),
            "nn": (120, 30),
            "analysis": (100, 30),
            "selfplay": (220, 30),
            "train": (300, 90),
            "katago": (250, 30),
        },
    },
}
# The nets of the budget profile: KataGo's g170 b6c96 and one transformer
# net (grouped-query attention, learned rotary embeddings), both in
# ../shared/models; scripts/gpu_pack.sh copies exactly these.
BUDGET_NETS = ("g170-b6c96-s175395328-d26788732", "b7c96h6kv3qk32v16tflrs-fson-bnh")
MAX_STRIPPED_BYTES = 64 << 20
G170 = "g170-b6c96-s175395328-d26788732"

# Tolerances. fp32: the vectors README (section 1). fp16: KataGo's
# testgpuerror limits for half precision (cpp/tests/testnnevalcanary.cpp,
# max over positions); bf16: twice those (3 fewer mantissa bits than fp16;
# KataGo has no bf16 inference to take limits from).
TOL_FP32 = {"policy": 1e-4, "ownership": 1e-3, "winrate": 1e-4, "lead": 1e-3,
            "score": 1e-3, "stdev": 1e-3, "noresult": 1e-5}
TOL_HALF = {"winrate_err": 0.05, "lead": 3.0, "score": 3.0, "stdev": 1.8,
            "top_policy": 0.06, "policy_kl": 0.004, "ownership": 0.20}


class StageTimeout(Exception):
    pass


class StageFailed(Exception):
    pass


def finite(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def unpack_engine(packed, work):
    """The binary scripts/gpu_pack.sh compressed, unpacked into `work`."""
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "engine")
    with lzma.open(packed) as src, open(path, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    os.chmod(path, 0o755)
    return path


# Every child process alive, so that the run's own limit (SIGALRM) can end
# them before it writes the report and exits.
LIVE = set()


class RunLimit(BaseException):
    """The whole run reached its limit (raised by SIGALRM)."""


class Check:
    def __init__(self, args):
        self.profile = args.profile
        self.caps = PROFILES[self.profile]["caps"]
        self.limit = PROFILES[self.profile]["limit"]
        self.dry = args.dry_run
        self.pack = os.path.abspath(args.pack) if args.pack else None
        # From a packed folder (scripts/gpu_pack.sh) everything is read from
        # that folder: the binary, configs/ and the shared data.
        self.root = self.pack or os.path.abspath(args.root)
        self.out = os.path.abspath(os.environ.get("OUT") or os.path.join(os.getcwd(), "gpu_check_out"))
        if self.pack:
            self.shared = os.path.join(self.pack, "shared")
        else:
            self.shared = os.path.abspath(os.environ.get("ENGINE_SHARED_DIR") or os.path.join(self.root, "..", "shared"))
        # Scratch files (nets made here, self-play and training output, the
        # unpacked binary) stay out of OUT: only the report comes back from a
        # device call, which returns at most 8 files.
        self.work = os.path.abspath(args.work) if args.work else tempfile.mkdtemp(prefix="gpu_check_work_")
        self.own_work = not args.work
        engine = args.engine or os.environ.get("ENGINE")
        if not engine and self.pack and os.path.isfile(os.path.join(self.pack, "engine.xz")):
            engine = unpack_engine(os.path.join(self.pack, "engine.xz"), self.work)
        if not engine:
            local = os.path.join(self.pack or os.getcwd(), "engine")
            engine = local if os.path.isfile(local) else os.path.join(self.root, "target", "release", "engine")
        self.engine = os.path.abspath(engine)
        self.only = set(args.only.split(",")) if args.only else None
        self.plan = [st for st in self.caps if not self.only or st in self.only]
        self.start = time.time()
        self.deadline = self.start + self.limit
        self.stage_deadline = self.deadline
        self.env = dict(os.environ)
        self.env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        self.report = {
            "mode": "dry-run (CPU, tiny sizes)" if self.dry else "GPU",
            "profile": self.profile,
            "limit_s": self.limit,
            "plan": [{"stage": st, "cap": self.cap(st)} for st in self.plan],
            "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            "engine": self.engine,
            "shared": self.shared,
            "pack": self.pack,
            "machine": {},
            "stages": [],
        }
        self._big = None
        self.gpu = GpuSampler() if shutil.which("nvidia-smi") and not self.dry else None

    def cap(self, stage):
        return self.caps[stage][1 if self.dry else 0]

    # -- running things ------------------------------------------------------

    def remaining(self):
        return min(self.stage_deadline, self.deadline) - time.time()

    def run(self, cmd, timeout=None, input=None, check=True, cwd=None):
        left = self.remaining()
        if left <= 1:
            raise StageTimeout("no time left in this stage")
        t = min(timeout, left) if timeout else left
        proc = self.popen(cmd, stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd)
        try:
            out, err = proc.communicate(input=input, timeout=t)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            LIVE.discard(proc)
            raise StageTimeout(f"timed out after {t:.0f} s: {' '.join(map(str, cmd[:4]))} ...")
        # (Left in LIVE when the run's limit interrupts the wait: then it is
        # ended with the others.)
        LIVE.discard(proc)
        p = subprocess.CompletedProcess(cmd, proc.returncode, out, err)
        if check and p.returncode != 0:
            raise StageFailed(f"{' '.join(map(str, cmd[:3]))} exited with {p.returncode}: {last_lines(p.stderr)}")
        return p

    def popen(self, cmd, cwd=None, **kw):
        """Starts a child that the run's limit can end (see LIVE)."""
        kw.setdefault("text", True)
        kw.setdefault("errors", "replace")
        proc = subprocess.Popen(cmd, env=self.env, cwd=cwd or self.root, **kw)
        LIVE.add(proc)
        return proc

    def e(self, *args):
        return [self.engine] + [str(a) for a in args]

    def path(self, *parts):
        return os.path.join(self.out, *parts)

    def scratch(self, *parts):
        return os.path.join(self.work, *parts)

    def model(self, name):
        return os.path.join(self.shared, "models", name)

    @property
    def g170(self):
        return self.model(G170 + ".bin.gz")

    def dev(self, precision=None):
        """Overrides that put a net on the device under test."""
        if self.dry:
            # The CPU: libtorch runs every precision (the Rust backend is fp32 only).
            o = ["deviceToUse=cpu", "nnCpuBackend=libtorch"]
        else:
            o = ["deviceToUse=0"]
        if precision:
            o.append(f"nnPrecision={precision}")
        return o

    def big_net(self):
        """A random b18c384nbt (dry run: b2c16), exported once."""
        if self._big is None:
            kind = "b2c16" if self.dry else "b18c384nbt"
            name = f"{kind}-random"
            d = self.scratch("nets")
            os.makedirs(d, exist_ok=True)
            f = os.path.join(d, name + ".bin.gz")
            if not os.path.isfile(f):
                self.run(self.e("export", "-random-init", kind, "-seed", 1, "-export-dir", d, "-model-name", name), timeout=120)
            self._big = (kind, f)
        return self._big

    # -- the report ----------------------------------------------------------

    def write_report(self):
        os.makedirs(self.out, exist_ok=True)
        self.report["seconds"] = round(time.time() - self.start, 1)
        done = {s["stage"] for s in self.report["stages"]}
        self.report["not_reached"] = [p["stage"] for p in self.report["plan"] if p["stage"] not in done]
        problems = completeness(self.report)
        self.report["complete"] = not problems
        self.report["problems"] = problems
        tmp = self.path("gpu_report.json.tmp")
        with open(tmp, "w") as f:
            json.dump(self.report, f, indent=1, sort_keys=False, default=str)
        os.replace(tmp, self.path("gpu_report.json"))
        with open(self.path("gpu_report.md.tmp"), "w") as f:
            f.write(markdown(self.report))
        os.replace(self.path("gpu_report.md.tmp"), self.path("gpu_report.md"))


def last_lines(text, n=3):
    lines = [l for l in (text or "").strip().splitlines() if l.strip()]
    return " | ".join(lines[-n:])[-600:]


def row(item, status, values=None, note=""):
    return {"item": item, "status": status, "values": values or {}, "note": note}


class GpuSampler:
    """Samples nvidia-smi's utilisation every 0.5 s while running."""

    def __init__(self):
        self.samples = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self):
        while not self.stop.is_set():
            try:
                p = subprocess.run(["nvidia-smi", "--query-gpu=utilization.gpu,memory.used",
                                    "--format=csv,noheader,nounits", "-i", "0"],
                                   capture_output=True, text=True, timeout=5)
                u, m = [float(x) for x in p.stdout.strip().splitlines()[0].split(",")[:2]]
                self.samples.append((time.time(), u, m))
            except Exception:
                pass
            self.stop.wait(0.5)

    def mean(self, t0, t1):
        xs = [u for (t, u, _) in self.samples if t0 <= t <= t1]
        return round(statistics.mean(xs), 1) if xs else None


def gpu_util(check, t0, t1):
    if check.gpu is None:
        return "n/a (no nvidia-smi)" if not check.dry else "n/a (CPU)"
    v = check.gpu.mean(t0, t1)
    return v if v is not None else "n/a (no samples)"


# ---------------------------------------------------------------------------
# Stages


def stage_link(c):
    rows = []
    if not os.path.isfile(c.engine):
        raise StageFailed(f"no engine binary at {c.engine} (--engine PATH or ENGINE=...)")
    ldd = c.run(["ldd", c.engine], check=False).stdout
    missing = [l.split()[0] for l in ldd.splitlines() if "not found" in l]
    if missing and not c.dry:
        # The binary's rpath names the build machine's venv: use this one's torch.
        libs = glob.glob(os.path.join(os.environ.get("TORCH_VENV", "/opt/torch/.venv"), "lib", "python3*", "site-packages", "torch", "lib"))
        if libs:
            c.env["LD_LIBRARY_PATH"] = libs[0] + (":" + c.env["LD_LIBRARY_PATH"] if c.env.get("LD_LIBRARY_PATH") else "")
            ldd = c.run(["ldd", c.engine], check=False).stdout
            missing = [l.split()[0] for l in ldd.splitlines() if "not found" in l]
            rows.append(row("LD_LIBRARY_PATH", "info", {}, f"set to {libs[0]} (the binary's own libtorch path is missing here)"))
    cuda_line = next((l.strip() for l in ldd.splitlines() if "libtorch_cuda" in l), "")
    rows.append(row("links libtorch_cuda", "pass" if cuda_line else "fail", {},
                    cuda_line or "ldd lists no libtorch_cuda: a CPU-only libtorch cannot run CUDA"))
    rows.append(row("no missing libraries", "fail" if missing else "pass", {"missing": len(missing)}, " ".join(missing)))
    size = os.path.getsize(c.engine)
    stripped = size
    tmp = c.scratch("engine.stripped")
    if shutil.which("strip"):
        c.run(["strip", "-o", tmp, c.engine])
        stripped = os.path.getsize(tmp)
        os.remove(tmp)
    rows.append(row("stripped size within 64 MiB", "pass" if stripped <= MAX_STRIPPED_BYTES else "fail",
                    {"stripped_MiB": round(stripped / 2**20, 1), "file_MiB": round(size / 2**20, 1)}))
    v = c.run(c.e("version"), check=False)
    # On the GPU machine the binary must see the GPU; the dry run's CPU has none.
    sees = "cuda available = true" in v.stdout
    ok = v.returncode == 0 and (sees or c.dry)
    rows.append(row("engine version" + ("" if c.dry else " sees the GPU"), "pass" if ok else "fail", {},
                    last_lines(v.stdout + v.stderr, 2)))
    c.report["machine"]["engine_version"] = v.stdout.strip()
    if shutil.which("nvidia-smi"):
        q = c.run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"], check=False)
        c.report["machine"]["gpus"] = q.stdout.strip().splitlines()
        rows.append(row("nvidia-smi", "pass" if q.returncode == 0 else "fail", {}, "; ".join(q.stdout.strip().splitlines())))
        if c.gpu is None and not c.dry:
            c.gpu = GpuSampler()
    else:
        rows.append(row("nvidia-smi", "info" if c.dry else "fail", {}, "not found"))
    try:
        cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except Exception:
        cpu = "unknown"
    c.report["machine"]["cpu"] = f"{cpu}, {os.cpu_count()} cores"
    return rows


def analysis_run(c, net, overrides, queries, threads=4):
    """Runs `engine analysis` on `queries`; returns ({id: final response}, stderr)."""
    ov = ["reportAnalysisWinratesAs=SIDETOMOVE", f"numAnalysisThreads={threads}",
          "numSearchThreadsPerAnalysisThread=1", "nnMaxBatchSize=16"] + overrides
    text = "".join(json.dumps(q) + "\n" for q in queries)
    p = c.run(c.e("analysis", "-model", net, "-config", os.path.join(c.root, "configs", "analysis.toml"),
                  "-override-config", ",".join(ov)), input=text, check=False)
    out = {}
    for line in p.stdout.splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if "id" in r and not r.get("isDuringSearch", False) and "error" not in r:
            out[r["id"]] = r
    return out, p


def refused(p):
    """The engine declined the net (e.g. a human-SL net)."""
    return p.returncode != 0 and re.search(r"is not supported|not implemented", p.stderr or "") is not None


def compare(got, ref, half, scale_scores):
    """Worst differences of `got` against `ref` (responses by id)."""
    m = {"positions": 0, "missing": 0, "nonfinite": 0, "illegal_mismatch": 0,
         "policy": 0.0, "ownership": 0.0, "winrate": 0.0, "lead": 0.0, "score": 0.0,
         "stdev": 0.0, "noresult": 0.0, "winrate_err": 0.0, "top_policy": 0.0, "policy_kl": 0.0}
    for qid, r in ref.items():
        g = got.get(qid)
        if g is None:
            m["missing"] += 1
            continue
        m["positions"] += 1
        for v in iter_numbers(g):
            if not math.isfinite(v):
                m["nonfinite"] += 1
        rp, gp = r["policy"], g.get("policy") or []
        if len(gp) != len(rp):
            m["missing"] += 1
            continue
        for a, b in zip(rp, gp):
            if (a == -1) != (b == -1):
                m["illegal_mismatch"] += 1
            elif a != -1:
                m["policy"] = max(m["policy"], abs(a - b))
        legal = [(a, b) for a, b in zip(rp, gp) if a != -1]
        top = max(legal, key=lambda ab: ab[0])
        m["top_policy"] = max(m["top_policy"], abs(top[0] - top[1]))
        kl = sum(a * (math.log(a) - math.log(max(b, 1e-30))) for a, b in legal if a > 1e-30)
        m["policy_kl"] = max(m["policy_kl"], kl)
        for a, b in zip(r.get("ownership") or [], g.get("ownership") or []):
            m["ownership"] = max(m["ownership"], abs(a - b))
        ri, gi = r["rootInfo"], g["rootInfo"]

        def d(k, scaled=False):
            a, b = ri[k], gi.get(k, float("nan"))
            s = max(1.0, abs(a)) if scaled else 1.0
            return abs(a - b) / s
        m["winrate"] = max(m["winrate"], d("rawWinrate"))
        m["noresult"] = max(m["noresult"], d("rawNoResultProb"))
        m["winrate_err"] = max(m["winrate_err"], d("rawWinrate") + d("rawNoResultProb"))
        m["lead"] = max(m["lead"], d("rawLead", scale_scores))
        m["score"] = max(m["score"], d("rawScoreSelfplay", scale_scores))
        m["stdev"] = max(m["stdev"], d("rawScoreSelfplayStdev", scale_scores))
    fails = []
    if m["missing"] or m["nonfinite"] or m["illegal_mismatch"] or m["positions"] == 0:
        fails.append("missing, non-finite or mismatched outputs")
    if half:
        tol = {k: v * half for k, v in TOL_HALF.items()}
    else:
        tol = TOL_FP32
    for k, t in tol.items():
        if not m[k] <= t:
            fails.append(f"{k} {m[k]:.3g} > {t:g}")
    for k in m:
        if isinstance(m[k], float):
            m[k] = float(f"{m[k]:.3g}")
    return m, fails


def iter_numbers(x):
    if isinstance(x, bool):
        return
    if isinstance(x, (int, float)):
        yield float(x)
    elif isinstance(x, dict):
        for v in x.values():
            yield from iter_numbers(v)
    elif isinstance(x, list):
        for v in x:
            yield from iter_numbers(v)
    elif x is None:
        yield float("nan")


def nn_records(c):
    path = os.path.join(c.shared, "vectors", "nn", "nn.jsonl")
    recs = [json.loads(l) for l in open(path) if l.strip()]
    return recs[:3] if c.dry else recs


def stage_parity(c):
    rows = []
    recs = nn_records(c)
    queries = [r["query"] for r in recs]
    katago = {r["query"]["id"]: r["response"] for r in recs}
    if c.profile == "budget":
        # g170 b6c96 and one transformer net, on the GPU and in the dry run.
        nets = [c.model(n + ".bin.gz") for n in BUDGET_NETS]
        missing = [n for n in nets if not os.path.isfile(n)]
        if missing:
            raise StageFailed("nets not found: " + ", ".join(missing))
    else:
        nets = sorted(glob.glob(os.path.join(c.shared, "models", "*.bin.gz")))
        if c.dry:
            nets = [n for n in nets if os.path.basename(n).startswith("g170")] + \
                   [n for n in nets if not os.path.basename(n).startswith("g170")][:1]
        kind, big = c.big_net()
        nets.append(big)
    for net in nets:
        name = os.path.basename(net).replace(".bin.gz", "")
        cpu, p = analysis_run(c, net, ["deviceToUse=cpu", "nnPrecision=fp32"], queries)
        if refused(p):
            rows.append(row(f"{name}", "skip", {}, "refused by the engine: " + last_lines(p.stderr, 1)))
            continue
        if p.returncode != 0 or len(cpu) != len(queries):
            rows.append(row(f"{name}: CPU fp32 reference", "fail", {"answered": len(cpu)}, last_lines(p.stderr)))
            continue
        is_g170 = name == G170
        if is_g170:
            m, fails = compare(cpu, katago, None, False)
            rows.append(row(f"{name}: CPU fp32 vs KataGo", "fail" if fails else "pass", m, "; ".join(fails)))
        for prec, half in (("fp32", None), ("fp16", 1.0), ("bf16", 2.0)):
            got, p = analysis_run(c, net, c.dev(prec), queries)
            if p.returncode != 0:
                rows.append(row(f"{name}: {prec}", "fail", {"answered": len(got)}, last_lines(p.stderr)))
                continue
            if is_g170:
                m, fails = compare(got, katago, half, False)
                rows.append(row(f"{name}: {prec} vs KataGo", "fail" if fails else "pass", m, "; ".join(fails)))
            m, fails = compare(got, cpu, half, True)
            rows.append(row(f"{name}: {prec} vs CPU fp32", "fail" if fails else "pass", m, "; ".join(fails)))
    return rows


BENCH_LINE = re.compile(r"numSearchThreads = *(\d+): (\d+) / (\d+) positions, visits/s = ([\d.]+) "
                        r"nnEvals/s = ([\d.]+) nnBatches/s = ([\d.]+) avgBatchSize = ([\d.]+) \(([\d.]+) secs\)")


def benchmark_rows(c, label, cmd, timeout=None):
    """Runs a search benchmark (ours or KataGo's), one row per thread count."""
    rows = []
    left = c.remaining()
    if left <= 1:
        raise StageTimeout("no time left in this stage")
    t_prev = time.time()
    proc = c.popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = []
    threading.Thread(target=lambda: err.extend(proc.stderr), daemon=True).start()
    timer = threading.Timer(min(timeout or left, left), proc.kill)
    timer.start()
    device = ""
    try:
        for line in proc.stdout:
            line = line.replace("\r", "\n").strip().splitlines()[-1] if line.strip() else ""
            if line.startswith("Network:"):
                device = line
            if line.startswith("Testing"):
                t_prev = time.time()
            mt = BENCH_LINE.search(line)
            if mt:
                now = time.time()
                th, done, total, vps, eps, bps, avg, secs = mt.groups()
                rows.append(row(f"{label}, {th} threads", "pass" if done == total else "fail",
                                {"visits_per_s": float(vps), "nn_evals_per_s": float(eps),
                                 "avg_batch": float(avg), "seconds": float(secs),
                                 "gpu_util_pct": gpu_util(c, t_prev, now)}))
                t_prev = now
        proc.wait()
    finally:
        timer.cancel()
    if proc.returncode != 0:
        rows.append(row(f"{label}", "fail", {}, f"exit code {proc.returncode}: {last_lines(''.join(err))}"))
    elif not rows:
        rows.append(row(f"{label}", "fail", {}, "no result lines: " + last_lines("".join(err))))
    if device:
        rows.insert(0, row(f"{label}: device", "info", {}, device))
    return rows


def search_cmd(c, net, precision="fp16"):
    if c.dry:
        v, t, n = 12, "1,2", 2
    elif c.profile == "budget":
        # Two thread counts for a GPU of 100+ SMs (an H200 has 132).
        v, t, n = 800, "64,128", 10
    else:
        v, t, n = 800, "16,32,64,128", 10
    return c.e("benchmark", "-model", net, "-config", os.path.join(c.root, "configs", "gtp.toml"),
               "-v", v, "-t", t, "-n", n, "-boardsize", 19,
               "-override-config", ",".join(["deviceToUse=cpu"] if c.dry else c.dev(precision)))


def stage_search(c):
    rows = []
    kind, big = c.big_net()
    for label, net in (("b6c96 (g170)", c.g170), (f"{kind} (random)", big)):
        rows += benchmark_rows(c, label, search_cmd(c, net))
    return rows


def stage_nn(c):
    rows = []
    kind, big = c.big_net()
    if c.profile == "budget":
        batches, secs, precisions = ("4", 0.3, ("fp16", "bf16")) if c.dry else ("256", 2, ("fp16", "bf16"))
    else:
        batches, secs, precisions = ("1,4", 0.3, ("fp16",)) if c.dry else ("64,256,1024", 3, ("fp16",))
    for label, net in (("b6c96 (g170)", c.g170), (f"{kind} (random)", big)):
        for prec in precisions:
            p = c.run(c.e("benchmark", "-nn", "-model", net, "-batch", batches, "-seconds", secs, "-boardsize", 19,
                          "-override-config", ",".join(c.dev(prec))), check=False)
            js = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
            if p.returncode != 0 or not js:
                rows.append(row(f"{label}, {prec}", "fail", {}, f"exit code {p.returncode}: {last_lines(p.stderr)}"))
                continue
            b = js[-1]["nn_benchmark"]
            rows.append(row(f"{label}, {prec}: device", "info",
                            {"gflops_per_eval": round(b["gflops_per_eval"], 3),
                             "peak_tflops": b["peak_tflops"] if b["peak_tflops"] else "n/a"},
                            b["device"]))
            for r in b["results"]:
                ratio = r["peak_ratio"]
                # The peak is the dense fp16 tensor-core rate, which bf16
                # shares on every GPU in the table (Ampere and later).
                rows.append(row(f"{label}, {prec}, batch {r['batch']}", "pass",
                                {"evals_per_s": round(r["evals_per_second"], 1),
                                 "ms_per_batch": round(r["ms_per_batch"], 3),
                                 "tflops": round(r["tflops"], 3),
                                 "pct_of_tensor_peak": round(100 * ratio, 1) if ratio is not None else "n/a"}))
    return rows


ANALYSIS_RULES = ["chinese", "japanese", "tromp-taylor", "korean", "aga"]


def stage_analysis(c):
    path = os.path.join(c.shared, "vectors", "nn", "nn.jsonl")
    recs = [json.loads(l)["query"] for l in open(path) if l.strip()]
    recs = [q for q in recs if q.get("boardXSize", 19) == 19 and q.get("boardYSize", 19) == 19]
    if not recs:
        recs = [{"id": "empty", "moves": [], "rules": "chinese", "komi": 7.5, "boardXSize": 19, "boardYSize": 19}]
    if c.dry:
        in_flight, visits, duration = 4, 8, 6
    else:
        in_flight, visits, duration = (64, 200, 25) if c.profile == "budget" else (64, 200, 60)
    ov = [f"numAnalysisThreads={in_flight}", "numSearchThreadsPerAnalysisThread=1", f"nnMaxBatchSize={in_flight}"] + \
        (["deviceToUse=cpu"] if c.dry else c.dev("fp16"))
    cmd = c.e("analysis", "-model", c.g170, "-config", os.path.join(c.root, "configs", "analysis.toml"),
              "-override-config", ",".join(ov))
    proc = c.popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=1)
    err = []
    threading.Thread(target=lambda: err.extend(proc.stderr), daemon=True).start()
    lock = threading.Lock()
    state = {"sent": 0, "done": 0, "feeding": True, "first": None}

    def send():
        i = state["sent"]
        q = dict(recs[i % len(recs)])
        q.pop("overrideSettings", None)
        q["id"] = f"q{i}"
        q["maxVisits"] = visits
        # Another komi (and rules) for each pass over the positions, so no
        # query finds its root in the NN cache.
        rnd = i // len(recs)
        q["komi"] = 7.5 + (rnd % 100 - 50) * 0.5
        q["rules"] = ANALYSIS_RULES[(rnd // 100) % len(ANALYSIS_RULES)]
        try:
            proc.stdin.write(json.dumps(q) + "\n")
            proc.stdin.flush()
        except OSError:  # the engine has exited: its stderr says why
            state["feeding"] = False
            return
        state["sent"] += 1

    times = {}
    t0 = time.time()
    try:
        with lock:
            for _ in range(in_flight):
                if state["feeding"]:
                    send()
        stop_at = min(t0 + duration, time.time() + c.remaining() - 15)

        def reader():
            for line in proc.stdout:
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                if r.get("isDuringSearch") or "id" not in r:
                    continue
                with lock:
                    state["done"] += 1
                    if state["feeding"]:
                        if time.time() < stop_at:
                            send()
                        else:
                            state["feeding"] = False
                            times["stop"] = (time.time(), state["done"])
        rt = threading.Thread(target=reader, daemon=True)
        rt.start()
        # Until the feeding stops (the reader stops it at stop_at) or the
        # engine is gone; then stdin is closed and the engine finishes.
        while rt.is_alive() and state["feeding"] and time.time() < stop_at + 10:
            time.sleep(0.1)
        with lock:
            state["feeding"] = False
            stop = times.get("stop", (time.time(), state["done"]))
    finally:
        try:
            proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=max(1.0, min(30.0, c.remaining())))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    secs = stop[0] - t0
    done = stop[1]
    dev = next((l.strip() for l in err if l.startswith("engine analysis: model")), "")
    ok = done > 0 and proc.returncode in (0, -9, None)
    return [row(f"g170 b6c96, {in_flight} queries in flight, {visits} visits", "pass" if ok else "fail",
                {"positions_per_s": round(done / secs, 2) if secs > 0 else 0.0, "positions": done,
                 "seconds": round(secs, 1), "gpu_util_pct": gpu_util(c, t0, stop[0])},
                dev if ok else f"exit code {proc.returncode}: {last_lines(''.join(err))}")]


SELFPLAY_SUMMARY = re.compile(r"engine selfplay: (\d+) games, (\d+) rows in (\d+) files, ([\d.]+) s \(([\d.]+) games/h, (\d+) rows/h\)")


SELFPLAY_NET = re.compile(r"engine selfplay: network .*: (\d+) rows evaluated \(([\d.]+) rows/s\), (\d+) cache hits, "
                          r"avg batch ([\d.]+)")


def stage_selfplay(c):
    if c.dry:
        threads, visits, run_s, reserve = 4, 8, 10, 8
        ov = ["bSizes=9", "bSizeRelProbs=1", "cheapSearchVisits=4", "reducedVisitsMin=4", "deviceToUse=cpu"]
    elif c.profile == "budget":
        # One minute: cheaper searches (KataGo's ratio of 1 full to 4 cheap
        # visits) and more games at once, so some 19x19 games end within it;
        # the network's rows/s counts every move, finished games or not.
        threads, visits, run_s, reserve = 256, 100, 60, 12
        ov = ["bSizes=19", "bSizeRelProbs=1", "cheapSearchVisits=25", "reducedVisitsMin=25"] + c.dev("fp16")
    else:
        threads, visits, run_s, reserve = 128, 200, 180, 30
        ov = ["bSizes=19", "bSizeRelProbs=1"] + c.dev("fp16")
    ov += [f"numGameThreads={threads}", f"maxVisits={visits}", "allowRectangleProb=0",
           f"nnMaxBatchSize={threads}", "logGamesEvery=1"]
    out = c.scratch("selfplay")
    shutil.rmtree(out, ignore_errors=True)
    cmd = c.e("selfplay", "-config", os.path.join(c.root, "configs", "selfplay.toml"), "-model", c.g170,
              "-output-dir", out, "-max-games-total", 1000000, "-override-config", ",".join(ov))
    t0 = time.time()
    proc = c.popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = []
    rt = threading.Thread(target=lambda: err.extend(proc.stderr), daemon=True)
    rt.start()
    run_s = max(1.0, min(run_s, c.remaining() - reserve))
    try:
        proc.wait(timeout=run_s)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGTERM)
    t1 = time.time()
    try:
        proc.wait(timeout=max(1.0, min(60.0, c.remaining())))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    rt.join(5)
    text = "".join(err)
    m = SELFPLAY_SUMMARY.search(text)
    batches = re.findall(r"avg batch ([\d.]+)", text)
    label = f"g170 b6c96, {'9x9' if c.dry else '19x19'}, {visits} visits, {threads} game threads, {run_s:.0f} s"
    if not m or proc.returncode not in (0, 3):
        return [row(label, "fail", {}, f"exit code {proc.returncode}: {last_lines(text)}")]
    games, rows_, files, secs, gph, rph = m.groups()
    net = SELFPLAY_NET.search(text)
    values = {"games": int(games), "rows": int(rows_), "seconds": float(secs), "rows_per_hour": int(rph),
              "games_per_hour": float(gph)}
    if net:
        values["nn_rows_per_s"] = float(net.group(2))
        values["avg_batch"] = float(net.group(4))
    else:
        values["avg_batch"] = float(batches[-1]) if batches else "n/a"
    values["gpu_util_pct"] = gpu_util(c, t0, t1)
    if c.profile == "budget":
        # A minute may end before a 19x19 game does: the network's work is
        # the figure that must be there.
        ok = net is not None and int(net.group(1)) > 0
        note = "" if int(games) > 0 else "no game finished: rows/hour counts finished games only"
        return [row(label, "pass" if ok else "fail", values, note if ok else "no network summary line: " + last_lines(text))]
    return [row(label, "pass" if int(games) > 0 else "fail", values, "no game finished" if int(games) == 0 else "")]


TRAIN_LINE = re.compile(r"train: epoch \d+ batch (\d+)/\d+ \| (\d+) samples \| ([\d.]+) samples/s \| loss (\S+)")


def stage_train(c):
    if c.profile == "budget":
        return stage_train_budget(c)
    rows = []
    base = c.scratch("train")
    shutil.rmtree(base, ignore_errors=True)
    window = shuffled_window(c, base)
    # On the GPU also a transformer kind (grouped-query attention, learned
    # RoPE): too slow for the CPU's dry run, which has no tiny one.
    kinds, batch, nbatches = ((("b1c6nbt", "b2c16"), 8, 40) if c.dry
                              else (("b6c96", "b18c384nbt", "b7c96h6kv3qk32v16tflrs"), 256, 60))
    for kind in kinds:
        for prec in ("fp32", "bf16", "fp16"):
            d = os.path.join(base, f"{kind}-{prec}")
            cmd = c.e("train", "-traindir", d, "-latestdatadir", window, "-model-kind", kind, "-batch-size", batch,
                      "-samples-per-epoch", batch * nbatches, "-max-epochs-this-instance", 1,
                      "-checkpoint-every-samples", 10**9, "-no-lr-warmup", "-seed", 1)
            if not c.dry:
                cmd.append("-cuda")
            if prec != "fp32":
                cmd.append(f"-use-{prec}")
            label = f"{kind} {prec}, batch {batch}, {nbatches} batches"
            try:
                p = c.run(cmd, check=False)
            except StageTimeout as e:
                rows.append(row(label, "fail", {}, str(e)))
                break
            lines = []
            try:
                for l in open(os.path.join(d, "metrics.jsonl")):
                    j = json.loads(l)
                    if "samples_per_sec" in j and "loss" in j:
                        lines.append(j)
            except (OSError, ValueError):
                pass
            dev = next((l for l in p.stderr.splitlines() if l.startswith("train: device")), "")
            if p.returncode != 0 or len(lines) < 2:
                rows.append(row(label, "fail", {"metrics_lines": len(lines)},
                                f"exit code {p.returncode}: {last_lines(p.stderr)}"))
                continue
            first, last = lines[0]["loss"], lines[-1]["loss"]
            sps = [j["samples_per_sec"] for j in lines[1:]] or [lines[0]["samples_per_sec"]]
            ok_finite = all(finite(j["loss"]) for j in lines)
            falling = ok_finite and last < first
            rows.append(row(label, "pass" if falling else "fail",
                            {"samples_per_s": round(statistics.median(sps), 1), "loss_first": round(first, 4),
                             "loss_last": round(last, 4), "metrics_lines": len(lines)},
                            dev + ("" if falling else "; loss not finite or not falling")))
    return rows


def shuffled_window(c, base):
    """`engine shuffle` of the shared npz-more rows into a window under `base`.

    The dry run trains a few hundred samples: on a window of 64 rows (seen
    five times over) the loss falls for sure, and fixed seeds make the
    check reproducible instead of a coin flip between two noisy intervals."""
    window = os.path.join(base, "shuffled")
    keep = 64 if c.dry else 3000
    c.run(c.e("shuffle", os.path.join(c.shared, "vectors", "npz-more"), "-out-dir", os.path.join(window, "w1", "train"),
              "-out-tmp-dir", os.path.join(base, "shuffle-tmp"), "-min-rows", 100, "-keep-target-rows", keep,
              "-approx-rows-per-out-file", 3000, "-seed", 1), timeout=120)
    return window


def stage_train_budget(c):
    """b6c96 in bf16 on the GPU for 30 s (the dry run: b1c6nbt, 40 batches
    of 8), read from the trainer's plain progress lines (one per 20
    batches): samples/s, and the loss finite and falling."""
    base = c.scratch("train")
    shutil.rmtree(base, ignore_errors=True)
    window = shuffled_window(c, base)
    kind, prec, batch = ("b1c6nbt", "bf16", 8) if c.dry else ("b6c96", "bf16", 256)
    # The dry run trains to the end of a short epoch; the GPU run trains
    # until it is stopped after 30 s (engine train is stopped by a kill).
    nbatches, run_s = (40, None) if c.dry else (10**6, 30)
    cmd = c.e("train", "-traindir", os.path.join(base, kind), "-latestdatadir", window, "-model-kind", kind,
              "-batch-size", batch, "-samples-per-epoch", batch * nbatches, "-max-epochs-this-instance", 1,
              "-checkpoint-every-samples", 10**12, "-no-lr-warmup", "-seed", 1, f"-use-{prec}")
    if not c.dry:
        cmd.append("-cuda")
    label = f"{kind} {prec}, batch {batch}, " + (f"{nbatches} batches" if run_s is None else f"{run_s} s")
    proc = c.popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = []
    rt = threading.Thread(target=lambda: err.extend(proc.stderr), daemon=True)
    rt.start()
    wait_s = max(1.0, c.remaining() - 3) if run_s is None else max(1.0, min(run_s, c.remaining() - 3))
    try:
        proc.wait(timeout=wait_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    LIVE.discard(proc)
    rt.join(5)
    text = "".join(err)
    lines = [(int(m.group(2)), float(m.group(3)), float(m.group(4))) for m in TRAIN_LINE.finditer(text)]
    dev = next((l for l in text.splitlines() if l.startswith("train: device")), "")
    if len(lines) < 2:
        return [row(label, "fail", {"progress_lines": len(lines)},
                    f"exit code {proc.returncode}: {last_lines(text)}")]
    first, last = lines[0][2], lines[-1][2]
    ok_finite = all(math.isfinite(l[2]) for l in lines)
    falling = ok_finite and last < first
    # The first interval holds the start-up (cuDNN's autotuning): the median
    # of the later ones is the steady rate.
    sps = statistics.median([l[1] for l in lines[1:]])
    return [row(label, "pass" if falling else "fail",
                {"samples_per_s": round(sps, 1), "samples": lines[-1][0], "loss_first": round(first, 4),
                 "loss_last": round(last, 4), "progress_lines": len(lines)},
                dev + ("" if falling else "; loss not finite or not falling"))]


def stage_katago(c):
    kg = os.environ.get("KATAGO_CUDA")
    if not kg:
        return [row("KataGo CUDA comparison", "skip", {}, "KATAGO_CUDA not set (see --help to build KataGo's CUDA backend)")]
    cfg = os.environ.get("KATAGO_CFG") or (os.path.join(os.environ["KATAGO_SRC"], "cpp", "configs", "gtp_example.cfg")
                                            if os.environ.get("KATAGO_SRC") else "")
    if not cfg or not os.path.isfile(cfg):
        raise StageFailed("KATAGO_CUDA is set but no KataGo GTP config: set KATAGO_CFG or KATAGO_SRC")
    ours = search_cmd(c, c.g170)
    args = ours[ours.index("-v"):ours.index("-override-config")]
    theirs = [kg, "benchmark", "-model", c.g170, "-config", cfg] + args
    runs = {"engine": {}, "katago": {}}
    rows = []
    for rnd in (1, 2):
        for who, cmd in (("engine", ours), ("katago", theirs)):
            rs = benchmark_rows(c, f"{who} round {rnd}", cmd)
            for r in rs:
                m = re.search(r", (\d+) threads$", r["item"])
                if m and finite(r["values"].get("visits_per_s")):
                    runs[who].setdefault(int(m.group(1)), []).append(r["values"]["visits_per_s"])
            rows += rs
    for t in sorted(set(runs["engine"]) & set(runs["katago"])):
        e, k = statistics.median(runs["engine"][t]), statistics.median(runs["katago"][t])
        rows.append(row(f"{t} threads: engine / KataGo", "pass", {"engine_visits_per_s": e, "katago_visits_per_s": k,
                                                                  "ratio": round(e / k, 3) if k else "n/a"}))
    return rows


FUNCS = {"link": stage_link, "parity": stage_parity, "search": stage_search, "nn": stage_nn,
         "analysis": stage_analysis, "selfplay": stage_selfplay, "train": stage_train, "katago": stage_katago}


# ---------------------------------------------------------------------------
# The report


def completeness(report, only=None):
    """What makes the report incomplete: a planned stage without rows (not
    reached), a number that is not finite, a failed row."""
    problems = []
    names = [s["stage"] for s in report["stages"]]
    for p in report.get("plan", []):
        if p["stage"] not in names:
            problems.append(f"stage {p['stage']}: not reached")
    for s in report["stages"]:
        if not s["rows"]:
            problems.append(f"stage {s['stage']}: no rows")
        for r in s["rows"]:
            if r["status"] == "fail":
                problems.append(f"stage {s['stage']}: {r['item']}: failed {r['note']}".strip())
            for k, v in r["values"].items():
                if isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isfinite(v):
                    problems.append(f"stage {s['stage']}: {r['item']}: {k} is not finite")
                if v is None:
                    problems.append(f"stage {s['stage']}: {r['item']}: {k} is missing")
    return problems


def fmt(v):
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) < 1e5 else f"{v:,.0f}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return str(v)


def markdown(rep):
    out = [f"# engine GPU check: {rep['mode']}, profile {rep.get('profile', '?')}", ""]
    m = rep["machine"]
    out.append(f"- started {rep['started']}, {rep.get('seconds', 0)} s in all (the run stops itself at "
               f"{rep.get('limit_s', '?')} s)")
    out.append(f"- binary `{rep['engine']}`; {m.get('engine_version', '').replace(chr(10), '; ')}")
    out.append(f"- GPUs: {'; '.join(m.get('gpus', [])) or 'none (nvidia-smi not found)'}; CPU: {m.get('cpu', '?')}")
    out.append(f"- report complete: **{'yes' if rep.get('complete') else 'no'}**")
    for p in rep.get("problems", []):
        out.append(f"  - {p}")
    out += ["", "| stage | status | seconds (cap) | rows | note |", "| --- | --- | --- | --- | --- |"]
    for s in rep["stages"]:
        out.append(f"| {s['stage']} | {s['status']} | {s['seconds']} ({s['cap']}) | {len(s['rows'])} | {s.get('error', '')} |")
    for p in rep.get("plan", []):
        if p["stage"] in rep.get("not_reached", []):
            out.append(f"| {p['stage']} | not reached | - ({p['cap']}) | 0 | |")
    for s in rep["stages"]:
        out += ["", f"## {s['stage']}", "", "| item | status | numbers | note |", "| --- | --- | --- | --- |"]
        for r in s["rows"]:
            nums = ", ".join(f"{k} {fmt(v)}" for k, v in r["values"].items())
            note = r["note"].replace("|", "/")
            out.append(f"| {r['item']} | {r['status']} | {nums} | {note} |")
    out.append("")
    return "\n".join(out)


def plan_lines(profile, dry=False, only=None):
    """`--plan`: one `STAGE CAP` line per stage, then `total SECONDS`."""
    caps = PROFILES[profile]["caps"]
    stages = [st for st in caps if not only or st in only]
    lines = [f"{st} {caps[st][1 if dry else 0]}" for st in stages]
    lines.append(f"total {sum(caps[st][1 if dry else 0] for st in stages)}")
    return lines


def end_children():
    for proc in list(LIVE):
        try:
            proc.kill()
        except OSError:
            pass


def main():
    ap = argparse.ArgumentParser(description="see scripts/gpu_check.sh --help")
    ap.add_argument("--root", required=True)
    ap.add_argument("--profile", choices=sorted(PROFILES), default="budget")
    ap.add_argument("--plan", action="store_true", help="print each stage's cap and the total, run nothing")
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--pack", help="a folder made by scripts/gpu_pack.sh: read everything from it")
    ap.add_argument("--work", help="scratch folder (default: a new temporary folder, removed at the end)")
    ap.add_argument("--engine")
    ap.add_argument("--only", help="comma-separated stages (for debugging the script, or a second call)")
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else None
    if only and not only <= set(PROFILES[args.profile]["caps"]):
        ap.error(f"--only: stages of profile {args.profile} are {','.join(PROFILES[args.profile]['caps'])}")
    if args.plan:
        print("\n".join(plan_lines(args.profile, args.dry_run, only)))
        return 0
    c = Check(args)
    os.makedirs(c.out, exist_ok=True)
    # The report exists from the start, every stage "not reached", and is
    # rewritten after each stage: a call cut off at its limit still brings
    # back every finished stage.
    c.write_report()

    def at_limit(signum, frame):
        raise RunLimit()
    signal.signal(signal.SIGALRM, at_limit)
    signal.alarm(c.limit)
    try:
        for st in c.plan:
            cap = c.cap(st)
            t0 = time.time()
            c.stage_deadline = min(t0 + cap, c.deadline)
            entry = {"stage": st, "cap": cap, "status": "pass", "rows": []}
            print(f"gpu_check: stage {st} (cap {cap} s) ...", file=sys.stderr, flush=True)
            try:
                if time.time() >= c.deadline:
                    raise StageTimeout(f"the run's {c.limit}-second limit is reached")
                entry["rows"] = FUNCS[st](c)
            except StageTimeout as e:
                entry["error"] = f"time cap: {e}"
                entry["rows"].append(row(st, "fail", {}, entry["error"]))
            except StageFailed as e:
                entry["error"] = str(e)
                entry["rows"].append(row(st, "fail", {}, str(e)))
            except RunLimit:
                entry["error"] = f"cut at the run's {c.limit}-second limit"
                entry["rows"].append(row(st, "fail", {}, entry["error"]))
                entry["status"] = "fail"
                entry["seconds"] = round(time.time() - t0, 1)
                c.report["stages"].append(entry)
                raise
            except Exception as e:  # a bug here must not lose the other stages
                entry["error"] = f"{type(e).__name__}: {e}"
                entry["rows"].append(row(st, "fail", {}, entry["error"]))
            statuses = {r["status"] for r in entry["rows"]}
            entry["status"] = "fail" if "fail" in statuses else ("skip" if statuses == {"skip"} else "pass")
            entry["seconds"] = round(time.time() - t0, 1)
            c.report["stages"].append(entry)
            c.write_report()
            print(f"gpu_check: stage {st}: {entry['status']} in {entry['seconds']} s", file=sys.stderr, flush=True)
    except RunLimit:
        end_children()
        print(f"gpu_check: the run's {c.limit}-second limit: stopped", file=sys.stderr, flush=True)
    finally:
        signal.alarm(0)
        end_children()
        if c.gpu:
            c.gpu.stop.set()
        c.write_report()
        if c.own_work:
            shutil.rmtree(c.work, ignore_errors=True)
    print(open(c.path("gpu_report.md")).read())
    print(f"gpu_check: wrote {c.path('gpu_report.md')} and gpu_report.json", file=sys.stderr)
    return 0 if c.report["complete"] else 1


if __name__ == "__main__":
    sys.exit(main())
