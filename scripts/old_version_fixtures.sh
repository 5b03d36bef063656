#!/usr/bin/env bash
# Remakes tests/data/katago_old_versions/: KataGo's answers to every query
# of shared/vectors/nn/nn.jsonl (1 visit, 8 symmetries) with the fixture
# nets of model versions 3 to 7 (small random nets,
# `nn::old_version_fixture`, written by the project's model writer into a
# temporary folder: the tests build them again, so only their MD5s are
# kept, in fixtures.md5).
#
#   scripts/old_version_fixtures.sh [KATAGO_BINARY]
#
# The KataGo binary comes from the argument or KATAGO; its
# analysis_example.cfg from KATAGO_ANALYSIS_CFG, or from the KataGo source
# tree KATAGO_SRC. The config is changed as tests/data/katago_transformer_nn
# says: one analysis thread, one search thread, winrates for the side to
# move.
set -euo pipefail
katago="${1:-${KATAGO:-}}"
kcfg="${KATAGO_ANALYSIS_CFG:-${KATAGO_SRC:+$KATAGO_SRC/cpp/configs/analysis_example.cfg}}"
[ -n "$katago" ] || { echo "old_version_fixtures.sh: give the KataGo binary as the argument or in KATAGO" >&2; exit 2; }
[ -n "$kcfg" ] || { echo "old_version_fixtures.sh: set KATAGO_ANALYSIS_CFG to KataGo's analysis_example.cfg, or KATAGO_SRC to its source tree" >&2; exit 2; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$here/tests/data/katago_old_versions"
shared="${ENGINE_SHARED_DIR:-$here/../shared}"
vectors="$shared/vectors/nn/nn.jsonl"
[ -f "$vectors" ] || { echo "old_version_fixtures.sh: $vectors is missing (set ENGINE_SHARED_DIR)" >&2; exit 2; }
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT

mkdir -p "$work/nets"
ENGINE_OLD_FIXTURES="$work/nets" cargo test --release --lib write_old_version_fixtures -- --ignored --quiet

sed -e 's/^numSearchThreadsPerAnalysisThread = .*/numSearchThreadsPerAnalysisThread = 1/' \
    -e 's/^numAnalysisThreads = .*/numAnalysisThreads = 1/' \
    -e 's/^reportAnalysisWinratesAs/# reportAnalysisWinratesAs/' \
    -e "s#^logDir = .*#logDir = $work/logs#" "$kcfg" >"$work/analysis.cfg"
python3 -c 'import json,sys
for l in open(sys.argv[1]):
    print(json.dumps(json.loads(l)["query"]))' "$vectors" >"$work/queries.jsonl"

for v in 3 4 5 6 7; do
  "$katago" analysis -config "$work/analysis.cfg" -model "$work/nets/synthetic-v$v.bin.gz" \
    <"$work/queries.jsonl" >"$work/v$v.out" 2>"$work/v$v.err" || { tail -5 "$work/v$v.err"; exit 1; }
  # One line per query: the query as sent, KataGo's final response (id,
  # turnNumber, rootInfo, policy, ownership) and its rules warning, if any.
  python3 - "$work/queries.jsonl" "$work/v$v.out" "$out/synthetic-v$v.jsonl" <<'PY'
import json, sys
queries = [json.loads(l) for l in open(sys.argv[1])]
final, warning = {}, {}
for line in open(sys.argv[2]):
    r = json.loads(line)
    if "error" in r:
        sys.exit(f"KataGo error: {r}")
    if "warning" in r:
        warning[r["id"]] = r["warning"]
    elif not r.get("isDuringSearch"):
        final[r["id"]] = {k: r[k] for k in ("id", "turnNumber", "rootInfo", "policy", "ownership")}
with open(sys.argv[3], "w") as f:
    for q in queries:
        rec = {"query": q, "response": final[q["id"]]}
        if q["id"] in warning:
            rec["rulesWarning"] = warning[q["id"]]
        f.write(json.dumps(rec, separators=(",", ":")) + "\n")
PY
done
# The MD5 of each unpacked net KataGo answered for: the tests check that the
# net they build is the same.
for v in 3 4 5 6 7; do
  echo "$(gzip -dc "$work/nets/synthetic-v$v.bin.gz" | md5sum | cut -d' ' -f1)  synthetic-v$v"
done >"$out/fixtures.md5"
echo "old_version_fixtures.sh: wrote $out"
