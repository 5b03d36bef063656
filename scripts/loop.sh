#!/usr/bin/env bash
# The learning loop on one machine, in turns: self-play -> shuffle -> train ->
# export -> (gatekeeper) -> self-play with the new net ... as KataGo's
# python/selfplay/synchronous_loop.sh does, over `engine`'s subcommands.
#
#   scripts/loop.sh BASE_DIR [LOOP_CONFIG]      (default configs/loop-9x9.conf)
#
# All state lives in BASE_DIR, so the loop can be killed at any moment
# (kill -9 included) and started again with the same command; it goes on
# from the last whole file:
#   models/<name>/model.bin.gz      accepted nets; self-play uses the newest
#   modelstobetested/<name>/        nets exported by training, not yet gated
#   rejectedmodels/<name>/          nets the gatekeeper turned down
#   selfplay/<name>/{tdata,sgfs}/   self-play data of each net
#   shuffleddata/<stamp>/           shuffled training window (train.json when whole)
#   train/                          checkpoint, metrics.jsonl, loss.svg
#   gatekeeper/                     gating games and gatekeeper_log
#   loop.log, generations.tsv       what happened, one line per generation
# Self-play only reads models/ and writes selfplay/; training only reads
# selfplay/ (through shuffleddata/) and writes models/: the layout lets
# self-play run on other machines that share BASE_DIR later.
#
# The loop stops after MAX_GENERATIONS generations or TIME_BUDGET_MINUTES
# (counted per run of this script), whichever comes first. ENGINE (default
# target/release/engine) is run afresh for every stage, so a rebuilt binary
# is picked up at the next stage.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
base="${1:?usage: scripts/loop.sh BASE_DIR [LOOP_CONFIG]}"
config="${2:-$here/configs/loop-9x9.conf}"
engine="${ENGINE:-$here/target/release/engine}"
# shellcheck source=../configs/loop-9x9.conf
source "$config"

mkdir -p "$base"/{models,modelstobetested,rejectedmodels,selfplay,shuffleddata,train,gatekeeper}
base="$(cd "$base" && pwd)"
cp "$config" "$base/loop.conf.last"
log() { echo "[$(date -u +%FT%TZ)] $*" | tee -a "$base/loop.log" >&2; }
[ -x "$engine" ] || { echo "no engine binary at $engine (build it: ./setup.sh cargo build --release)" >&2; exit 2; }
export OMP_WAIT_POLICY=PASSIVE

start_time=$(date +%s)
out_of_time() { [ $(( $(date +%s) - start_time )) -ge $(( TIME_BUDGET_MINUTES * 60 )) ]; }
generation() { find "$base/models" "$base/rejectedmodels" -mindepth 1 -maxdepth 1 -type d | wc -l; }
newest_model() { ls -1t "$base/models" | head -n 1; }
rows_of() { # data rows under a dir, from the npz member shapes (fast: header only)
  python3 "$here/scripts/npz_rows.py" "$1"
}

# Generation 0: a net with random weights (KataGo's fixed-variance init),
# written whole by the run store as models/<kind>-random/model.bin.gz.
# (Leftovers of older versions such as `.random.tmp` do not count: plain
# `ls` skips dot names, and the engine never takes them for nets.)
if [ -z "$(ls "$base/models")" ]; then
  "$engine" export -random-init "$MODEL_KIND" -seed "$SEED" \
    -export-dir "$base/models/${MODEL_KIND}-random" -model-name model
  log "generation 0: random $MODEL_KIND"
fi
if [ ! -f "$base/generations.tsv" ]; then
  printf 'generation\tmodel\tselfplay_games\tdata_rows\ttrain_samples\tnew_model\taccepted\tseconds\n' \
    > "$base/generations.tsv.tmp"
  mv "$base/generations.tsv.tmp" "$base/generations.tsv"
fi

