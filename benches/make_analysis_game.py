#!/usr/bin/env python3
"""Generates benches/analysis_game.json: a 200-move 19x19 game for the
analysis throughput benchmark, played by `engine analysis` itself.

Each move is the engine's top move (order 0, never a pass) after a short
deterministic search: identity symmetry only (nnRandomize=false), no root
noise, one search thread. Run once; the result is committed, so the
benchmark does not depend on this script's determinism.

usage: benches/make_analysis_game.py ENGINE MODEL [OUT]
  (ENGINE: path to the built binary; run under ./setup.sh for libtorch)
"""

import json
import subprocess
import sys

MOVES = 200
VISITS = 16


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    engine, model = sys.argv[1], sys.argv[2]
    out = sys.argv[3] if len(sys.argv) > 3 else "benches/analysis_game.json"
    proc = subprocess.Popen(
        [engine, "analysis", "-model", model,
         "-override-config", "nnRandomize=false,numAnalysisThreads=1"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    moves = []
    for turn in range(MOVES):
        query = {
            "id": f"m{turn}", "moves": moves, "rules": "chinese", "komi": 7.5,
            "boardXSize": 19, "boardYSize": 19, "maxVisits": VISITS,
            "overrideSettings": {"wideRootNoise": 0.0, "numSearchThreads": 1},
        }
        proc.stdin.write(json.dumps(query) + "\n")
        proc.stdin.flush()
        while True:
            resp = json.loads(proc.stdout.readline())
            if "error" in resp:
                sys.exit(f"engine error: {resp}")
            if resp.get("id") == query["id"] and not resp.get("isDuringSearch"):
                break
        infos = sorted(resp["moveInfos"], key=lambda m: m["order"])
        move = next(m["move"] for m in infos if m["move"].lower() != "pass")
        moves.append(["B" if turn % 2 == 0 else "W", move])
    proc.stdin.close()
    proc.wait()
    with open(out, "w") as f:
        json.dump({"rules": "chinese", "komi": 7.5, "boardXSize": 19,
                   "boardYSize": 19, "moves": moves}, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {out}: {len(moves)} moves")


if __name__ == "__main__":
    main()
