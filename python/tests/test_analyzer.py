"""Analyzer against KataGo 1.17.2's analysis responses
(shared/vectors/nn/nn.jsonl: the exact queries, 1 visit, 8 symmetries;
tolerances from the README there), analyze_many, cancel, interrupts and
errors."""

import threading
import time
import warnings

import numpy as np
import pytest

import engine_go

ROOT_KEYS = ["rawWinrate", "rawLead", "rawScoreSelfplay", "rawScoreSelfplayStdev",
             "rawNoResultProb", "winrate", "scoreLead"]
TOL = {"rawWinrate": 1e-4, "winrate": 1e-4, "rawLead": 1e-3, "scoreLead": 1e-3,
       "rawScoreSelfplay": 1e-3, "rawScoreSelfplayStdev": 1e-3, "rawNoResultProb": 1e-5}


def check_response(got, ref):
    qid = ref["id"]
    assert got["id"] == qid
    assert got["turnNumber"] == ref["turnNumber"], qid
    assert got["isDuringSearch"] is False
    policy, ref_policy = np.array(got["policy"]), np.array(ref["policy"])
    assert np.array_equal(policy == -1, ref_policy == -1), qid
    np.testing.assert_allclose(policy, ref_policy, atol=1e-4, rtol=0, err_msg=qid)
    np.testing.assert_allclose(got["ownership"], ref["ownership"], atol=1e-3, rtol=0, err_msg=qid)
    gi, ri = got["rootInfo"], ref["rootInfo"]
    assert gi["currentPlayer"] == ri["currentPlayer"], qid
    for k in ROOT_KEYS:
        assert abs(gi[k] - ri[k]) <= TOL[k], (qid, k, gi[k], ri[k])
    for k in ("rawStWrError", "rawStScoreError", "rawVarTimeLeft"):
        assert gi[k] == ri[k], (qid, k)


def test_analyze_matches_katago(analyzer, nn_records):
    for rec in nn_records:
        responses = analyzer.analyze(rec["query"])
        assert len(responses) == 1, rec["query"]["id"]
        check_response(responses[0], rec["response"])


def test_analyze_many_matches_katago(analyzer, nn_records):
    refs = {rec["query"]["id"]: rec["response"] for rec in nn_records}
    seen = set()
    for got in analyzer.analyze_many([rec["query"] for rec in nn_records]):
        check_response(got, refs[got["id"]])
        seen.add(got["id"])
    assert seen == set(refs)


def test_turns_in_order_and_reused_ids(analyzer):
    q = {"id": "same", "moves": [["B", "D4"], ["W", "Q16"], ["B", "Q4"]], "rules": "chinese",
         "komi": 7.5, "boardXSize": 19, "boardYSize": 19, "analyzeTurns": [3, 0, 2],
         "maxVisits": 2}
    out = analyzer.analyze(q)
    assert [r["turnNumber"] for r in out] == [0, 2, 3]
    # Two queries with one id at once: each gets its own answers back.
    got = list(analyzer.analyze_many([q, dict(q, analyzeTurns=[1])]))
    assert sorted(r["turnNumber"] for r in got) == [0, 1, 2, 3]
    assert all(r["id"] == "same" for r in got)


def test_actions(analyzer):
    (v,) = analyzer.analyze({"id": "v", "action": "query_version"})
    assert v["id"] == "v" and v["version"]
    (c,) = analyzer.analyze({"id": "c", "action": "clear_cache"})
    assert c["action"] == "clear_cache"


