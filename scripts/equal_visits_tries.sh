#!/usr/bin/env bash
# Looking for an edge at equal visits (issue 29's stretch): each setting
# against KataGo's defaults, the same net and visits on both sides, with
# `engine match` (paired openings, colours swapped), one match per setting.
#
#   scripts/equal_visits_tries.sh SETTINGS [SETTINGS ...]
#
# SETTINGS is one bot's `key=value[,key=value...]` (search keys, KataGo's
# names), e.g. `cpuctExploration=0.7` or
# `cpuctExploration=0.7,numSymmetriesToSample=8`. The i-th match uses seed
# SEED+i. From the environment (all optional):
#   NET     the net (default the engine's default net in models/)
#   VISITS  visits per move on both sides (default 100)
#   GAMES   games per setting (default 400; the most, with SPRT)
#   SPRT    e.g. 0,30: stop each match by fishtest's SPRT (elo0,elo1)
#   SEED    the first seed (default 300)
#   SIZE, KOMI  board and komi (default 9 and 7)
#   THREADS games at once (default 8; each game searches with one thread)
#   OUT     where SGFs, tables and logs go (default a new temporary folder)
#   ENGINE  (default target/release/engine)
# Prints one line per setting: the setting, then the pair's W-L-D, score,
# Elo and 95% interval from the tuned bot's view (and the SPRT's verdict).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
engine="${ENGINE:-$root/target/release/engine}"
[ -x "$engine" ] || { echo "equal_visits_tries.sh: no engine at $engine (./setup.sh cargo build --release, or set ENGINE)" >&2; exit 2; }
[ $# -gt 0 ] || { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
net="${NET:-$(ls "$root"/models/*.bin.gz | head -n 1)}"
visits="${VISITS:-100}"
games="${GAMES:-400}"
seed="${SEED:-300}"
out="${OUT:-$(mktemp -d)}"
sprt=()
[ -n "${SPRT:-}" ] && sprt=(-sprt "$SPRT")
echo "equal visits: $(basename "$net"), $visits visits, up to $games games per setting, $(lscpu | sed -n -E 's/^Model name: +//p' | head -n 1); in $out" >&2
i=0
for settings in "$@"; do
  i=$((i + 1))
  dir="$out/try-$i"
  mkdir -p "$dir"
  "$engine" match -bot "tuned=$net,maxVisits=$visits,$settings" -bot "base=$net,maxVisits=$visits" \
    -games "$games" -boardsize "${SIZE:-9}" -komi "${KOMI:-7}" -game-threads "${THREADS:-8}" \
    -seed $((seed + i)) "${sprt[@]}" -sgf-output-dir "$dir" > "$dir/table.txt" 2> "$dir/log.txt"
  pair=$(grep -A1 '^pair' "$dir/table.txt" | tail -n 1 | sed -E 's/^tuned vs base +//')
  verdict=$(sed -n -E 's/^SPRT .*: (H[01] accepted|undecided).*/\1/p' "$dir/table.txt")
  echo "$settings	$pair${verdict:+	$verdict}"
done
