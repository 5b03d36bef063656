#!/usr/bin/env bash
# Writes tests/data/katago_human_nn/katago_metadata.txt: KataGo 1.17.2's own
# metadata inputs (fillMetadataRow) and hashes (getHash) for every kind of
# humanSLProfile name, and the names it refuses, which
# src/nn/metadata.rs' tests compare with ours.
#
#   KATAGO_SRC=../KataGo scripts/katago_metadata_vectors.sh
#
# KATAGO_SRC is a KataGo source tree whose cpp/build holds a finished build
# (cmake -DUSE_BACKEND=EIGEN ...; make): the program links its objects.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/katago_harness.sh"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
build_katago_harness "$root/scripts/katago_metadata_vectors.cpp" "$work/vectors"
profiles=(
  rank_20k rank_15k rank_5k rank_1k rank_1d rank_4d rank_9d
  preaz_20k preaz_3k preaz_9d
  rank_5k_1d rank_9d_20k preaz_2d_9k
  proyear_1800 proyear_1850 proyear_1951 proyear_2016 proyear_2020 proyear_2021 proyear_2023
  "" _ '""'
  rank_21k rank_10d rank_0k rank_01d rank_5K rank_5k_ rank_5k_1d_2d rank_ preaz_1d_x
  proyear_1799 proyear_2024 proyear_ proyear_19x0 rank5k human bogus
)
out="$root/tests/data/katago_human_nn/katago_metadata.txt"
{
  echo "# KataGo 1.17.2 SGFMetadata::getProfile, fillMetadataRow, getHash: scripts/katago_metadata_vectors.sh"
  (cd "$work" && ./vectors "${profiles[@]}")
} > "$out"
echo "wrote $out ($(grep -c '^row' "$out") rows, $(grep -c '^error' "$out") refused)"
