#!/usr/bin/env python3
"""Genmove compared with KataGo 1.17.2's GTP engine over a whole game.

Both engines play one game from the empty board, move by move: each is
asked `genmove` for the side to move with nnRandomize=false, one search
thread and the given settings (every evaluation then the same, so equal
searches choose equal moves; add chosenMoveTemperatureEarly=0 and
chosenMoveTemperature=0 to take out the random move choice). Where the
moves differ, the engine's move is taken back and KataGo's played, and
both trees are cleared. Prints each difference and how many moves agreed:
this checks genmove's search with tree reuse, move after move.

  scripts/genmove_vs_katago.py --katago KATAGO --katago-config gtp_example.cfg \\
      --model NET [--moves 60] [--size 19] [--komi 7.5] [--visits 100] \\
      [--engine target/release/engine] [--setting key=value,...]
"""
import argparse, subprocess, sys


class Gtp:
    """A GTP engine on pipes; `ask` returns the answer's text."""

    def __init__(self, cmd):
        self.p = subprocess.Popen(cmd, shell=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)

    def ask(self, command):
        self.p.stdin.write(command + "\n")
        self.p.stdin.flush()
        lines = []
        while True:
            line = self.p.stdout.readline()
            if not line:
                sys.exit(f"engine ended during {command!r}")
            if line.strip():
                lines.append(line.strip())
            elif lines:
                break
        if not lines[0].startswith("="):
            sys.exit(f"{command!r} failed: {lines[0]}")
        return lines[0][1:].strip()

    def close(self):
        self.p.stdin.write("quit\n")
        self.p.stdin.flush()
        self.p.wait(timeout=60)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--katago", required=True)
    ap.add_argument("--katago-config", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--engine", default="target/release/engine")
    ap.add_argument("--engine-config", default="configs/gtp.toml")
    ap.add_argument("--moves", type=int, default=60)
    ap.add_argument("--size", type=int, default=19)
    ap.add_argument("--komi", default="7.5")
    ap.add_argument("--visits", type=int, default=100)
    ap.add_argument("--setting", default="", help="more -override-config settings for both")
    a = ap.parse_args()
    settings = f"maxVisits={a.visits},numSearchThreads=1,nnRandomize=false,ponderingEnabled=false" + (
        f",{a.setting}" if a.setting else "")
    kg = Gtp(f"{a.katago} gtp -model {a.model} -config {a.katago_config} -override-config {settings},logDir=")
    en = Gtp(f"{a.engine} gtp -model {a.model} -config {a.engine_config} -override-config {settings}")
    for cmd in [f"boardsize {a.size}", f"komi {a.komi}"]:
        kg.ask(cmd)
        en.ask(cmd)
    same, played, pla = 0, 0, "b"
    for turn in range(a.moves):
        k, e = kg.ask(f"genmove {pla}"), en.ask(f"genmove {pla}")
        played += 1
        if k == e:
            same += 1
        else:
            print(f"move {turn + 1} ({pla}): KataGo {k}, engine {e}", flush=True)
            if "resign" in (k.lower(), e.lower()):
                break
            en.ask("undo")
            en.ask(f"play {pla} {k}")
            kg.ask("clear_cache")
            en.ask("clear_cache")
        pla = "w" if pla == "b" else "b"
    kg.close()
    en.close()
    print(f"{same}/{played} genmoves the same ({settings})")
    return 0 if same == played else 1


if __name__ == "__main__":
    sys.exit(main())
