#!/usr/bin/env python3
"""Replays the first game of an SGF (or a self-play .sgfs line) on its own,
with nothing from the engine: checks every move is legal (on the board, on
an empty point, no suicide, no repeated whole-board position: positional
superko), then counts the final position by area (stones plus empty regions
that touch one colour only, Tromp-Taylor) and compares W-B minus komi with
the game's RE[]. For games played under area scoring without a tax or a
button (self-play with koRules=POSITIONAL, scoringRules=AREA, taxRules=NONE,
hasButtons=false), where that count is the rules' score.

  python3 scripts/check_sgf_area_score.py GAME.sgf      # exit 0: legal and the score matches
"""
import re
import sys


def sgf_index(c):
    return ord(c) - ord("a") if "a" <= c <= "z" else ord(c) - ord("A") + 26


def main(path):
    text = open(path, encoding="utf-8").read()
    size = re.search(r"SZ\[(\d+)(?::(\d+))?\]", text)
    xs = int(size.group(1))
    ys = int(size.group(2) or size.group(1))
    komi = float(re.search(r"KM\[([^\]]*)\]", text).group(1))
    result = re.search(r"RE\[([^\]]*)\]", text).group(1)
    board = {}
    seen = {frozenset()}
    moves = re.findall(r";([BW])\[([^\]]*)\]", text)

    def neighbours(p):
        x, y = p
        for q in ((x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)):
            if 0 <= q[0] < xs and 0 <= q[1] < ys:
                yield q

    def group(p):
        colour, stack, stones, libs = board[p], [p], {p}, set()
        while stack:
            for q in neighbours(stack.pop()):
                if q not in board:
                    libs.add(q)
                elif board[q] == colour and q not in stones:
                    stones.add(q)
                    stack.append(q)
        return stones, libs

    for n, (colour, point) in enumerate(moves, 1):
        if point == "" or (point == "tt" and xs <= 19 and ys <= 19):
            continue
        p = (sgf_index(point[0]), sgf_index(point[1]))
        if not (0 <= p[0] < xs and 0 <= p[1] < ys) or p in board:
            sys.exit(f"move {n} {colour}[{point}]: off the board or on a stone")
        board[p] = colour
        for q in neighbours(p):
            if q in board and board[q] != colour:
                stones, libs = group(q)
                if not libs:
                    for s in stones:
                        del board[s]
        if not group(p)[1]:
            sys.exit(f"move {n} {colour}[{point}]: suicide")
        position = frozenset(board.items())
        if position in seen:
            sys.exit(f"move {n} {colour}[{point}]: repeats a position (positional superko)")
        seen.add(position)

    score = {"B": 0, "W": 0}
    for colour in board.values():
        score[colour] += 1
    done = set()
    for x in range(xs):
        for y in range(ys):
            if (x, y) in board or (x, y) in done:
                continue
            region, stack, borders = {(x, y)}, [(x, y)], set()
            while stack:
                for q in neighbours(stack.pop()):
                    if q in board:
                        borders.add(board[q])
                    elif q not in region:
                        region.add(q)
                        stack.append(q)
            done |= region
            if len(borders) == 1:
                score[borders.pop()] += len(region)
    white_minus_black = score["W"] + komi - score["B"]
    counted = "0" if white_minus_black == 0 else (
        f"W+{white_minus_black:g}" if white_minus_black > 0 else f"B+{-white_minus_black:g}")
    print(f"{path}: {xs}x{ys}, {len(moves)} moves, all legal; area B {score['B']} W {score['W']} "
          f"komi {komi:g}: {counted}; RE[{result}]")
    if counted != result:
        sys.exit("the count differs from RE[]")


if __name__ == "__main__":
    main(sys.argv[1])
