"""Type stubs of engine_go: the engine (a Go engine that does what KataGo
does) in-process. See docs/python.md in the repository."""

from os import PathLike
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str

# A point: GTP text ("D4", "pass") or (x, y) with y = 0 the top row.
Move = Union[str, Tuple[int, int], None]
# A move with its color, as in a KataGo query: ("B", "D4").
ColoredMove = Tuple[str, Move]
StrPath = Union[str, "PathLike[str]"]

class Position:
    """A Go position: board, rules and komi, the moves so far, the player
    to move. Points are (x, y) with x the column from the left and y the
    row from the top (board[y, x], policy index y * width + x); GTP
    coordinates count rows from the bottom."""

    def __init__(
        self,
        size: Union[int, Tuple[int, int]] = 19,
        moves: Iterable[Union[Move, ColoredMove]] = (),
        rules: Union[str, Mapping[str, Any]] = "tromp-taylor",
        komi: float = 7.5,
        setup: Optional[Iterable[ColoredMove]] = None,
        to_play: Optional[str] = None,
    ) -> None:
        """``size``: 19 or (columns, rows); ``moves``: moves in turn, or
        (color, move) pairs; ``rules``: a KataGo rules name, compact rules
        string or JSON rules dict; ``setup``: (color, point) stones placed
        first (KataGo's initialStones); ``to_play``: who moves first
        (KataGo's initialPlayer). Raises ValueError for an illegal move or
        bad rules."""
    def play(self, move_: Move, color: Optional[str] = None) -> None:
        """Plays a move for the player to move (or ``color``); ValueError
        if illegal (occupied, ko, superko, suicide, finished game)."""
    def legal_moves(self) -> List[str]:
        """The legal moves of the player to move in GTP form, "pass" last;
        empty once the game is finished."""
    def is_legal(self, move_: Move) -> bool:
        """Whether the player to move may play ``move_``."""
    @property
    def to_play(self) -> str:
        """"B" or "W"."""
    @property
    def size(self) -> Tuple[int, int]:
        """(columns, rows)."""
    @property
    def komi(self) -> float:
        """The komi."""
    @property
    def rules(self) -> Dict[str, Any]:
        """KataGo's JSON rules, komi included."""
    @property
    def board(self) -> npt.NDArray[np.int8]:
        """[rows, columns], row 0 at the top: 1 black, -1 white, 0 empty."""
    @property
    def moves(self) -> List[Tuple[str, str]]:
        """The moves so far as (color, GTP move) pairs."""
    @property
    def is_finished(self) -> bool:
        """Whether the game has ended under its rules."""
    @property
    def encore_phase(self) -> int:
        """Territory scoring's encore phase (0 = the main phase)."""
    def score(self) -> float:
        """The final score of a finished game, white minus black (KataGo's
        sign); ValueError before the end."""
    def result(self) -> Optional[str]:
        """"B+3.5", "W+1", "0" or "Void" once finished, else None."""
    def features(
        self, history: bool = True
    ) -> Tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        """KataGo's V7 inputs for the player to move: spatial [22, rows,
        columns] and global [19]; history=False hides previous moves."""
    def copy(self) -> "Position":
        """A copy."""
    @staticmethod
    def from_sgf(text: str) -> "Position":
        """The first game of an SGF text (size, KM, RU, setup, main line);
        ValueError on bad SGF or an illegal move."""
    def to_sgf(self) -> str:
        """This game as SGF, with KataGo's compact rules string in RU and
        RE once finished."""

class Net:
    """A KataGo network on the CPU (pure-Rust backend)."""

    def __init__(
        self,
        model: StrPath,
        threads: Optional[int] = None,
        max_batch: int = 64,
        precision: Optional[str] = None,
    ) -> None:
        """Loads a KataGo .bin.gz/.bin network; ``threads`` network server
        threads (default one per core), ``max_batch`` positions per forward
        pass, ``precision`` the engine's nnPrecision ("fp32" for KataGo's
        arithmetic; None/"auto": the engine's default, bf16 for a wide net
        where the CPU runs it, else fp32). FileNotFoundError / ValueError
        for a missing / bad model or a precision this CPU does not run."""
    @property
    def name(self) -> str:
        """The network's name."""
    @property
    def version(self) -> int:
        """KataGo's model version."""
    @property
    def device(self) -> str:
        """Where it runs."""
    @property
    def num_inputs(self) -> Tuple[int, int]:
        """(spatial planes, global inputs): (22, 19) for V7 inputs."""
    def evaluate(
        self,
        positions: Union[Position, Sequence[Position]],
        symmetry: Union[None, int, str] = None,
        history: bool = True,
    ) -> Dict[str, npt.NDArray[np.float32]]:
        """Evaluates positions of one board size in batches, with the GIL
        released. Returns ``policy`` [N, H*W+1] (pass last, illegal -1),
        ``value`` [N, 3] (win, loss, no result), ``score_lead``,
        ``score_mean``, ``score_stdev`` [N] and ``ownership`` [N, H, W], all
        for the player to move. ``symmetry``: None/0-7 or "average" (all 8
        averaged); ``history=False``: as KataGo's analysis root."""
    def evaluate_features(
        self, spatial: npt.NDArray[np.float32], global_: npt.NDArray[np.float32]
    ) -> Dict[str, npt.NDArray[np.float32]]:
        """Evaluates caller-built inputs, spatial [N, C, H, W] and global
        [N, G]; the same outputs as ``evaluate``, policy over every
        point."""

class AnalysisStream(Iterator[Dict[str, Any]]):
    """Responses of ``Analyzer.analyze_many`` as they finish."""

    def __iter__(self) -> "AnalysisStream": ...
    def __next__(self) -> Dict[str, Any]: ...
    @property
    def remaining(self) -> int:
        """Queries not yet finished."""

class Analyzer:
    """KataGo's JSON analysis engine in-process (the same engine and
    responses as ``engine analysis``)."""

    def __init__(
        self,
        model: StrPath,
        config: Union[None, StrPath, Mapping[str, Union[bool, int, float, str]]] = None,
        threads: Optional[int] = None,
    ) -> None:
        """``config``: None (the built-in configs/analysis.toml), a config
        file, or a dict of keys over the built-in config; ``threads``:
        positions searched at once (numAnalysisThreads)."""
    def analyze(self, query: Mapping[str, Any]) -> List[Dict[str, Any]]:
        """One KataGo query (a dict); its responses in turn order.
        ValueError on an error response, UserWarning for warnings;
        KeyboardInterrupt stops the search first."""
    def analyze_many(self, queries: Iterable[Mapping[str, Any]]) -> AnalysisStream:
        """Sends every query at once (batched together) and yields the
        responses as they finish; refused queries yield their error dict."""
    def cancel(self) -> None:
        """Terminates every query in progress (KataGo's terminate_all)."""
    def close(self) -> None:
        """Stops the engine."""
    def __enter__(self) -> "Analyzer": ...
    def __exit__(self, *args: Any) -> bool: ...

def read_training_rows(path: StrPath) -> Dict[str, npt.NDArray[Any]]:
    """A KataGo training .npz as arrays named as KataGo names them
    (binaryInputNCHWPacked, globalInputNC, policyTargetsNCMove,
    globalTargetsNC, scoreDistrN, valueTargetsNCHW, qValueTargetsNCMove,
    and metadataInputNC in human-SL data). FileNotFoundError / ValueError
    for a missing / bad file."""
