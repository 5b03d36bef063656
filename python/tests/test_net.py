"""Net.evaluate against KataGo 1.17.2's raw network outputs
(shared/vectors/nn/nn.jsonl: 1 visit, all 8 symmetries averaged; see the
README there for the tolerances used here)."""

import numpy as np
import pytest

import engine_go
from query_position import position_of, uses_history

# KataGo's analysis evaluates the root with conservativePass and
# enablePassingHacks: where a pass by the player to move would end the game
# it hides the history and the "pass ends the phase" input, and caps the
# pass prior. Net.evaluate is the plain network, so these records (the
# game ends on the next pass) are compared by Analyzer.analyze only.
ANALYSIS_ROOT_ONLY = {"pass1_9_chinese_k7.5_withHistory", "pass2_9_chinese_k7.5_withHistory",
                      "pass1_9_chinese_k7.5", "pass2_9_chinese_k7.5"}


def test_evaluate_matches_katago(net, nn_records):
    checked = 0
    for rec in nn_records:
        q, r = rec["query"], rec["response"]
        if q["id"] in ANALYSIS_ROOT_ONLY:
            continue
        pos = position_of(q)
        out = net.evaluate([pos], symmetry="average", history=uses_history(q))
        w, h = q["boardXSize"], q["boardYSize"]
        assert out["policy"].shape == (1, w * h + 1)
        assert out["policy"].dtype == np.float32
        assert out["ownership"].shape == (1, h, w)
        ref_policy = np.array(r["policy"], dtype=np.float64)
        policy = out["policy"][0].astype(np.float64)
        illegal = ref_policy == -1
        assert np.array_equal(policy == -1, illegal), q["id"]
        np.testing.assert_allclose(policy, ref_policy, atol=1e-4, rtol=0, err_msg=q["id"])
        np.testing.assert_allclose(
            out["ownership"][0].reshape(-1), r["ownership"], atol=1e-3, rtol=0, err_msg=q["id"]
        )
        info = r["rootInfo"]
        win, loss, no_result = out["value"][0]
        assert abs(0.5 + 0.5 * (win - loss) - info["rawWinrate"]) < 1e-4, q["id"]
        assert abs(no_result - info["rawNoResultProb"]) < 1e-5, q["id"]
        assert abs(out["score_lead"][0] - info["rawLead"]) < 1e-3, q["id"]
        assert abs(out["score_mean"][0] - info["rawScoreSelfplay"]) < 1e-3, q["id"]
        assert pos.to_play == info["currentPlayer"], q["id"]
        checked += 1
    assert checked >= 30


def test_batches_equal_single_rows(net, nn_records):
    # Positions of one size evaluated together and one by one: the same.
    pos = [position_of(rec["query"]) for rec in nn_records
           if (rec["query"]["boardXSize"], rec["query"]["boardYSize"]) == (19, 19)]
    assert len(pos) >= 8
    together = net.evaluate(pos, symmetry=3)
    for i, p in enumerate(pos):
        alone = net.evaluate(p, symmetry=3)
        for k in ("policy", "value", "score_lead", "ownership"):
            np.testing.assert_allclose(together[k][i], alone[k][0], atol=1e-5, err_msg=k)


def test_symmetries_differ_and_average(net):
    pos = engine_go.Position(9, ["E5", "C3", "G7"])
    outs = [net.evaluate([pos], symmetry=s) for s in range(8)]
    avg = net.evaluate([pos], symmetry="average")
    mean_value = np.mean([o["value"][0] for o in outs], axis=0)
    np.testing.assert_allclose(avg["value"][0], mean_value, atol=1e-5)
    assert not np.allclose(outs[0]["policy"], outs[1]["policy"], atol=1e-7)


def test_evaluate_features_matches_evaluate(net):
    pos = engine_go.Position(19, ["Q16", "D4", "Q4", "D16", "R10"])
    spatial, global_ = pos.features()
    assert spatial.shape == (22, 19, 19) and global_.shape == (19,)
    a = net.evaluate([pos])
    b = net.evaluate_features(spatial[None], global_[None])
    # Without rules, evaluate_features keeps the net's no-result
    # probability; under tromp-taylor evaluate() folds it into win/loss.
    bv = b["value"][0]
    np.testing.assert_allclose(a["value"][0][:2], bv[:2] / bv[:2].sum(), atol=1e-5)
    assert a["value"][0][2] == 0
    np.testing.assert_allclose(a["score_lead"], b["score_lead"], atol=1e-4)
    np.testing.assert_allclose(a["ownership"], b["ownership"], atol=1e-5)
    # The policy of evaluate() is renormalised over legal moves only.
    legal = a["policy"][0] >= 0
    pb = b["policy"][0] * legal
    np.testing.assert_allclose(a["policy"][0][legal], (pb / pb.sum())[legal], atol=1e-5)


def test_white_to_move_values_are_its_own(net):
    # After a black move, white is to move: win/loss are white's.
    pos = engine_go.Position(9, ["E5"])
    assert pos.to_play == "W"
    out = net.evaluate([pos])
    assert out["value"].shape == (1, 3)
    assert abs(out["value"][0].sum() - 1) < 1e-5


def test_bad_inputs_raise(net, model, shared):
    with pytest.raises(FileNotFoundError):
        engine_go.Net(str(model) + ".missing")
    with pytest.raises(ValueError):
        engine_go.Net(str(shared / "vectors" / "nn" / "nn.jsonl"))
    with pytest.raises(ValueError):
        net.evaluate([engine_go.Position(9), engine_go.Position(13)])
    with pytest.raises(ValueError):
        net.evaluate([engine_go.Position(9)], symmetry=8)
    with pytest.raises(TypeError):
        net.evaluate(["not a position"])
    with pytest.raises(ValueError):
        net.evaluate_features(np.zeros((1, 21, 9, 9), np.float32), np.zeros((1, 19), np.float32))
    for bad in ("fp64", "fp32,nnCpuBackend=libtorch", ""):
        with pytest.raises(ValueError):
            engine_go.Net(str(model), precision=bad)


def test_precision_defaults_to_auto_and_pins_fp32(net, model):
    # The fixture pins KataGo's arithmetic; unset is the engine's auto,
    # which says what it chose (bf16 or fp32 by this CPU) and why.
    assert net.device.startswith("CPU, fp32, "), net.device
    default = engine_go.Net(str(model), threads=1)
    assert "(nnPrecision = auto: " in default.device, default.device
    out = default.evaluate(engine_go.Position(9))
    assert abs(out["value"][0].sum() - 1) < 1e-5
