"""engine_go: the engine (a Go engine that does what KataGo does) in-process.

- ``Position``: a board with KataGo's rules, history, scoring, SGF and the
  network's input features.
- ``Net``: a KataGo network on the CPU, batched evaluation to NumPy arrays.
- ``Analyzer``: KataGo's JSON analysis protocol, the engine's own analysis
  engine in-process.
- ``read_training_rows``: KataGo's training ``.npz`` files as NumPy arrays.

See ``docs/python.md`` in the repository.
"""

from ._engine_go import (
    AnalysisStream,
    Analyzer,
    Net,
    Position,
    __version__,
    read_training_rows,
)

__all__ = [
    "AnalysisStream",
    "Analyzer",
    "Net",
    "Position",
    "read_training_rows",
    "__version__",
]
