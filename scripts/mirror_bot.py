#!/usr/bin/env python3
"""A GTP mirror-Go player, the opponent KataGo's `antiMirror` defends against.

It answers each move with its reflection through the centre of the board.
As Black it first takes the centre point (odd boards), which makes the
mirror hardest to break. When the reflected point is not playable (taken,
suicide, ko) it plays a random legal move that does not fill one of its own
one-point eyes (seeded: --seed), and it passes after a pass or when nothing
is left. Used by scripts/anti_mirror_match.sh.

    scripts/mirror_bot.py [--seed N]
"""
import argparse
import random
import sys

COLS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"


class Board:
    def __init__(self, size):
        self.size = size
        self.stones = {}  # (x, y) -> 'b' | 'w'
        self.ko = None  # point the next player may not take back

    def neighbours(self, p):
        x, y = p
        for q in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if 0 <= q[0] < self.size and 0 <= q[1] < self.size:
                yield q

    def chain(self, p):
        colour = self.stones[p]
        seen, todo, libs = {p}, [p], set()
        while todo:
            for q in self.neighbours(todo.pop()):
                c = self.stones.get(q)
                if c is None:
                    libs.add(q)
                elif c == colour and q not in seen:
                    seen.add(q)
                    todo.append(q)
        return seen, libs

    def play(self, colour, p, commit=True):
        """Plays p for colour; returns False (and changes nothing) if illegal."""
        if p in self.stones or p == self.ko:
            return False
        opp = "w" if colour == "b" else "b"
        saved = dict(self.stones)
        self.stones[p] = colour
        captured = []
        for q in self.neighbours(p):
            if self.stones.get(q) == opp:
                group, libs = self.chain(q)
                if not libs:
                    captured.extend(group)
                    for s in group:
                        del self.stones[s]
        group, libs = self.chain(p)
        if not libs:
            self.stones = saved
            return False
        if not commit:
            self.stones = saved
            return True
        single = len(captured) == 1 and len(group) == 1 and len(libs) == 1
        self.ko = captured[0] if single else None
        return True

    def is_own_eye(self, colour, p):
        return all(self.stones.get(q) == colour for q in self.neighbours(p))


def parse_vertex(text, size):
    text = text.strip().upper()
    if text == "PASS":
        return None
    x = COLS.index(text[0])
    y = size - int(text[1:])
    return (x, y)


def vertex(p, size):
    return "pass" if p is None else f"{COLS[p[0]]}{size - p[1]}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    size, board, last = 19, Board(19), None
    commands = ["protocol_version", "name", "version", "list_commands", "known_command",
                "boardsize", "clear_board", "komi", "play", "genmove", "quit"]
    for line in sys.stdin:
        parts = line.split()
        if not parts:
            continue
        cid = ""
        if parts[0].isdigit():
            cid, parts = parts[0], parts[1:]
        cmd, rest = (parts[0].lower(), parts[1:]) if parts else ("", [])
        ok, answer = True, ""
        if cmd == "protocol_version":
            answer = "2"
        elif cmd == "name":
            answer = "mirror_bot"
        elif cmd == "version":
            answer = "1"
        elif cmd == "list_commands":
            answer = "\n".join(commands)
        elif cmd == "known_command":
            answer = "true" if rest and rest[0] in commands else "false"
        elif cmd == "boardsize":
            size, board, last = int(rest[0]), Board(int(rest[0])), None
        elif cmd == "clear_board":
            board, last = Board(size), None
        elif cmd == "komi":
            pass
        elif cmd == "play":
            colour = rest[0][0].lower()
            p = parse_vertex(rest[1], size)
            if p is not None and not board.play(colour, p):
                ok, answer = False, "illegal move"
            else:
                if p is None:
                    board.ko = None
                last = ("pass",) if p is None else p
        elif cmd == "genmove":
            colour = rest[0][0].lower()
            centre = (size // 2, size // 2)
            move = None
            if not board.stones and colour == "b" and size % 2 == 1:
                move = centre
            elif last is not None and last != ("pass",):
                mirror = (size - 1 - last[0], size - 1 - last[1])
                if board.play(colour, mirror, commit=False):
                    move = mirror
            if move is None and last != ("pass",):
                points = [(x, y) for x in range(size) for y in range(size)]
                rng.shuffle(points)
                for p in points:
                    if not board.is_own_eye(colour, p) and board.play(colour, p, commit=False):
                        move = p
                        break
            if move is None:
                board.ko = None
            else:
                board.play(colour, move)
            last = ("pass",) if move is None else move
            answer = vertex(move, size)
        elif cmd == "quit":
            print(f"={cid}\n", flush=True)
            return
        else:
            ok, answer = False, "unknown command"
        print(f"{'=' if ok else '?'}{cid} {answer}".rstrip() + "\n", flush=True)


if __name__ == "__main__":
    main()
