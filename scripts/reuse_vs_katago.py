#!/usr/bin/env python3
"""Tree reuse compared with KataGo 1.17.2's GTP engine.

Both engines replay a game's moves with nnRandomize=false and one search
thread (every evaluation the same), and at each checked turn: clear the tree
(`clear_cache`), search (`kata-search_analyze`), play the game's next two
moves, and search again on the reused tree. Prints how many of the second
searches visit the same moves the same number of times with the same
winrates (to 5e-5) as KataGo's, and with -v each difference. Searches
without reuse agree (see scripts/search_vs_katago.py); this checks what
reuse keeps and recomputes.

  scripts/reuse_vs_katago.py --katago KATAGO --katago-config gtp_example.cfg \\
      --model NET --sgf GAME.sgf [--start 20] [--checks 10] [--visits 100] \\
      [--engine target/release/engine] [--setting key=value,...] [-v]
"""
import argparse, subprocess, sys

from sgf_moves import sgf_moves


def second_searches(cmd, commands):
    out = subprocess.run(cmd, shell=True, input="\n".join(commands) + "\n",
                         capture_output=True, text=True, timeout=3600).stdout
    searches = []
    for line in (l for l in out.splitlines() if l.startswith("info")):
        found = {}
        for part in line.split("info move ")[1:]:
            f = part.split()
            found[f[0]] = (int(f[f.index("visits") + 1]), float(f[f.index("winrate") + 1]))
        searches.append(found)
    return searches[1::2]


def agree(k, e, tol=5e-5):
    """The same moves with the same visits, winrates equal to `tol` (float
    summation order moves the fifth decimal now and then)."""
    return k.keys() == e.keys() and all(
        k[m][0] == e[m][0] and abs(k[m][1] - e[m][1]) <= tol for m in k)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--katago", required=True)
    ap.add_argument("--katago-config", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--sgf", required=True)
    ap.add_argument("--engine", default="target/release/engine")
    ap.add_argument("--engine-config", default="configs/gtp.toml")
    ap.add_argument("--start", type=int, default=20)
    ap.add_argument("--checks", type=int, default=10)
    ap.add_argument("--visits", type=int, default=100)
    ap.add_argument("--setting", default="", help="more -override-config settings for both")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    size, komi, moves = sgf_moves(a.sgf)
    settings = f"maxVisits={a.visits},numSearchThreads=1,nnRandomize=false" + (f",{a.setting}" if a.setting else "")
    commands = [f"boardsize {size}", f"komi {komi}"] + [f"play {c} {m}" for c, m in moves[:a.start]]
    checks = 0
    for i in range(a.checks):
        t = a.start + 2 * i
        if t + 2 >= len(moves):
            break
        (c1, m1), (c2, m2) = moves[t], moves[t + 1]
        commands += ["clear_cache", f"kata-search_analyze {c1} interval 100000", f"play {c1} {m1}",
                     f"play {c2} {m2}", f"kata-search_analyze {moves[t + 2][0]} interval 100000"]
        checks += 1
    commands.append("quit")
    kg = second_searches(f"{a.katago} gtp -model {a.model} -config {a.katago_config} -override-config {settings},logDir=", commands)
    en = second_searches(f"{a.engine} gtp -model {a.model} -config {a.engine_config} -override-config {settings}", commands)
    same = 0
    for i, (k, e) in enumerate(zip(kg, en)):
        same += agree(k, e)
        if k != e and a.v:
            top = lambda d: sorted(d.items(), key=lambda x: -x[1][0])[:3]
            print(f"turn {a.start + 2 * i + 2}: KataGo {top(k)}\n          engine {top(e)}")
    print(f"{same}/{checks} searches after reuse the same ({settings})")
    return 0 if same == checks else 1


if __name__ == "__main__":
    sys.exit(main())
