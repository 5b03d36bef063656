#!/usr/bin/env bash
# The strength ladder of a net (issue 34): the net at fixed visits against
# GNU Go 3.8, Pachi 12 at fixed playouts, or another net, on any board size,
# through ../shared/tools/gtp_match.py (colours alternating, Chinese rules,
# GNU Go as the referee that scores finished games).
#
#   scripts/ladder.sh [RUNG ...]
#
# A RUNG is SIZE:gnugo:LEVEL, SIZE:pachi:PLAYOUTS or SIZE:net:PATH; without
# rungs, the issue's ladder: 9:gnugo:10 9:pachi:10000 13:gnugo:10 19:gnugo:10.
# From the environment (all optional but PACHI for pachi rungs):
#   NET       the net (default: none given, so the engine's default net)
#   HOURS     the net's training time in hours, for the plot (default: read
#             from models/training-run/generations.tsv when the net is one of
#             that run's generations, else left empty and not plotted)
#   VISITS    the engine's visits per move (default 400)
#   GAMES     games per rung (default 100 on 9x9, 40 on 13x13, 10 larger)
#   PARALLEL  matches at once per rung, the games split between them
#             (default: the number of cores)
#   KOMI      komi (default 7 on 9x9, 7.5 larger)
#   GNUGO     GNU Go 3.8 (default gnugo on the PATH, else /usr/games/gnugo;
#             apt-get install gnugo)
#   PACHI     Pachi's Go engine, built from its source (pasky/pachi) with
#             `make DCNN=0 JOSEKIFIX=0 BUILD_KATAGO=0`
#   OUT       where SGFs and match logs go (default a new temporary folder)
#   ENGINE    (default target/release/engine), SHARED (default
#             $ENGINE_SHARED_DIR, else ../shared)
# Appends one row per rung to models/ladder.tsv and redraws models/ladder.md
# (the table) and models/ladder.svg (Elo by training hours) with
# scripts/plot_ladder.py.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
engine="${ENGINE:-$root/target/release/engine}"
shared="${SHARED:-${ENGINE_SHARED_DIR:-$root/../shared}}"
[ -d "$shared" ] || { echo "ladder.sh: no shared data at $shared (set SHARED or ENGINE_SHARED_DIR)" >&2; exit 2; }
[ -x "$engine" ] || { echo "ladder.sh: no engine at $engine (./setup.sh cargo build --release, or set ENGINE)" >&2; exit 2; }
gnugo="${GNUGO:-$(command -v gnugo || echo /usr/games/gnugo)}"
[ -x "$gnugo" ] || { echo "ladder.sh: no GNU Go at $gnugo (apt-get install gnugo, or set GNUGO)" >&2; exit 2; }
visits="${VISITS:-400}"
parallel="${PARALLEL:-$(nproc)}"
out="${OUT:-$(mktemp -d)}"
tsv="$root/models/ladder.tsv"
rungs=("$@")
[ ${#rungs[@]} -gt 0 ] || rungs=(9:gnugo:10 9:pachi:10000 13:gnugo:10 19:gnugo:10)
export OMP_WAIT_POLICY=PASSIVE

# The net's name as the engine loads it (KataGo's NAME-sSAMPLES-dROWS).
model_args=()
[ -n "${NET:-}" ] && model_args=(-model "$NET")
net_name=$(printf 'name\nquit\n' | "$engine" gtp "${model_args[@]}" 2>&1 >/dev/null \
  | sed -n -E 's/^Loaded model ([^ ]+) .*/\1/p' | head -n 1)
[ -n "$net_name" ] || { echo "ladder.sh: the engine did not load ${NET:-its default net}" >&2; exit 2; }
hours="${HOURS:-}"
gens="$root/models/training-run/generations.tsv"
if [ -z "$hours" ] && [ -f "$gens" ]; then
  # The run's generation times up to the one that made this net.
  hours=$(awk -F'\t' -v net="$net_name" 'NR > 1 { s += $7; if ($6 == net) { printf "%.2f", s / 3600; exit } }' "$gens")
fi
cpu=$(lscpu | sed -n -E 's/^Model name: +//p' | head -n 1)
simd=$(grep -o -m1 -w -E 'avx512f' /proc/cpuinfo >/dev/null && echo AVX-512 || echo AVX2)
[ -f "$tsv" ] || printf 'model\thours\tsize\topponent\tvisits\tgames\tscore\twin_rate\telo_vs_opponent\tdate\tmachine\n' > "$tsv"
echo "ladder: $net_name (${hours:-?} h), $visits visits, SGFs and logs in $out" >&2

engine_cmd() {
  echo "$engine gtp ${model_args[*]} -config $root/configs/gtp.toml -override-config maxVisits=$visits,numSearchThreads=1,rules=chinese"
}

for rung in "${rungs[@]}"; do
  IFS=: read -r size kind arg <<<"$rung"
  case "$size" in ''|*[!0-9]*) echo "ladder.sh: bad rung $rung (SIZE:KIND:ARG)" >&2; exit 2 ;; esac
  case "$kind" in
    gnugo) opponent="gnugo-level$arg"; opponent_cmd="$gnugo --mode gtp --level $arg --chinese-rules" ;;
    pachi) [ -x "${PACHI:-}" ] || { echo "ladder.sh: set PACHI to Pachi's binary for $rung" >&2; exit 2; }
           [ "$arg" -ge 500 ] 2>/dev/null || { echo "ladder.sh: Pachi plays 500 playouts or more ($rung)" >&2; exit 2; }
           opponent="pachi-$arg"; opponent_cmd="$PACHI -t =$arg threads=1" ;;
    net)   opponent="$(basename "$arg")"
           opponent_cmd="$engine gtp -model $arg -config $root/configs/gtp.toml -override-config maxVisits=$visits,numSearchThreads=1,rules=chinese" ;;
    *) echo "ladder.sh: bad rung $rung (gnugo, pachi or net)" >&2; exit 2 ;;
  esac
  default_games=10; [ "$size" -le 13 ] && default_games=40; [ "$size" -le 9 ] && default_games=100
  games="${GAMES:-$default_games}"
  komi="${KOMI:-7.5}"; [ "$size" -le 9 ] && komi="${KOMI:-7}"
  # Split the games into PARALLEL matches of an even number of games (so
  # colours stay balanced in each), run at once.
  per=$(( (games / parallel + 1) / 2 * 2 )); [ "$per" -ge 2 ] || per=2
  dir="$out/$size-$opponent"
  mkdir -p "$dir"
  pids=(); left=$games; k=0
  while [ "$left" -gt 0 ]; do
    n=$(( left < per ? left : per )); left=$(( left - n )); k=$(( k + 1 ))
    python3 "$shared/tools/gtp_match.py" --black "$(engine_cmd)" --white "$opponent_cmd" \
      --referee "$gnugo --mode gtp --chinese-rules" --games "$n" --size "$size" --komi "$komi" \
      --alternate --sgf-dir "$dir/part$k" > "$dir/part$k.log" 2>&1 &
    pids+=($!)
  done
  # gtp_match.py exits non-zero when a match had a crash, a timeout, an
  # illegal move or a protocol error: such a rung is not recorded (a
  # crashing opponent would otherwise hand the net every game).
  failed=0
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
  if [ "$failed" -ne 0 ]; then
    echo "ladder.sh: a match of $rung failed its checks (crash, timeout, illegal move or protocol error); not recorded. Logs: $dir/part*.log" >&2
    tail -q -n 1 "$dir"/part*.log >&2
    exit 1
  fi
  # Each log's last line: "A wins 7/10 (70.0%) +- 14.5%, ..." (draws count 1/2).
  read -r score n < <(for log in "$dir"/part*.log; do tail -n 1 "$log"; done \
    | sed -n -E 's#^A wins ([0-9.]+)/([0-9]+).*#\1 \2#p' \
    | awk '{ s += $1; n += $2 } END { print s + 0, n + 0 }')
  if [ "$n" -eq 0 ]; then
    echo "ladder.sh: $rung played no game; see $dir/part*.log" >&2; exit 1
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$net_name" "$hours" "$size" "$opponent" "$visits" \
    "$(python3 "$root/scripts/match_score.py" "$score" "$n")" "$(date -u +%F)" "$cpu, $simd" >> "$tsv"
  echo "ladder: ${size}x$size vs $opponent: $score of $n" >&2
done
python3 "$root/scripts/plot_ladder.py" "$root/models"
