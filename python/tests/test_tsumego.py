"""The tsumego mode through Analyzer.analyze: the query's ``tsumego`` field
(docs/tsumego.md) gives the response's ``tsumego`` object, and a bad region
raises ValueError naming the field. g170 b6c96 on a 9x9 straight-three
corner whose vital point is B9."""

import pytest

BLACK = ["A8", "B8", "C8", "D8", "D9"]
WHITE = ["A7", "B7", "C7", "D7", "E7", "E8", "E9"]


def straight_three(qid, tsumego, to_move="W"):
    stones = [["B", p] for p in BLACK] + [["W", p] for p in WHITE]
    return {"id": qid, "boardXSize": 9, "boardYSize": 9, "rules": "chinese", "komi": 7,
            "initialStones": stones, "initialPlayer": to_move, "moves": [],
            "maxVisits": 150, "tsumego": tsumego}


def test_analyze_takes_the_tsumego_field(analyzer):
    (r,) = analyzer.analyze(straight_three("ts", {"region": "auto", "goal": "kill", "target": "A8"}))
    t = r["tsumego"]
    assert (t["attacker"], t["goal"]) == ("W", "kill")
    assert t["winningMoves"][0] == "B9", t
    group = next(g for g in t["groups"] if "A8" in g["stones"])
    assert group["status"] == "dead", t
    assert group["mustFindThreats"] is None
    assert t["koThreats"] == []
    # moveInfos stay on the problem: columns A-F, rows 6-9, or pass.
    for m in r["moveInfos"]:
        mv = m["move"]
        assert mv == "pass" or (mv[0] in "ABCDEF" and int(mv[1:]) >= 6), mv


def test_bad_tsumego_region_raises_with_the_field(analyzer):
    with pytest.raises(ValueError, match=r"at most half the board.*\(field tsumego\)"):
        analyzer.analyze(straight_three("bad", {"region": "A1-J9"}))