# Gates every net in modelstobetested/ (or accepts it unplayed when gating
# is off: 0 games); sets $accepted to the last one accepted. The gatekeeper
# moves the nets through the run store (logged decision, create-if-absent
# copy, delete), so a crash in between is finished by the next call. Runs
# before each generation too, so a net exported just before a crash is not
# left behind.
gate_pending() {
  accepted=""
  local cand gate_overrides="$GATEKEEPER_OVERRIDES"
  [ "$GATEKEEPER" = 1 ] || gate_overrides="numGamesPerGating=0"
  for cand in $(ls -1 "$base/modelstobetested"); do
    case "$cand" in *.tmp|.*) continue ;; esac
    [ -f "$base/modelstobetested/$cand/model.bin.gz" ] || continue
    log "gatekeeper: $cand vs $(newest_model)"
    "$engine" gatekeeper -config "$here/configs/gatekeeper.toml" -override-config "$gate_overrides" \
      -test-models-dir "$base/modelstobetested" -accepted-models-dir "$base/models" \
      -rejected-models-dir "$base/rejectedmodels" -sgf-output-dir "$base/gatekeeper/sgfs" \
      -quit-if-no-nets-to-test 2>>"$base/gatekeeper.log"
    if [ -d "$base/models/$cand" ]; then accepted="$cand"; fi
  done
}

# What the generation in flight is (number, self-play net, games, rows, start
# time), written before training: a net that training exports just before a
# crash still gets its generations.tsv line when the loop starts again.
pending="$base/generation.pending"
# Appends a generations.tsv line for every trained net in models/ or
# rejectedmodels/ that has none yet (oldest first, by training samples). The
# newest takes the in-flight generation's facts; any other (only after a
# crash) gets "?" where they are lost. With "recovered", seconds are "?" too
# (the wall time would include the time the loop was down).
record_generations() {
  local how="${1:-live}" p_gen="?" p_model="?" p_games="?" p_rows="?" p_t0="" nets net newest verdict
  # shellcheck disable=SC1090
  if [ -f "$pending" ]; then source "$pending"; fi
  nets=$( { ls -1 "$base/models"; ls -1 "$base/rejectedmodels"; } \
    | sed -n 's/^\(.*-s\([0-9][0-9]*\)-d[0-9][0-9]*\)$/\2\t\1/p' | sort -n | cut -f2 \
    | while read -r net; do cut -f6 "$base/generations.tsv" | grep -qxF "$net" || echo "$net"; done)
  [ -n "$nets" ] || return 0
  newest=$(echo "$nets" | tail -n 1)
  for net in $nets; do
    local gen_f="?" model_f="?" games_f="?" rows_f="?" secs="?" acc=none
    if [ "$net" = "$newest" ]; then
      gen_f=$p_gen; model_f=$p_model; games_f=$p_games; rows_f=$p_rows
      if [ "$how" = live ] && [ -n "$p_t0" ]; then secs=$(( $(date +%s) - p_t0 )); fi
    fi
    if [ -d "$base/models/$net" ]; then acc=$net; fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$gen_f" "$model_f" "$games_f" "$rows_f" \
      "$(echo "$net" | sed 's/.*-s\([0-9]*\)-d.*/\1/')" "$net" "$acc" "$secs" >> "$base/generations.tsv"
    if [ "$acc" = none ]; then verdict=rejected; else verdict=accepted; fi
    log "gen $gen_f: $net $verdict ($how)"
  done
  rm -f "$pending"
}

failures=0
stage_failed() {
  failures=$((failures + 1))
  log "gen $gen: $1 failed (see $1.log), $failures in a row"
  if [ "$failures" -ge 3 ]; then log "stop: $1 failed 3 times in a row"; exit 1; fi
  sleep 5
}

