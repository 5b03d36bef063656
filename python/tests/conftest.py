"""Shared fixtures: the reference data folder and the test network.

The data is KataGo 1.17.2's reference vectors (``shared/vectors``) and the
g170 b6c96 network. The folder is ``ENGINE_SHARED_DIR`` if set, else
``../shared`` beside the checkout; without it the tests fail (a missing
folder must never look like a pass).
"""

import json
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MODEL_NAME = "g170-b6c96-s175395328-d26788732.bin.gz"


def _shared_dir() -> Path:
    env = os.environ.get("ENGINE_SHARED_DIR")
    if env:
        d = Path(env)
        if not d.is_dir():
            raise RuntimeError(f"ENGINE_SHARED_DIR={env} is not a directory")
        return d
    d = REPO.parent / "shared"
    if not d.is_dir():
        raise RuntimeError(
            f"reference data not found: expected {d} (KataGo networks and vectors; CI puts "
            "shared/ beside the checkout) or set ENGINE_SHARED_DIR"
        )
    return d


@pytest.fixture(scope="session")
def shared() -> Path:
    try:
        return _shared_dir()
    except RuntimeError as e:
        pytest.fail(str(e), pytrace=False)


@pytest.fixture(scope="session")
def model(shared) -> Path:
    m = shared / "models" / MODEL_NAME
    if not m.is_file():
        pytest.fail(f"test network missing: {m}", pytrace=False)
    return m


@pytest.fixture(scope="session")
def nn_records(shared):
    path = shared / "vectors" / "nn" / "nn.jsonl"
    if not path.is_file():
        pytest.fail(f"reference outputs missing: {path}", pytrace=False)
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.fixture(scope="session")
def net(model):
    import engine_go

    # KataGo's arithmetic (unset, the engine's auto may pick bf16).
    return engine_go.Net(str(model), precision="fp32")


@pytest.fixture(scope="session")
def analyzer(model):
    import engine_go

    # The reference was made with KataGo's default SIDETOMOVE perspective
    # (the built-in config reports BLACK).
    a = engine_go.Analyzer(
        str(model),
        config={"reportAnalysisWinratesAs": "SIDETOMOVE", "nnPrecision": "fp32"},
        threads=2,
    )
    yield a
    a.close()
