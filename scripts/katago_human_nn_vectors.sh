#!/usr/bin/env bash
# Regenerates KataGo's reference outputs for the randomised human SL test net
# models/test-human-sl/b6c96-fson-mish-meta.bin.gz (made by
# scripts/make_human_test_net.py; this script does not remake it):
#
#   analysis_main.jsonl              katago analysis, the human net as the main model
#   analysis_main_b2c16.jsonl        the same queries for b2c16-fson-mish-meta.bin.gz
#   analysis_with_human_model.jsonl  katago analysis, g170 main model + -human-model
#   gtp_commands.txt / gtp_katago.txt katago gtp, g170 + -human-model, kata-raw-human-nn
#   error_cases.txt                  what KataGo says in the error cases (README)
#
#   KATAGO=../KataGo/cpp/build/katago KATAGO_SRC=../KataGo scripts/katago_human_nn_vectors.sh
#
# KATAGO: the katago 1.17.2 binary. KATAGO_SRC: its source tree (for
# cpp/configs/analysis_example.cfg and gtp_example.cfg). SHARED (default
# ../shared next to the repo) holds vectors/nn/nn.jsonl and
# models/g170-b6c96-s175395328-d26788732.bin.gz. PYTHON (default python3)
# is any python3 (only json is used).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
katago="${KATAGO:?set KATAGO to the katago binary}"
src="${KATAGO_SRC:?set KATAGO_SRC to the KataGo source tree}"
shared="${SHARED:-$root/../shared}"
py="${PYTHON:-python3}"
katago="$(cd "$(dirname "$katago")" && pwd)/$(basename "$katago")"
src="$(cd "$src" && pwd)"
shared="$(cd "$shared" && pwd)"