while true; do
  gate_pending
  record_generations recovered
  gen=$(generation)
  if [ "$gen" -gt "$MAX_GENERATIONS" ] || out_of_time; then
    log "stop: generation $gen, budget reached"; break
  fi
  t0=$(date +%s)
  current=$(newest_model)

  # 1. Self-play with the newest accepted net. A failed stage is logged and
  #    the generation starts over (whole files only are ever left behind);
  #    after 3 failures in a row the loop stops, so a real fault is not hidden.
  log "gen $gen: selfplay $GAMES_PER_GENERATION games with $current"
  if ! "$engine" selfplay -config "$here/configs/selfplay.toml" -override-config "$SELFPLAY_OVERRIDES" \
    -models-dir "$base/models" -output-dir "$base/selfplay" \
    -max-games-total "$GAMES_PER_GENERATION" 2>>"$base/selfplay.log"; then
    stage_failed selfplay; continue
  fi
  total_rows=$(rows_of "$base/selfplay")

  # 2. Shuffle the window of the newest rows into a fresh dir; train uses the
  #    newest whole one (with train.json). Older windows are removed.
  stamp=$(date -u +%Y%m%d-%H%M%S)
  out="$base/shuffleddata/$stamp"
  log "gen $gen: shuffle ($total_rows rows in all)"
  # Exit code 3: fewer rows than -min-rows, nothing written (more
  # self-play); any other failure counts as a failed stage. Older windows
  # are removed only once this one is whole (train.json, written last).
  shuffle_status=0
  "$engine" shuffle "$base/selfplay" -out-dir "$out/train" -out-tmp-dir "$base/shuffle-scratch" \
    -min-rows "$SHUFFLE_MIN_ROWS" -keep-target-rows "$SHUFFLE_KEEP_TARGET_ROWS" \
    -expand-window-per-row "$SHUFFLE_EXPAND_WINDOW_PER_ROW" \
    -taper-window-exponent "$SHUFFLE_TAPER_WINDOW_EXPONENT" -taper-window-scale "$SHUFFLE_MIN_ROWS" \
    -approx-rows-per-out-file 20000 >>"$base/shuffle.log" 2>&1 || shuffle_status=$?
  if [ "$shuffle_status" = 3 ]; then
    log "gen $gen: not enough rows yet for training, more self-play"; continue
  elif [ "$shuffle_status" != 0 ]; then
    stage_failed shuffle; continue
  fi
  find "$base/shuffleddata" -mindepth 1 -maxdepth 1 -type d ! -name "$stamp" -exec rm -rf {} +

  printf 'p_gen=%q p_model=%q p_games=%q p_rows=%q p_t0=%q\n' "$gen" "$current" \
    "$GAMES_PER_GENERATION" "$total_rows" "$t0" > "$pending.tmp"
  mv "$pending.tmp" "$pending"

  # 3. Train on it and export: modelstobetested/<prefix>-s<samples>-d<rows>/model.bin.gz
  log "gen $gen: train $TRAIN_SAMPLES_PER_GENERATION samples"
  "$engine" train -traindir "$base/train" -latestdatadir "$base/shuffleddata" \
    -model-kind "$MODEL_KIND" -pos-len "$POS_LEN" -batch-size "$TRAIN_BATCH_SIZE" \
    -samples-per-epoch "$TRAIN_SAMPLES_PER_GENERATION" -max-epochs-this-instance 1 \
    -lr-scale "$TRAIN_LR_SCALE" -swa-scale "$TRAIN_SWA_SCALE" -swa-period-samples "$TRAIN_SWA_PERIOD_SAMPLES" \
    $TRAIN_EXTRA_FLAGS -exportdir "$base/modelstobetested" -exportprefix "$MODEL_KIND" -seed "$SEED" \
    2>>"$base/train.log" || { stage_failed train; continue; }
  failures=0

  # 4. Gate the new net (or accept it when gating is off) and record it.
  gate_pending
  record_generations live
  log "gen $gen: done in $(( $(date +%s) - t0 )) s, accepted: ${accepted:-none}"
done
