#!/usr/bin/env bash
# Coverage-guided fuzzing of every parser of outside input (libFuzzer via
# cargo-fuzz, on the nightly toolchain, no sanitizer: the code is safe Rust,
# what we look for are panics, overflows (debug assertions are on), hangs
# and runaway memory).
#
#   scripts/fuzz.sh [MINUTES] [TARGET...]
#
# Runs each target (default: all of gtp_lines analysis_queries sgf config
# model_file npz) for MINUTES minutes (default 5), one after the other, with a
# corpus seeded from ../shared (KataGo's vectors, configs and test nets) and
# the repository's configs. Prints execs, time and crashes per target and
# writes the same table to fuzz/last-run.txt. Crashing inputs are kept in
# fuzz/artifacts/TARGET/; each one found so far is a regression test in
# tests/robust_fuzz_regressions.rs.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
minutes="${1:-5}"
shift || true
if [ "$#" -gt 0 ]; then
  targets=("$@")
else
  targets=(gtp_lines analysis_queries sgf config model_file npz)
fi
shared="${ENGINE_SHARED_DIR:-$root/../shared}"
[ -d "$shared" ] || { echo "fuzz.sh: shared data not found at $shared (set ENGINE_SHARED_DIR)" >&2; exit 2; }
rustup toolchain list | grep -q '^nightly' || { echo "fuzz.sh: needs the nightly toolchain (rustup toolchain install nightly)" >&2; exit 2; }
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked

fuzz="$root/fuzz"
corpus="$fuzz/corpus"

# --- seed corpora (rebuilt each run; what the fuzzer found stays too) -----
seed() { # target name < content
  mkdir -p "$corpus/$1"
  cat > "$corpus/$1/seed-$2"
}
i=0
while IFS= read -r session; do
  i=$((i + 1))
  printf '%b' "$session" | seed gtp_lines "$i"
done <<'SESSIONS'
1 protocol_version\n2 name\n3 version\n4 list_commands\n5 known_command play\n
boardsize 9\nclear_board\nkomi 7.5\nplay b E5\nplay w C3\ngenmove b\nshowboard\nundo\nfinal_score\nfinal_status_list dead\n
10 boardsize 19\n11 fixed_handicap 4\n12 genmove w\n13 kata-get-rules\n14 kata-set-rule ko POSITIONAL\n15 kata-set-rules japanese\n16 kgs-rules chinese\n
rectangular_boardsize 7 11\nset_position b A1 w B2 b C3\nplace_free_handicap 2\nset_free_handicap D4 Q16\n
time_settings 300 30 5\nkgs-time_settings byoyomi 60 10 3\ntime_left b 100 0\nkata-list_time_settings\nkata-time_settings fischer 60 5\n
kata-get-params\nkata-get-param maxVisits\nkata-set-param maxVisits 10\nkata-set-params {"playoutDoublingAdvantage":0.5}\nkata-list-params\n
kata-analyze 10 ownership true\n\nlz-analyze B 20 avoid b D4,Q16 1\n\nanalyze interval 5 minmoves 3\nstop\n
1 play b D4\r\n2 play w Q16\r\n3 kata-search b\r\n4 genmove_debug w\r\n5 printsgf\r\n6 kata-raw-nn 0\r\n7 clear_cache\r\n8 cputime\r\n9 gomill-cpu_time\r\n
# comment\n\t 5 name\t# trailing\n99999999999999999999999 name\n7\n
SESSIONS

python3 - "$shared" "$corpus/analysis_queries" <<'PY'
import json, os, sys
shared, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
n = 0
for name in ["nn/nn.jsonl", "nn/search200.jsonl", "nn/search200_deterministic.jsonl"]:
    path = os.path.join(shared, "vectors", name)
    if not os.path.exists(path):
        continue
    with open(path) as f:
        for k, line in enumerate(f):
            if k % 8:
                continue
            q = json.loads(line)["query"]
            n += 1
            with open(os.path.join(out, "seed-%d" % n), "w") as g:
                g.write(json.dumps(q) + "\n")
extra = [
    {"id": "v", "action": "query_version"},
    {"id": "m", "action": "query_models"},
    {"id": "c", "action": "clear_cache"},
    {"id": "t", "action": "terminate", "terminateId": "q", "turnNumbers": [0, 1]},
    {"id": "ta", "action": "terminate_all"},
    {"id": "q", "moves": [["B", "D4"], ["W", "pass"]], "initialStones": [["B", "C3"]],
     "initialPlayer": "W", "rules": "japanese", "komi": 6.5, "boardXSize": 9, "boardYSize": 9,
     "analyzeTurns": [0, 1, 2], "maxVisits": 1, "includeOwnership": True,
     "includePolicy": True, "includeMovesOwnership": True, "includePVVisits": True,
     "avoidMoves": [{"player": "B", "moves": ["E5"], "untilDepth": 1}],
     "overrideSettings": {"wideRootNoise": 0.0, "reportAnalysisWinratesAs": "BLACK"},
     "priority": 3, "reportDuringSearchEvery": 0.5, "whiteHandicapBonus": "N"},
]
for q in extra:
    n += 1
    with open(os.path.join(out, "seed-%d" % n), "w") as g:
        g.write(json.dumps(q) + "\n")
