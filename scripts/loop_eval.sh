#!/usr/bin/env bash
# Strength per generation of a learning run's nets (`engine learn` on a folder):
# every EVERY-th accepted net (and the newest) plays GAMES games against a
# fixed opponent (colours alternating, 9x9, komi 7, Chinese rules, GNU Go
# scores) with ../shared/tools/gtp_match.py. OPPONENT is `gnugo:LEVEL` (GNU Go
# at that level; apt-get install gnugo) or `net:NAME` (the loop's net
# models/NAME at the same visits, e.g. the random net of generation 0).
# Appends to BASE/strength.tsv (pairs already there are skipped, so it can run
# again as the loop goes on) and redraws BASE/strength.svg.
#
#   scripts/loop_eval.sh BASE [GAMES=20] [VISITS=100] [OPPONENT=gnugo:1] [EVERY=3]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
base="${1:?usage: scripts/loop_eval.sh BASE [GAMES] [VISITS] [LEVEL] [EVERY]}"
games="${2:-20}"; visits="${3:-100}"; opponent_spec="${4:-gnugo:1}"; every="${5:-3}"
engine="${ENGINE:-$here/target/release/engine}"
shared="${ENGINE_SHARED_DIR:-$here/../shared}"
[ -d "$shared" ] || { echo "loop_eval.sh: the reference data (KataGo's nets, vectors, tools) is not at $shared: put shared/ beside the checkout or set ENGINE_SHARED_DIR" >&2; exit 2; }
match="$shared/tools/gtp_match.py"
tsv="$base/strength.tsv"
[ -f "$tsv" ] || printf 'model\tgeneration\topponent\tvisits\tgames\tscore\twin_rate\telo_vs_opponent\n' > "$tsv"
export OMP_WAIT_POLICY=PASSIVE

# The accepted nets, oldest first, as the run's store orders them.
mapfile -t nets < <("$engine" learn -store "$base" status -json \
  | python3 -c 'import json, sys; print("\n".join(json.load(sys.stdin)["accepted"]))')
last=$(( ${#nets[@]} - 1 ))
for i in "${!nets[@]}"; do
  net="${nets[$i]}"
  if [ $(( i % every )) -ne 0 ] && [ "$i" -ne "$last" ]; then continue; fi
  bot() { echo "$engine gtp -model $base/models/$1/model.bin.gz -config $here/configs/gtp.toml -override-config maxVisits=$visits,numSearchThreads=1,rules=chinese"; }
  case "$opponent_spec" in
    gnugo:*) opponent="gnugo-level${opponent_spec#gnugo:}"
             opponent_cmd="gnugo --mode gtp --level ${opponent_spec#gnugo:} --chinese-rules" ;;
    net:*)   opponent="${opponent_spec#net:}"; opponent_cmd=$(bot "$opponent")
             [ "$opponent" = "$net" ] && continue ;;
    *) echo "OPPONENT must be gnugo:LEVEL or net:NAME" >&2; exit 2 ;;
  esac
  if grep -q -P "^$net\t.*\t$opponent\t$visits\t" "$tsv"; then continue; fi
  out=$(python3 "$match" \
    --black "$(bot "$net")" --white "$opponent_cmd" \
    --referee "gnugo --mode gtp --chinese-rules" \
    --games "$games" --size 9 --komi 7 --alternate --sgf-dir "$base/eval-sgfs/$net-$opponent" 2>&1 || true)
  line=$(tail -n 1 <<<"$out")
  # "A wins 7/10 (70.0%) +- 14.5%, ..." (draws count 1/2)
  score=$(sed -E 's#^A wins ([0-9.]+)/([0-9]+).*#\1#' <<<"$line")
  n=$(sed -E 's#^A wins ([0-9.]+)/([0-9]+).*#\2#' <<<"$line")
  if ! result=$(python3 "$here/scripts/match_score.py" "$score" "$n" 2>/dev/null); then
    echo "$net (generation $i) vs $opponent: no result, not recorded: $line" >&2
    continue
  fi
  printf '%s\t%s\t%s\t%s\t%s\n' "$net" "$i" "$opponent" "$visits" "$result" >> "$tsv"
  echo "$net (generation $i) vs $opponent: $line" >&2
done
python3 "$here/scripts/plot_strength.py" "$tsv" "$base/strength.svg"
