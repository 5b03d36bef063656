#!/usr/bin/env bash
# What -human-model costs engine analysis: the same queries (N positions of
# ../shared/vectors/nn/nn.jsonl, VISITS visits each, a humanSLProfile) with
# and without a human net beside the main one, alternated ROUNDS times;
# prints each run's wall time, the medians and the network rows evaluated.
#
#   scripts/human_model_cost.sh [VISITS [ROUNDS [MAIN [HUMAN]]]]
#
# MAIN defaults to g170 b6c96, HUMAN to the test net
# models/test-human-sl/b6c96-fson-mish-meta.bin.gz (the same size).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shared="${ENGINE_SHARED_DIR:-$root/../shared}"
visits="${1:-200}"
rounds="${2:-3}"
main="${3:-$shared/models/g170-b6c96-s175395328-d26788732.bin.gz}"
human="${4:-$root/models/test-human-sl/b6c96-fson-mish-meta.bin.gz}"
engine="$root/target/release/engine"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
# The same queries, with a profile for the run with the human net (a
# profile no net reads is an error, as in KataGo).
python3 - "$shared/vectors/nn/nn.jsonl" "$visits" "$work" <<'PY'
import json, sys
with open(sys.argv[3] + "/plain.jsonl", "w") as plain, open(sys.argv[3] + "/human.jsonl", "w") as human:
    for line in open(sys.argv[1]):
        q = json.loads(line)["query"]
        q["maxVisits"] = int(sys.argv[2])
        q.pop("includeOwnership", None)
        q["overrideSettings"] = {}
        print(json.dumps(q), file=plain)
        q["overrideSettings"] = {"humanSLProfile": "rank_5k"}
        print(json.dumps(q), file=human)
PY
run() {
  local start end queries="$1"; shift
  start=$(date +%s.%N)
  "$engine" analysis -model "$main" "$@" -config "$root/configs/analysis.toml" \
    -override-config numAnalysisThreads=1,numSearchThreadsPerAnalysisThread=2 \
    < "$work/$queries" > "$work/out.jsonl" 2> "$work/err.txt"
  if grep -q '"error"' "$work/out.jsonl"; then echo "an error answer: $(grep -m1 '"error"' "$work/out.jsonl")" >&2; exit 1; fi
  end=$(date +%s.%N)
  python3 -c "print(f'{$end - $start:.2f}')"
  grep -o "rows [0-9]*" "$work/err.txt" | tail -1 >&2
}
plain=(); with=()
for r in $(seq "$rounds"); do
  plain+=("$(run plain.jsonl 2>>"$work/rows_plain")")
  with+=("$(run human.jsonl -human-model "$human" 2>>"$work/rows_with")")
done
echo "queries: $(wc -l < "$work/plain.jsonl"), $visits visits each"
echo "without -human-model: ${plain[*]} s; main-net rows: $(tail -1 "$work/rows_plain")"
echo "with    -human-model: ${with[*]} s; main-net rows: $(tail -1 "$work/rows_with")"
python3 - "${plain[*]}" "${with[*]}" <<'PY'
import statistics, sys
a = [float(x) for x in sys.argv[1].split()]; b = [float(x) for x in sys.argv[2].split()]
ma, mb = statistics.median(a), statistics.median(b)
print(f"median without {ma:.2f} s, with {mb:.2f} s: ratio {mb / ma:.3f}")
PY
