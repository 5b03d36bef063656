"""Position against KataGo's finished self-play games
(shared/vectors/games: every move legal, the game ends where the SGF
ends, the final score exactly KataGo's), SGF round trips, and bad
inputs."""

import json

import numpy as np
import pytest

import engine_go


def games(shared):
    found = sorted((shared / "vectors" / "games").glob("*.sgf"))
    assert found, "no games in shared/vectors/games"
    for sgf in found:
        side = json.loads(sgf.with_suffix(".json").read_text())
        yield sgf, side


def test_games_replay_to_katago_scores(shared):
    n = 0
    for sgf, side in games(shared):
        if "pass-alive" in side.get("endedBy", ""):
            # KataGo's self-play adjudication, not a rules ending: the game
            # is not finished in the rules' eyes (nor in KataGo's GTP).
            continue
        pos = engine_go.Position.from_sgf(sgf.read_text())
        assert len(pos.moves) == side["numMoves"], sgf.name
        assert pos.is_finished, sgf.name
        assert pos.score() == side["final_score_white_minus_black"], sgf.name
        assert pos.size == (side["boardXSize"], side["boardYSize"])
        assert pos.legal_moves() == []
        n += 1
    assert n >= 40


def test_games_played_move_by_move(shared):
    # The same games through the constructor's rules dict and play().
    for sgf, side in games(shared):
        if "pass-alive" in side.get("endedBy", ""):
            continue
        ref = engine_go.Position.from_sgf(sgf.read_text())
        stones = [("B" if v == 1 else "W", (x, y))
                  for (y, x), v in np.ndenumerate(_initial_board(sgf.read_text(), ref))
                  if v != 0]
        pos = engine_go.Position(
            size=ref.size, rules=side["rules"], komi=float(side["KM"]), setup=stones,
            to_play=ref.moves[0][0] if ref.moves else None,
        )
        for color, move in ref.moves:
            assert not pos.is_finished
            if color == pos.to_play:
                assert move in pos.legal_moves(), (sgf.name, move)
            pos.play(move, color)
        assert pos.is_finished
        assert pos.score() == side["final_score_white_minus_black"], sgf.name
        np.testing.assert_array_equal(pos.board, ref.board)


def _initial_board(text, ref):
    # The setup stones: the SGF without its moves.
    empty = engine_go.Position.from_sgf(_without_moves(text))
    assert empty.size == ref.size
    return empty.board


def _without_moves(text):
    import re

    return re.sub(r";\s*[BW]\[[a-zA-Z]{0,2}\](C\[[^\]]*\])?", ";", text)


def test_sgf_round_trip(shared):
    for sgf, _ in games(shared):
        a = engine_go.Position.from_sgf(sgf.read_text())
        text = a.to_sgf()
        b = engine_go.Position.from_sgf(text)
        assert b.moves == a.moves
        np.testing.assert_array_equal(b.board, a.board)
        assert b.rules == a.rules and b.komi == a.komi
        assert b.is_finished == a.is_finished
        if a.is_finished:
            assert b.score() == a.score()
            assert a.result() is not None and f"RE[{a.result()}]" in text
        assert b.to_sgf() == text


def test_board_and_coordinates():
    pos = engine_go.Position((9, 7), ["A1", (8, 0)])
    b = pos.board
    assert b.dtype == np.int8 and b.shape == (7, 9)
    assert b[6, 0] == 1  # A1: bottom-left, the last row
    assert b[0, 8] == -1  # (8, 0): top-right
    assert pos.to_play == "B"
    assert pos.moves == [("B", "A1"), ("W", "J7")]
    assert len(pos.legal_moves()) == 9 * 7 - 2 + 1


def test_simple_ko_and_capture():
    # Black takes the ko at B2... white may not retake at once.
    pos = engine_go.Position(5, ["B1", "C1", "A2", "D2", "B3", "C3", "pass", "B2", "C2"],
                             rules="japanese")
    assert pos.board[3, 1] == 0, "B2 captured"
    assert not pos.is_legal("B2")
    with pytest.raises(ValueError, match="illegal move W B2"):
        pos.play("B2")
    pos.play("E5")
    pos.play("E4")
    pos.play("B2")  # now legal


def test_features_shape_and_history():
    pos = engine_go.Position(9, ["E5", "C3"])
    s, g = pos.features()
    assert s.dtype == np.float32 and s.shape == (22, 9, 9) and g.shape == (19,)
    assert s[0].sum() == 81  # the on-board plane
    s0, _ = pos.features(history=False)
    assert s[9:14].sum() > 0 and s0[9:14].sum() == 0  # previous-move planes


def test_score_needs_a_finished_game():
    pos = engine_go.Position(5, ["C3"], rules="chinese", komi=0.5)
    with pytest.raises(ValueError, match="not finished"):
        pos.score()
    pos.play("pass")
    pos.play("pass")
    assert pos.is_finished
    assert pos.score() == 0.5 - 25
    with pytest.raises(ValueError):
        pos.play("A1")


def test_bad_inputs_raise():
    with pytest.raises(ValueError):
        engine_go.Position(9, ["Z9"])
    with pytest.raises(ValueError):
        engine_go.Position(9, ["E5", "E5"])
    with pytest.raises(ValueError):
        engine_go.Position(9, rules="no-such-rules")
    with pytest.raises(ValueError):
        engine_go.Position(1)
    with pytest.raises(ValueError):
        engine_go.Position(9, [(9, 0)])
    with pytest.raises(TypeError):
        engine_go.Position(9, [1.5])
    with pytest.raises(ValueError):
        engine_go.Position.from_sgf("(;GM[1]SZ[9];B[ee];W[ee])")
    with pytest.raises(ValueError):
        engine_go.Position.from_sgf("not sgf")