cd "$root"
outdir=tests/data/katago_human_nn
nets=models/test-human-sl
net=$nets/b6c96-fson-mish-meta.bin.gz
g170="$(realpath --relative-to="$root" "$shared/models/g170-b6c96-s175395328-d26788732.bin.gz")"
nnjsonl="$shared/vectors/nn/nn.jsonl"
[ -f "$net" ] || { echo "missing $net (make it with scripts/make_human_test_net.py)" >&2; exit 2; }
[ -f "$g170" ] || { echo "missing $g170" >&2; exit 2; }
[ -f "$nnjsonl" ] || { echo "missing $nnjsonl" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# analysis_example.cfg as for nn.jsonl: one analysis thread, one search thread,
# reportAnalysisWinratesAs commented out (SIDETOMOVE).
acfg="$work/analysis.cfg"
sed -e 's/^numAnalysisThreads = 2$/numAnalysisThreads = 1/' \
    -e 's/^numSearchThreadsPerAnalysisThread = 16$/numSearchThreadsPerAnalysisThread = 1/' \
    -e 's/^reportAnalysisWinratesAs = BLACK$/# reportAnalysisWinratesAs = BLACK/' \
    "$src/cpp/configs/analysis_example.cfg" > "$acfg"
[ "$(diff "$src/cpp/configs/analysis_example.cfg" "$acfg" | grep -c '^>')" = 3 ] || { echo "analysis_example.cfg edit failed" >&2; exit 2; }
gcfg="$src/cpp/configs/gtp_example.cfg"
alog=(-override-config "logDir=$work/analysis_logs")
glog=(-override-config "logDir=$work/gtp_logs")

# ---- queries ---------------------------------------------------------------
"$py" - "$nnjsonl" "$work" <<'EOF'
import json, sys
nnjsonl, work = sys.argv[1], sys.argv[2]
recs = {}
for line in open(nnjsonl):
    r = json.loads(line)
    recs[r["query"]["id"]] = r["query"]

def q(origid, profile, maxvisits=None):
    query = json.loads(json.dumps(recs[origid]))
    query["id"] = f"{origid}@{profile if profile else 'none'}"
    if maxvisits is not None:
        query["maxVisits"] = maxvisits
    ov = dict(query["overrideSettings"])
    if profile:
        ov["humanSLProfile"] = profile
    query["overrideSettings"] = ov
    return query

main = {
    "empty_19_japanese_k6.5": ["rank_20k", "rank_9d", "proyear_2022"],
    "moves_19_t60_json-rules": ["rank_20k", "rank_9d", "rank_5k_1d"],
    "moves_13_t40_japanese": ["rank_5k", "preaz_3k", "proyear_1850"],
    "moves_9x13_t51_json-rules": ["rank_1d", "preaz_2d_9k", "proyear_2022"],
    "empty_9_korean_k6.5": ["rank_5k", "rank_1d", "proyear_1850"],
    "handicap4_19_aga_whbN-1_k0.5": ["rank_5k_1d", "preaz_2d_9k", "rank_5k"],
    "pass1_9_chinese_k7.5_withHistory": ["rank_20k", "preaz_3k", "rank_9d"],
    "seki_9_tromp-taylor_k7.5": ["rank_5k_1d", "preaz_2d_9k", "proyear_2022"],
}
with open(f"{work}/q_main.jsonl", "w") as f:
    for origid, profiles in main.items():
        for p in profiles:
            f.write(json.dumps(q(origid, p)) + "\n")

# g170 main + human net: maxVisits 1 (root only, no moveInfos) and a few with
# maxVisits 8 so that moveInfos (with humanPrior) appear; one without profile.
human = [
    ("empty_19_japanese_k6.5", "rank_9d", None),
    ("moves_19_t60_json-rules", "rank_5k_1d", None),
    ("moves_19_t60_json-rules", "rank_20k", 8),
    ("moves_19_t60_json-rules", None, None),
    ("moves_13_t40_japanese", "preaz_3k", None),
    ("moves_9x13_t51_json-rules", "proyear_2022", 8),
    ("empty_9_korean_k6.5", "rank_20k", None),
    ("handicap4_19_aga_whbN-1_k0.5", "preaz_2d_9k", None),
    ("pass1_9_chinese_k7.5_withHistory", "proyear_1850", 8),
    ("seki_9_tromp-taylor_k7.5", "rank_1d", None),
]
with open(f"{work}/q_human.jsonl", "w") as f:
    for origid, p, mv in human:
        query = q(origid, p, mv)
        if mv is not None:
            query["id"] += f"@v{mv}"
        f.write(json.dumps(query) + "\n")
EOF

# Pairs each query line (as sent) with KataGo's final response of that id.
pair() {
  "$py" - "$1" "$2" "$3" <<'EOF'
import json, sys
qs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
resp = {}
for line in open(sys.argv[2]):
    line = line.strip()
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    if "error" in r or "warning" in r:
        sys.exit(f"KataGo error/warning: {line}")
    if r.get("isDuringSearch"):
        continue
    resp[r["id"]] = r
with open(sys.argv[3], "w") as f:
    for query in qs:
        f.write(json.dumps({"query": query, "response": resp[query["id"]]}) + "\n")
print(f"wrote {sys.argv[3]} ({len(qs)} records)")
EOF
}

# ---- 2a: human net as the main model ----------------------------------------
"$katago" analysis -config "$acfg" "${alog[@]}" -model "$net" \
  < "$work/q_main.jsonl" > "$work/r_main.jsonl" 2> "$work/e_main.txt"
pair "$work/q_main.jsonl" "$work/r_main.jsonl" "$outdir/analysis_main.jsonl"
# the same queries for the smaller second net, if present
net2=$nets/b2c16-fson-mish-meta.bin.gz
if [ -f "$net2" ]; then
  "$katago" analysis -config "$acfg" "${alog[@]}" -model "$net2" \
    < "$work/q_main.jsonl" > "$work/r_main2.jsonl" 2> "$work/e_main2.txt"
  pair "$work/q_main.jsonl" "$work/r_main2.jsonl" "$outdir/analysis_main_b2c16.jsonl"
fi

# ---- 2b: g170 main model, human net as -human-model -------------------------
"$katago" analysis -config "$acfg" "${alog[@]}" -model "$g170" -human-model "$net" \
  < "$work/q_human.jsonl" > "$work/r_human.jsonl" 2> "$work/e_human.txt"
pair "$work/q_human.jsonl" "$work/r_human.jsonl" "$outdir/analysis_with_human_model.jsonl"

# ---- 2c: GTP ----------------------------------------------------------------
cat > "$outdir/gtp_commands.txt" <<'EOF'
kata-get-models
kata-get-param humanSLProfile
kata-raw-human-nn 0
boardsize 19
clear_board
komi 7.5
play B Q16
play W D4
play B Q3
play W D16
play B C3
kata-set-param humanSLProfile rank_5k
kata-get-param humanSLProfile
kata-raw-human-nn 0
kata-raw-human-nn all
kata-raw-nn 0
kata-set-param humanSLProfile rank_9d
kata-raw-human-nn 0
kata-raw-human-nn B 0
kata-set-param humanSLProfile rank_30k
kata-get-param humanSLProfile
kata-raw-human-nn 0 0.5
boardsize 9
clear_board
komi 7
play B E5
play W C3
play B G7
play W G3
kata-set-param humanSLProfile preaz_2d_9k
kata-raw-human-nn 0
kata-raw-human-nn all
kata-set-param humanSLProfile proyear_1850
kata-raw-human-nn 5
kata-raw-nn all
kata-set-param humanSLProfile
kata-get-param humanSLProfile
kata-raw-human-nn 0
kata-get-models
quit
EOF
"$katago" gtp -config "$gcfg" "${glog[@]}" -model "$g170" -human-model "$net" \
  < "$outdir/gtp_commands.txt" > "$outdir/gtp_katago.txt" 2> "$work/gtp_stderr.txt"
echo "wrote $outdir/gtp_katago.txt"

# ---- error cases --------------------------------------------------------------
q9='{"id":"q9","moves":[],"rules":"japanese","komi":6.5,"boardXSize":9,"boardYSize":9,"maxVisits":1}'
errfile="$outdir/error_cases.txt"
# case TITLE STDIN CMD...: records exit status, stdout and stderr (timestamps
# stripped, config echo and startup chatter dropped)
case_() {
  local title="$1" input="$2"; shift 2
  local rc=0
  # (subshell, so bash's "Aborted" job notice for SIGABRT exits stays quiet)
  ( printf '%s\n' "$input" | "$@" > "$work/c_out.txt" 2> "$work/c_err.txt" ) 2>/dev/null || rc=$?
  {
    echo "=== $title"
    echo "\$ ${*/#$katago/katago}" | sed -e "s#$work/[a-z_]*\\.cfg#<cfg>#g" -e "s#$src/cpp/configs/#<configs>/#g" -e "s# -override-config logDir=$work/[a-z_]*##g"
    echo "stdin:"; printf '%s\n' "$input" | sed 's/^/  /'
    echo "exit status: $rc"
    echo "stdout:"; sed 's/^/  /' "$work/c_out.txt"
    echo "stderr (filtered):"
    sed -E 's/^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}[+-][0-9]{4}: //' "$work/c_err.txt" \
      | grep -E -i 'error|warning|terminate|what\(\)|humanSL|SGFMetadata|profile' \
      | grep -v -E '^(# |[a-zA-Z]+ = )' | sed 's/^/  /' || true
    echo
  } >> "$errfile"
}
: > "$errfile"
echo "# KataGo 1.17.2 in the error cases of README.md; made by scripts/katago_human_nn_vectors.sh" >> "$errfile"
echo >> "$errfile"
case_ "(i) human net as main model, no humanSLProfile: gtp" \
  "$(printf 'kata-get-models\nkata-raw-nn 0\nquit')" \
  "$katago" gtp -config "$gcfg" "${glog[@]}" -model "$net"
case_ "(i) human net as main model, no humanSLProfile: gtp genmove" \
  "$(printf 'genmove b\nquit')" \
  "$katago" gtp -config "$gcfg" "${glog[@]}" -model "$net"
case_ "(i) human net as main model, profile set at runtime: gtp" \
  "$(printf 'kata-set-param humanSLProfile rank_5k\nboardsize 9\nkata-raw-nn 0\nkata-raw-human-nn 0\nquit')" \
  "$katago" gtp -config "$gcfg" "${glog[@]}" -model "$net"
case_ "(i) human net as main model, no humanSLProfile: analysis" \
  "$q9" \
  "$katago" analysis -config "$acfg" "${alog[@]}" -model "$net"
case_ "(ii) humanSLChosenMoveProp in the config without -human-model: gtp" \
  "$(printf 'name\nquit')" \
  "$katago" gtp -config "$gcfg" "${glog[@]}" -model "$g170" -override-config humanSLChosenMoveProp=0.5
case_ "(ii) humanSLChosenMoveProp in the config without -human-model: analysis" \
  "$q9" \
  "$katago" analysis -config "$acfg" "${alog[@]}" -model "$g170" -override-config humanSLChosenMoveProp=0.5
case_ "(ii) humanSLChosenMoveProp with the human net as MAIN model (no -human-model): gtp" \
  "$(printf 'name\nquit')" \
  "$katago" gtp -config "$gcfg" "${glog[@]}" -model "$net" -override-config humanSLProfile=rank_5k,humanSLChosenMoveProp=0.5
case_ "(ii)/(iii) overrideSettings errors, g170 only: analysis" \
  "$(printf '%s\n' \
     '{"id":"prop","moves":[],"rules":"japanese","komi":6.5,"boardXSize":9,"boardYSize":9,"maxVisits":1,"overrideSettings":{"humanSLChosenMoveProp":0.5}}' \
     '{"id":"profile_unused","moves":[],"rules":"japanese","komi":6.5,"boardXSize":9,"boardYSize":9,"maxVisits":1,"overrideSettings":{"humanSLProfile":"rank_5k"}}' \
     '{"id":"rank_30k","moves":[],"rules":"japanese","komi":6.5,"boardXSize":9,"boardYSize":9,"maxVisits":1,"overrideSettings":{"humanSLProfile":"rank_30k"}}')" \
  "$katago" analysis -config "$acfg" "${alog[@]}" -model "$g170"
case_ "(iii) unknown profile rank_30k in overrideSettings, human net main: analysis" \
  '{"id":"rank_30k","moves":[],"rules":"japanese","komi":6.5,"boardXSize":9,"boardYSize":9,"maxVisits":1,"overrideSettings":{"humanSLProfile":"rank_30k"}}' \
  "$katago" analysis -config "$acfg" "${alog[@]}" -model "$net"
case_ "(iii) unknown profile rank_30k in the config: gtp" \
  "$(printf 'name\nquit')" \
  "$katago" gtp -config "$gcfg" "${glog[@]}" -model "$g170" -human-model "$net" -override-config humanSLProfile=rank_30k
case_ "(iii) unknown profile rank_30k via kata-set-param / kata-set-params: gtp" \
  "$(printf 'kata-set-param humanSLProfile rank_5k\nkata-set-param humanSLProfile rank_30k\nkata-get-param humanSLProfile\nkata-set-params {"humanSLProfile":"rank_30k"}\nkata-get-param humanSLProfile\nquit')" \
  "$katago" gtp -config "$gcfg" "${glog[@]}" -model "$g170" -human-model "$net"
case_ "-human-model without humanSLProfile: analysis (startup warning), query without profile" \
  "$q9" \
  "$katago" analysis -config "$acfg" "${alog[@]}" -model "$g170" -human-model "$net"
case_ "query_models action, g170 + -human-model: analysis" \
  '{"id":"models","action":"query_models"}' \
  "$katago" analysis -config "$acfg" "${alog[@]}" -model "$g170" -human-model "$net"
echo "wrote $errfile"