def test_errors_and_warnings(analyzer):
    base = {"id": "e", "moves": [], "rules": "chinese", "komi": 7.5,
            "boardXSize": 9, "boardYSize": 9, "maxVisits": 1}
    with pytest.raises(ValueError, match="moves"):
        analyzer.analyze(dict(base, moves=[["B", "E5"], ["W", "E5"]]))
    with pytest.raises(ValueError):
        analyzer.analyze(dict(base, boardXSize=99))
    with pytest.raises(ValueError):
        analyzer.analyze({"moves": []})  # no id
    with pytest.raises(TypeError):
        analyzer.analyze(["not", "a", "dict"])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = analyzer.analyze(dict(base, someUnknownField=1))
    assert len(out) == 1
    assert any("someUnknownField" in str(x.message) for x in w)
    # A refused query in a batch is yielded, the others go on.
    illegal = dict(base, id="bad", moves=[["B", "E5"], ["W", "E5"]])
    got = list(analyzer.analyze_many([dict(base, id="ok"), illegal]))
    assert {r["id"] for r in got} == {"ok", "bad"}
    assert "error" in next(r for r in got if r["id"] == "bad")
    # One that does not parse: ValueError before anything is sent.
    with pytest.raises(ValueError, match="boardXSize"):
        analyzer.analyze_many([dict(base, id="ok"), dict(base, boardXSize=99)])


def test_bad_model_and_config(model, shared, tmp_path):
    with pytest.raises(FileNotFoundError):
        engine_go.Analyzer(str(tmp_path / "missing.bin.gz"))
    bad = tmp_path / "bad.bin.gz"
    bad.write_bytes(b"not a model")
    with pytest.raises(ValueError):
        engine_go.Analyzer(str(bad))
    with pytest.raises(ValueError):
        engine_go.Analyzer(str(model), config={"maxVisits": -5})


LONG = {"id": "long", "moves": [["B", "D4"]], "rules": "chinese", "komi": 7.5,
        "boardXSize": 19, "boardYSize": 19, "maxVisits": 10_000_000}


def test_cancel_stops_a_search(analyzer):
    timer = threading.Timer(1.0, analyzer.cancel)
    start = time.monotonic()
    timer.start()
    out = analyzer.analyze(LONG)
    assert time.monotonic() - start < 30
    assert len(out) == 1 and out[0]["id"] == "long"
    # Stopped while searching (what it found so far) or, on a slow
    # machine, still queued (noResults).
    assert out[0].get("noResults") or out[0]["rootInfo"]["visits"] < 10_000_000


def test_keyboard_interrupt_stops_cleanly(analyzer):
    import _thread

    # Ctrl-C after a second and, while the search goes on, again every 10 s,
    # as a user presses it again: once in a CI run (2026-12-04) the only
    # interrupt was lost (cause not found; Python itself drops one that it
    # raises inside a finalizer, reporting it as unraisable) and this test
    # waited on the 10,000,000-visit search. 10 s is far longer than an
    # interrupted call takes to return, so a second press never lands after.
    stop = threading.Event()
    presses = []

    def press():
        wait = 1.0
        for _ in range(6):
            if stop.wait(wait):
                return
            presses.append(time.monotonic())
            _thread.interrupt_main()
            wait = 10.0

    presser = threading.Thread(target=press, daemon=True)
    presser.start()
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            analyzer.analyze(LONG)
    finally:
        stop.set()
        presser.join()
    assert time.monotonic() - start < 60
    if len(presses) > 1:
        # Passed, but say so: the first interrupt was lost again.
        warnings.warn(f"Ctrl-C took {len(presses)} presses to stop the search")
    # The engine is still usable afterwards.
    (v,) = analyzer.analyze({"id": "after", "action": "query_version"})
    assert v["id"] == "after"


def test_leaving_a_stream_early_stops_its_searches(analyzer):
    stream = analyzer.analyze_many([dict(LONG, id="a"), dict(LONG, id="b"), dict(LONG, id="c")])
    assert stream.remaining == 3
    del stream
    # Both analysis threads would be busy for hours otherwise.
    start = time.monotonic()
    (v,) = analyzer.analyze({"id": "quick", "moves": [], "rules": "chinese", "komi": 7.5,
                             "boardXSize": 9, "boardYSize": 9, "maxVisits": 1})
    assert v["id"] == "quick"
    assert time.monotonic() - start < 30
