#!/usr/bin/env python3
"""KaTrain 1.20 drives `engine analysis`: its own engine class, AI code and
analysis config, the way its GUI does, with no display.

KaTrain's `KataGoEngine` (katrain/core/engine.py) starts `ENGINE analysis
-model NET [-human-model HUMAN] -config KATRAIN/KataGo/analysis_config.cfg
-override-config homeDataDir=...` and talks KataGo's JSON protocol to it.
This script plays one game of MOVES moves through KaTrain's
`generate_ai_move`, with KaTrain's "human" AI (`ai:human`, a kyu/dan
profile drawn from `humanPolicy`) for Black and its "pro" AI (`ai:pro`, a
pro-year profile) for White, or its default AI (`ai:default`, the engine's
top move) for both with --default-ai. After each move KaTrain analyses the
new position itself (`Game.play`), and the script checks what KaTrain reads
of each answer: the analysis completes, winrate and score are numbers, the
policy has one entry per point plus pass and the ownership one per point.
Any error KaTrain logs, or a move it cannot play, fails the run.

Needs a Python with KaTrain 1.20 installed (`pip install katrain==1.20.0`;
`scripts/katrain_human_play.sh` makes such a virtualenv and runs this).

    python katrain_human_play.py --engine target/release/engine \
        --model NET.bin.gz --human-model HUMAN.bin.gz --moves 40 --visits 16
"""
import argparse
import os
import sys
import tempfile
import time

# Kivy (which KaTrain's core imports for its config store) writes into
# $HOME/.kivy and parses sys.argv unless told not to.
os.environ.setdefault("KIVY_NO_ARGS", "1")
os.environ.setdefault("KIVY_NO_CONSOLELOG", "1")
os.environ.setdefault("KIVY_NO_FILELOG", "1")
if not os.path.isdir(os.path.expanduser("~")):
    os.environ["HOME"] = tempfile.mkdtemp()
os.makedirs(os.path.join(os.path.expanduser("~"), ".kivy"), exist_ok=True)

from katrain.core.ai import generate_ai_move  # noqa: E402
from katrain.core.base_katrain import KaTrainBase  # noqa: E402
from katrain.core.constants import AI_DEFAULT, AI_HUMAN, AI_PRO, OUTPUT_ERROR  # noqa: E402
from katrain.core.engine import KataGoEngine  # noqa: E402
from katrain.core.game import Game  # noqa: E402
from katrain.core.utils import find_package_resource  # noqa: E402


class Headless(KaTrainBase):
    """KaTrain's GUI-free base: its config and logging; errors are kept."""

    def __init__(self):
        self.errors = []
        super().__init__(force_package_config=True, debug_level=0)

    def log(self, message, level=0):
        if level == OUTPUT_ERROR:
            self.errors.append(str(message))
            print(f"KaTrain error: {message}", file=sys.stderr)

    def __call__(self, message, *args, **kwargs):
        # The GUI's message dispatch (e.g. "engine_recovery_popup").
        self.errors.append(f"{message} {args}")


def wait_for_analysis(node, engine, seconds):
    deadline = time.time() + seconds
    while not node.analysis_complete:
        if time.time() > deadline:
            raise SystemExit(f"no complete analysis of move {node.depth} in {seconds} s")
        engine.check_alive(exception_if_dead=True)
        time.sleep(0.02)


def check_analysis(node, size):
    """What KaTrain's GUI reads of an analysed node."""
    assert isinstance(node.winrate, float) and 0.0 <= node.winrate <= 1.0, node.winrate
    assert isinstance(node.score, float), node.score
    policy = node.policy
    assert policy is not None and len(policy) == size * size + 1, len(policy or [])
    ownership = node.ownership
    assert ownership is not None and len(ownership) == size * size, len(ownership or [])
    assert node.candidate_moves, "no candidate moves"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", required=True, help="the engine binary, in KaTrain's 'katago' setting")
    ap.add_argument("--model", required=True)
    ap.add_argument("--human-model", default="")
    ap.add_argument("--moves", type=int, default=40)
    ap.add_argument("--visits", type=int, default=16, help="KaTrain's max_visits")
    ap.add_argument("--size", type=int, default=19)
    ap.add_argument("--kyu-rank", type=int, default=8, help="ai:human's human_kyu_rank (0 or less: dan)")
    ap.add_argument("--pro-year", type=int, default=1914, help="ai:pro's pro_year")
    ap.add_argument("--default-ai", action="store_true", help="both sides play ai:default")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for one analysis")
    ap.add_argument("--sgf", help="write the game here")
    args = ap.parse_args()

    kt = Headless()
    config = dict(kt.config("engine"))
    config.update(
        backend="local",
        katago=os.path.abspath(args.engine),
        model=os.path.abspath(args.model),
        humanlike_model=os.path.abspath(args.human_model) if args.human_model else "",
        max_visits=args.visits,
        fast_visits=max(1, args.visits // 4),
        max_time=60.0,
    )
    print(f"KaTrain analysis config: {find_package_resource(config['config'])}")
    engine = KataGoEngine(kt, config)
    if engine.katago_process is None:
        raise SystemExit(f"KaTrain could not start the engine: {kt.errors}")
    game = Game(kt, engine, game_properties={"SZ": args.size, "KM": 6.5, "RU": "japanese"})
    wait_for_analysis(game.root, engine, args.timeout)
    check_analysis(game.root, args.size)

    ai = {
        "B": (AI_HUMAN, {"human_kyu_rank": args.kyu_rank, "modern_style": True}),
        "W": (AI_PRO, {"pro_year": args.pro_year}),
    }
    if args.default_ai:
        ai = {"B": (AI_DEFAULT, {}), "W": (AI_DEFAULT, {})}
    played = []
    start = time.time()
    for _ in range(args.moves):
        player = game.current_node.next_player
        mode, settings = ai[player]
        move, node = generate_ai_move(game, mode, settings)
        if node is None:
            raise SystemExit(f"KaTrain could not play {move}: {kt.errors}")
        if mode in (AI_HUMAN, AI_PRO):
            assert "Played move" in (node.ai_thoughts or ""), node.ai_thoughts
        played.append(move.gtp())
        wait_for_analysis(node, engine, args.timeout)
        check_analysis(node, args.size)
        if move.is_pass and node.parent.move is not None and node.parent.move.is_pass:
            break
    engine.shutdown(finish=False)
    if args.sgf:
        with open(args.sgf, "w") as f:
            f.write(game.root.sgf())
    if kt.errors:
        raise SystemExit(f"KaTrain logged errors: {kt.errors}")
    print(f"{len(played)} moves in {time.time() - start:.0f} s "
          f"({ai['B'][0]} {ai['B'][1]} vs {ai['W'][0]} {ai['W'][1]}): {' '.join(played)}")
    print(f"final position analysed: Black winrate {game.current_node.winrate:.3f}, "
          f"score {game.current_node.score:+.1f}")


if __name__ == "__main__":
    main()
