#!/usr/bin/env bash
# Loads one model file in KataGo and in `engine` and compares `kata-raw-nn 0`
# (symmetry 0, no search) on a few positions: prints both value lines and the
# largest policy and ownership differences.
#
#   scripts/rawnn_katago_vs_engine.sh MODEL.bin.gz [KATAGO_BINARY]
#
# The KataGo binary comes from the second argument or KATAGO; its
# gtp_example.cfg from KATAGO_CFG, or from the KataGo source tree KATAGO_SRC.
set -euo pipefail
model="${1:?usage: rawnn_katago_vs_engine.sh MODEL.bin.gz [KATAGO_BINARY]}"
katago="${2:-${KATAGO:-}}"
kcfg="${KATAGO_CFG:-${KATAGO_SRC:+$KATAGO_SRC/cpp/configs/gtp_example.cfg}}"
[ -n "$katago" ] || { echo "rawnn_katago_vs_engine.sh: give the KataGo binary as the second argument or in KATAGO" >&2; exit 2; }
[ -n "$kcfg" ] || { echo "rawnn_katago_vs_engine.sh: set KATAGO_CFG to KataGo's gtp_example.cfg, or KATAGO_SRC to its source tree" >&2; exit 2; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
cmds=$'boardsize 19\nclear_board\nkata-raw-nn 0\nplay b Q16\nplay w D4\nplay b C16\nkata-raw-nn 0\nquit\n'
"$katago" gtp -model "$model" -config "$kcfg" \
  -override-config "nnCacheSizePowerOfTwo=10,numSearchThreads=1,logToStderr=false,logDir=$work/kglogs" \
  <<<"$cmds" >"$work/katago.txt" 2>"$work/katago.err" || { tail -5 "$work/katago.err"; exit 1; }
"$here/target/release/engine" gtp -model "$model" -config "$here/configs/gtp.toml" \
  <<<"$cmds" >"$work/engine.txt" 2>"$work/engine.err" || { tail -5 "$work/engine.err"; exit 1; }
python3 - "$work/katago.txt" "$work/engine.txt" <<'PY'
import sys
def parse(path):
    out, cur, section = [], None, None
    for line in open(path):
        w = line.split()
        if not w: continue
        if w[0] == "=" and len(w) > 1 and w[1] == "symmetry":
            cur = {"policy": [], "ownership": []}; out.append(cur); section = None; continue
        if cur is None: continue
        if w[0] in ("policy", "ownership", "policyPass"):
            section = w[0]
            if w[0] == "policyPass" and len(w) > 1: cur["pass"] = float(w[1]); section = None
            continue
        if section in ("policy", "ownership") and all(x.replace('.','',1).replace('-','',1).replace('e','',1).isdigit() or x == "NAN" for x in w):
            cur[section] += [float(x) if x != "NAN" else float("nan") for x in w]; continue
        if len(w) == 2:
            try: cur[w[0]] = float(w[1]); section = None
            except ValueError: pass
    return out
k, e = parse(sys.argv[1]), parse(sys.argv[2])
assert len(k) == len(e) and k, f"positions: katago {len(k)}, engine {len(e)}"
for i, (a, b) in enumerate(zip(k, e)):
    keys = [x for x in ("whiteWin", "whiteLoss", "whiteLead", "whiteScoreSelfplay", "varTimeLeft", "shorttermWinlossError", "shorttermScoreError") if x in a]
    print(f"position {i}:")
    for x in keys:
        print(f"  {x:22s} katago {a[x]:10.4f}  engine {b.get(x, float('nan')):10.4f}")
    for s in ("policy", "ownership"):
        pairs = [(p, q) for p, q in zip(a[s], b[s]) if p == p and q == q]
        if pairs:
            print(f"  {s:22s} {len(pairs)} points, max |diff| {max(abs(p - q) for p, q in pairs):.2e}")
PY
