"""The moves of a plain SGF game record, for the scripts that replay games
into engines (search_vs_katago.py, reuse_vs_katago.py)."""
import re

COLS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"


def sgf_moves(path):
    """(board size, komi, [[colour, GTP vertex or "pass"], ...]) of the
    main line; `tt` is a pass on boards up to 19x19."""
    text = open(path).read()
    size = int(re.search(r"SZ\[(\d+)\]", text).group(1)) if "SZ[" in text else 19
    komi = float(re.search(r"KM\[([-0-9.]+)\]", text).group(1)) if "KM[" in text else 7.5
    moves = []
    for color, m in re.findall(r";([BW])\[([a-z]{0,2})\]", text):
        if m == "" or (m == "tt" and size <= 19):
            moves.append([color, "pass"])
        else:
            moves.append([color, f"{COLS[ord(m[0]) - 97]}{size - (ord(m[1]) - 97)}"])
    return size, komi, moves