PY

for f in "$shared"/vectors/games/*.sgf "$shared"/vectors/npz/*.sgf; do
  [ -f "$f" ] && seed sgf "$(basename "$f")" < "$f"
done
printf '(;GM[1]FF[4]SZ[19]KM[6.5]RU[Japanese]HA[2]AB[dd][pp];W[qd](;B[dp]C[a\\]b])(;B[pq]))' | seed sgf variations

for f in "$root"/configs/*.toml "$shared"/vectors/configs/*.cfg "$shared"/vectors/npz-more/*.cfg; do
  [ -f "$f" ] && seed config "$(basename "$f")" < "$f"
done
kg=/work/.mirror/lightvector+KataGo/repo
if [ -d "$kg" ]; then
  for c in gtp_example analysis_example; do
    git -C "$kg" show "HEAD:cpp/configs/$c.cfg" 2>/dev/null | seed config "$c.cfg" || true
  done
fi
printf 'maxVisits=5,rules=japanese,numSearchThreads=2' | seed config overrides

mkdir -p "$corpus/model_file"
for f in "$shared"/models/*.bin.gz; do
  [ -f "$f" ] || continue
  b="$(basename "$f" .bin.gz)"
  # The header and first layers, unpacked and packed, and cut inside a weight block.
  (gzip -dc "$f" 2>/dev/null || true) | head -c 60000 | seed model_file "$b-head.bin"
  (gzip -dc "$f" 2>/dev/null || true) | head -c 3000 | seed model_file "$b-short.bin"
  (gzip -dc "$f" 2>/dev/null || true) | head -c 60000 | gzip -c | seed model_file "$b-head.bin.gz"
done

mkdir -p "$corpus/npz"
for f in "$shared"/vectors/npz/*.npz "$shared"/vectors/npz-more/*.npz; do
  [ -f "$f" ] || continue
  b="$(basename "$f" .npz)"
  head -c 200000 "$f" | seed npz "$b-head.npz"
done
python3 - "$corpus/npz" <<'PY' || true
# A small whole file: KataGo's layout with 1 row at pos_len 5 (stored zip).
import io, struct, sys, zipfile
def npy(descr, shape, itemsize):
    h = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, ", ".join(map(str, shape)) + ("," if len(shape) == 1 else ""))
    h = h.ljust(118) + "\n"
    n = 1
    for d in shape: n *= d
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() + bytes(n * itemsize)
p = 5; a = p * p
members = [("binaryInputNCHWPacked", "|u1", (1, 22, (a + 7) // 8), 1), ("globalInputNC", "<f4", (1, 19), 4),
           ("policyTargetsNCMove", "<i2", (1, 2, a + 1), 2), ("globalTargetsNC", "<f4", (1, 80), 4),
           ("scoreDistrN", "|i1", (1, 2 * a + 120), 1), ("valueTargetsNCHW", "|i1", (1, 5, p, p), 1),
           ("qValueTargetsNCMove", "<i2", (1, 3, a + 1), 2)]
buf = io.BytesIO()
with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
    for name, d, shape, size in members:
        z.writestr(name, npy(d, shape, size))
open(sys.argv[1] + "/seed-tiny.npz", "wb").write(buf.getvalue())
PY

# --- build, then run each target in turn --------------------------------
torchlib="$(ls -d "$root"/.venv/lib/python3*/site-packages/torch/lib 2>/dev/null | head -1 || true)"
export LD_LIBRARY_PATH="${torchlib:+$torchlib:}${LD_LIBRARY_PATH:-}"
cd "$fuzz"
"$root/setup.sh" cargo +nightly fuzz build --sanitizer none

summary="$fuzz/last-run.txt"
printf '%-18s %12s %8s %8s %8s\n' target execs seconds exec/s crashes | tee "$summary"
for t in "${targets[@]}"; do
  max_len=65536
  [ "$t" = model_file ] || [ "$t" = npz ] || max_len=8192
  # A GTP input is a whole session: let it be long from the start rather
  # than growing from a few bytes (libFuzzer's default length control).
  extra=()
  [ "$t" = gtp_lines ] && extra=(-len_control=0)
  mkdir -p "$fuzz/artifacts/$t"
  before=$(find "$fuzz/artifacts/$t" -type f | wc -l)
  log="$fuzz/artifacts/$t.log"
  start=$(date +%s)
  set +e
  "$root/setup.sh" cargo +nightly fuzz run --sanitizer none "$t" "$corpus/$t" -- \
    -max_total_time=$((minutes * 60)) -max_len=$max_len -timeout=20 -rss_limit_mb=4096 \
    -print_final_stats=1 "${extra[@]}" >"$log" 2>&1
  set -e
  secs=$(( $(date +%s) - start ))
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  after=$(find "$fuzz/artifacts/$t" -type f | wc -l)
  printf '%-18s %12s %8s %8s %8s\n' "$t" "${execs:-?}" "$secs" "${rate:-?}" "$((after - before))" | tee -a "$summary"
done
