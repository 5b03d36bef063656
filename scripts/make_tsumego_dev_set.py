#!/usr/bin/env python3
"""Builds scripts/tsumego_dev_set.json, the development set of
scripts/tsumego_bench.py, from a local clone of github.com/sanderland/tsumego.

Each problem file there is JSON: `AB`/`AW` (SGF points), `SZ`, `C` ("Black
to play"), and `SOL`: the correct first moves, one `[colour, point, "",
note]` per accepted answer. Problems whose note says the solution may be
wrong ("Backup solution detector used") are left out.

The three "Cho Chikun Encyclopedia Life And Death" collections are the
held-out acceptance set: this script refuses them, and nothing of them is
read.

Usage: scripts/make_tsumego_dev_set.py GIT_DIR [OUT.json]
  GIT_DIR: the clone's .git folder (read with git ls-tree / git show, HEAD)
"""

import json
import subprocess
import sys

# The collections of the development set (folders of the repository).
COLLECTIONS = [
    ("ishigure-123", "problems/1a. Tsumego Beginner/Ishigure Ikuro 123 Basic Tsumego"),
    ("maeda-10k-5k", "problems/1b. Tsumego Intermediate/Maeda Tsumego Collection - 10k-5k"),
    (
        "hashimoto-attack-protect-elem",
        "problems/1d. Hashimoto Utaro Tsumego/Moves To Attack And Protect - Elementary",
    ),
]

HELD_OUT = "cho chikun"
COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"


def git(git_dir, *args):
    return subprocess.run(
        ["git", "--git-dir", git_dir, *args], capture_output=True, text=True, check=True
    ).stdout


def gtp_point(sgf, size):
    x, y = ord(sgf[0]) - ord("a"), ord(sgf[1]) - ord("a")
    if not (0 <= x < size and 0 <= y < size):
        raise ValueError(f"point {sgf!r} off a {size}x{size} board")
    return f"{COLUMNS[x]}{size - y}"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    git_dir = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else "scripts/tsumego_dev_set.json"
    commit = git(git_dir, "rev-parse", "HEAD").strip()
    problems, skipped = [], []
    for name, folder in COLLECTIONS:
        if HELD_OUT in folder.lower():
            sys.exit(f"refusing {folder}: the Cho Chikun collections are the held-out set")
        files = sorted(
            f for f in git(git_dir, "ls-tree", "-r", "--name-only", "HEAD", folder).splitlines()
            if f.endswith(".json")
        )
        for f in files:
            d = json.loads(git(git_dir, "show", f"HEAD:{f}"))
            size = int(d.get("SZ", "19"))
            sol = d.get("SOL", [])
            pid = f"{name}/{f.rsplit('/', 1)[-1][:-5]}"
            if not sol or any(len(s) > 3 and s[3] for s in sol):
                skipped.append(pid)
                continue
            to_play = sol[0][0]
            if any(s[0] != to_play for s in sol) or to_play not in "BW":
                skipped.append(pid)
                continue
            problems.append(
                {
                    "id": pid,
                    "file": f,
                    "size": size,
                    "toPlay": to_play,
                    "black": [gtp_point(p, size) for p in d.get("AB", [])],
                    "white": [gtp_point(p, size) for p in d.get("AW", [])],
                    "correct": sorted({gtp_point(s[1], size) for s in sol}),
                }
            )
    doc = {
        "source": "https://github.com/sanderland/tsumego",
        "commit": commit,
        "collections": [{"name": n, "folder": f} for n, f in COLLECTIONS],
        "skipped": skipped,
        "note": "correct: the accepted first moves (the collection's SOL); "
        "problems whose SOL is marked uncertain are in skipped",
        "problems": problems,
    }
    with open(out, "w") as fh:
        json.dump(doc, fh, indent=None, separators=(",", ":"))
        fh.write("\n")
    print(f"{len(problems)} problems ({len(skipped)} skipped) -> {out}")


if __name__ == "__main__":
    main()
