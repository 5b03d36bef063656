#!/usr/bin/env python3
"""A match score as the ladder tables record it (scripts/ladder.sh,
scripts/loop_eval.sh): prints `GAMES<TAB>SCORE<TAB>WIN_RATE<TAB>ELO` (their columns' order) for a
score of SCORE points (draws count 1/2) in GAMES games.

    match_score.py SCORE GAMES

The Elo is from the score with half a game added to each side, so that 0/N
and N/N stay finite (a common continuity correction).
"""
import math
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    score, games = float(sys.argv[1]), int(sys.argv[2])
    if games <= 0 or not 0 <= score <= games:
        sys.exit(f"match_score.py: a score of {score:g} in {games} games is not a match result")
    p = (score + 0.5) / (games + 1.0)
    elo = round(-400.0 * math.log10(1.0 / p - 1.0)) + 0  # + 0: no "-0"
    print(f"{games}\t{score:g}\t{score / games:.3f}\t{elo}")


if __name__ == "__main__":
    main()
