"""read_training_rows against NumPy's own reading of KataGo's .npz
(shared/vectors/npz, written by KataGo 1.17.2's self-play)."""

import numpy as np
import pytest

import engine_go

SHAPES = {
    "binaryInputNCHWPacked": (np.uint8, (22, 46)),
    "globalInputNC": (np.float32, (19,)),
    "policyTargetsNCMove": (np.int16, (2, 362)),
    "globalTargetsNC": (np.float32, (80,)),
    "scoreDistrN": (np.int8, (842,)),
    "valueTargetsNCHW": (np.int8, (5, 19, 19)),
    "qValueTargetsNCMove": (np.int16, (3, 362)),
}


def npz_files(shared):
    files = sorted((shared / "vectors" / "npz").glob("*.npz"))
    files += sorted((shared / "vectors" / "npz-more").glob("*.npz"))
    assert files, "no npz files in shared/vectors"
    return files


def test_rows_equal_numpy(shared):
    for path in npz_files(shared):
        rows = engine_go.read_training_rows(str(path))
        ref = np.load(path)
        assert set(rows) == set(SHAPES), path.name
        n = rows["globalInputNC"].shape[0]
        for name, (dtype, shape) in SHAPES.items():
            a = rows[name]
            assert a.dtype == dtype and a.shape == (n, *shape), (path.name, name)
            np.testing.assert_array_equal(a, ref[name], err_msg=f"{path.name} {name}")


def test_first_file_has_katagos_row_count(shared):
    rows = engine_go.read_training_rows(shared / "vectors" / "npz" / "1F20939B3476347D.npz")
    assert rows["globalTargetsNC"].shape[0] == 295
    assert (rows["globalTargetsNC"][:, 63] == 3).all()  # data format version


def test_bad_files_raise(shared, tmp_path):
    with pytest.raises(FileNotFoundError):
        engine_go.read_training_rows(tmp_path / "missing.npz")
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ValueError):
        engine_go.read_training_rows(bad)
