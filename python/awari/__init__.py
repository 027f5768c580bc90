"""Exact endgame databases for Awari / Oware, from Python.

A *board* is 12 pit counts seen from the side to move: its six pits first (pits 0..5, from
its left, in sowing order), then the opponent's six (again in sowing order). Pass it as a
sequence of 12 integers (list, tuple, numpy row) or as a string in the CLI's notation
(``"1 1 1 1 1 2 4 2 3 0 0 0"``; spaces, commas, ``/`` or ``|`` between counts).

A *value* is the seed difference the side to move achieves from now on with perfect play
(its future captures minus the opponent's); endless play shares the seeds left equally.
Pits in answers are numbered 0..5 (the CLI's human output says 1..6).

>>> import awari
>>> db = awari.Database("data/db")                      # doctest: +SKIP
>>> db.value("1 1 1 1 1 2 4 2 3 0 0 0")                  # doctest: +SKIP
0

Errors carry the library's one-line messages: ``ValueError`` for a bad board or rules
name (``TypeError`` for an object that is not a board at all), :class:`LayerMissing` (a
``LookupError``) when a layer is not built, ``OSError`` for a file that cannot be read or
is damaged. When the operating system refused, the ``OSError`` is the one Python's own
``open`` raises (``errno``, ``strerror``, ``filename`` set, and its subclass, such as
``NotADirectoryError``), with the library's line as a note where it says more.
"""

from __future__ import annotations

from typing import List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from awari import _awari
from awari._awari import LayerMissing

__all__ = [
    "AWARI",
    "ABAPA",
    "GRAND_SLAM_CAPTURES",
    "RULES",
    "Database",
    "OwnRowDatabase",
    "LayerMissing",
    "Move",
    "Child",
    "PvStep",
    "PrincipalVariation",
    "Outcome",
    "Analysis",
    "LayerReport",
    "Interval",
    "OwnRowMove",
    "OwnRowAnswer",
    "CYCLES",
    "REPETITIONS",
    "DEFAULT_SEARCH_BUDGET",
    "board",
    "rules",
    "moves",
    "game_over",
    "build",
    "own_row_history",
]

#: Romein & Bal's rules: a grand slam is illegal unless every legal move is one.
AWARI = "awari"
#: Oware Abapa (OpenSpiel's ``oware``): a grand slam is legal and captures nothing.
ABAPA = "abapa"
#: A grand slam is legal and captures everything.
GRAND_SLAM_CAPTURES = "grand-slam-captures"
#: Every rules preset, in the order of their file codes.
RULES = (AWARI, ABAPA, GRAND_SLAM_CAPTURES)

#: The kinds of tables :func:`build` makes, as ``awari build --cycles`` names them: the
#: values (endless play shares the seeds left), the bounds (each side keeps its own row), and
#: the own-row values when the first or the third occurrence of a position ends the game.
CYCLES: Tuple[str, ...] = tuple(_awari.CYCLES)
#: The own-row rule's repetitions: ``"first"`` (a position's second occurrence since the
#: last capture ends the game: OpenSpiel's ``oware``) or ``"third"`` (its third).
REPETITIONS = ("first", "third")
#: Search nodes an own-row proof may visit per position (and per move), as the CLI's
#: ``--search-budget`` defaults.
DEFAULT_SEARCH_BUDGET: int = _awari.DEFAULT_SEARCH_BUDGET

BoardLike = Union[str, Sequence[int]]
Board = Tuple[int, ...]


class Move(NamedTuple):
    """A legal move and what it is worth to the mover."""

    pit: int
    """The mover's pit, 0..5."""
    captured: int
    """Seeds the move captures."""
    value: int
    """``captured - value(child)``: the seed difference the mover gets by playing it."""


class Child(NamedTuple):
    """A legal move and the position it leaves (no database needed)."""

    pit: int
    """The mover's pit, 0..5."""
    captured: int
    """Seeds the move captures."""
    child: Board
    """The board after the move, seen from the opponent (who moves next)."""


class PvStep(NamedTuple):
    """One move of a principal variation."""

    board: Board
    """The position before the move, from its mover's side."""
    value: int
    """Its value."""
    pit: int
    """The move played, 0..5."""
    captured: int
    """Seeds it captures."""


class PrincipalVariation(NamedTuple):
    """Perfect play from a position: the moves, the last position and why it stops."""

    steps: List[PvStep]
    last: Board
    """The position after the last move, from its mover's side."""
    end: str
    """``"game over"``, ``"repetition"`` (perfect play goes round for ever) or ``"limit"``."""
    end_value: Optional[int]
    """The mover's end value in ``last`` when ``end == "game over"``, else None."""


class Outcome(NamedTuple):
    """The end of a game in progress under perfect play."""

    verdict: str
    """``"win"``, ``"draw"`` or ``"loss"``, for the side to move."""
    mover_score: float
    """Final score of the side to move (a half when endless play shares an odd count)."""
    opponent_score: float
    """Final score of the opponent."""


class Analysis(NamedTuple):
    """What :meth:`Database.analyse` found."""

    value: int
    """The value: exact if ``exact``, else the depth-limited minimax value."""
    exact: bool
    """True when looked up, or when no leaf of the search was cut off by the depth."""
    depth: int
    """The depth of the last finished iteration (0: looked up)."""
    best: List[int]
    """The best pits, 0..5."""
    moves: List[Move]
    """Every legal move with its value (exact or estimated as ``value``)."""


class LayerReport(NamedTuple):
    """What :func:`build` did with one layer."""

    seeds: int
    positions: int
    built: bool
    """False when the layer was already on disk (then it was checked)."""
    seconds: float
    bytes: int
    """Bytes of its values file."""


class Interval(NamedTuple):
    """What a position is proved to be worth to its mover under the own-row rule: the
    value when ``low == high`` (:attr:`exact`), else the interval the search proved within
    its budget."""

    low: int
    """The mover is proved to get at least this."""
    high: int
    """And at most this."""
    nodes: int
    """Search nodes the proof took (for an answer with its moves: every search of it)."""
    stuck: bool = False
    """When not exact: whether no budget would prove more, because every line left open
    ends at a capture whose own value neither the tables nor a search of it decide. (A
    probe searches such captures on its own, so it ends open for want of nodes.)"""

    @property
    def exact(self) -> bool:
        """Whether the value is proved exactly."""
        return self.low == self.high


class OwnRowMove(NamedTuple):
    """A legal move under the own-row rule, after the history, and what it is proved to
    be worth to the mover."""

    pit: int
    """The mover's pit, 0..5."""
    captured: int
    """Seeds it captures (a capture empties the history)."""
    child: Board
    """The board it leaves, seen from the opponent (who moves next)."""
    ends_by_repetition: bool
    """Whether it repeats a position for the last time the rule allows: the game ends
    there, each side keeping the seeds on its own row."""
    low: int
    """The mover is proved to get at least this by playing it."""
    high: int
    """And at most this."""

    def keeps(self, value: int) -> bool:
        """Whether the move is proved to keep ``value``: its interval is ``value`` alone."""
        return self.low == value and self.high == value


class OwnRowAnswer(NamedTuple):
    """A position under the own-row rule after its history: its value, every move, and
    the best moves."""

    value: Interval
    moves: List[OwnRowMove]
    """Every legal move, in pit order (empty when the game is over)."""
    best: List[OwnRowMove]
    """When the value is exact, the moves proved to keep it; else those with the largest
    proved low. In pit order, as the CLI's ``best``."""


def _history(history: Sequence[BoardLike]) -> List[BoardLike]:
    # A string is a sequence too, of characters: refused here, before `list` splits it.
    if isinstance(history, str):
        raise TypeError("a history is a sequence of boards, not a string")
    return list(history)


def board(board: BoardLike) -> Board:
    """The board as a tuple of 12 ints, checked: ``ValueError`` names what is wrong."""
    return _awari.parse_board(board)


def rules(name: str) -> str:
    """The canonical name of a rules preset (``ValueError`` for an unknown or
    score-dependent one)."""
    return _awari.parse_rules(name)


def moves(board: BoardLike, rules: str = AWARI) -> List[Child]:
    """The legal moves of ``board`` under ``rules``, in pit order, with what each captures
    and the board it leaves (from the opponent's side). Empty when the game is over (see
    :func:`game_over`). No database needed."""
    return [Child(p, c, b) for p, c, b in _awari.moves(board, rules)]


def game_over(board: BoardLike, rules: str = AWARI) -> Optional[int]:
    """If the game is over in ``board`` (the mover has no seeds, or under abapa and
    grand-slam-captures an empty opponent cannot be fed), the mover's end value: the seeds
    it takes minus the seeds the opponent takes. Else None."""
    return _awari.game_over(board, rules)


class Database:
    """The layers of one rules preset in a database folder built by ``awari build`` or
    :func:`build`.

    Opening checks the header of every layer file present (``OSError`` if one is damaged
    or of other rules); a missing layer is reported when a probe needs it
    (:class:`LayerMissing`). Blocks are read with positioned reads and kept in a small
    cache; the object may be shared between threads.
    """

    __slots__ = ("_db",)

    def __init__(self, path, rules: str = AWARI) -> None:
        self._db = _awari.Database(path, rules)

    @property
    def path(self):
        """The database folder, as given."""
        return self._db.path

    @property
    def rules(self) -> str:
        """The rules preset."""
        return self._db.rules

    def layers(self) -> List[int]:
        """The layers present, in order."""
        return self._db.layers()

    def complete_up_to(self) -> Optional[int]:
        """The largest n such that layers 0..n are all present (None if layer 0 is not)."""
        return self._db.complete_up_to()

    def value(self, board: BoardLike) -> int:
        """The value of ``board`` for the side to move."""
        return self._db.value(board)

    def moves(self, board: BoardLike) -> List[Move]:
        """Every legal move with its value, in pit order (empty when the game is over)."""
        return [Move(*m) for m in self._db.moves(board)]

    def best_moves(self, board: BoardLike) -> List[Move]:
        """The moves of highest value, as (pit, captured, value), in pit order (empty when
        the game is over)."""
        return [Move(*m) for m in self._db.best_moves(board)]

    def perfect_move(self, board: BoardLike) -> Optional[Move]:
        """The move perfect play makes: a best move that also makes progress (a won
        position heads for the capture that realises its value instead of going round; a
        lost one delays). None when the game is over."""
        m = self._db.perfect_move(board)
        return None if m is None else Move(*m)

    def principal_variation(self, board: BoardLike, max_plies: int = 200) -> PrincipalVariation:
        """Perfect play from ``board`` until the game ends, a position repeats, or
        ``max_plies`` moves."""
        steps, last, end, end_value = self._db.principal_variation(board, max_plies)
        return PrincipalVariation([PvStep(*s) for s in steps], last, end, end_value)

    def outcome(self, board: BoardLike, captured_mover: int, captured_opponent: int) -> Outcome:
        """How a game in progress ends with perfect play, given the seeds each side has
        captured so far."""
        return Outcome(*self._db.outcome(board, captured_mover, captured_opponent))

    def values(self, array) -> np.ndarray:
        """The values of many boards: an ``(N, 12)`` integer array in (any integer dtype;
        ``uint8`` and ``int64`` are read without a copy), an ``int8`` array of N values out.

        Lookups are grouped by block, so each block is read and decompressed once per call,
        in parallel, with the GIL released; rows of layers held by :meth:`load` are read in
        place instead. A bad row raises ``ValueError`` and a row whose
        layer is not built :class:`LayerMissing`, both naming the first such row
        (``"row 17: ..."``); a non-integer array raises ``TypeError``.
        """
        a = np.asarray(array)
        if a.ndim != 2 or a.shape[1] != 12:
            raise ValueError(f"values needs an array of shape (N, 12), got {a.shape}")
        kind = a.dtype.kind
        if kind not in "iu" or a.dtype == np.bool_:
            raise TypeError(f"values needs an integer array, got dtype {a.dtype}")
        if a.dtype == np.uint8:
            return self._db.values_u8(np.ascontiguousarray(a))
        if kind == "u" and a.size and int(a.max()) > np.iinfo(np.int64).max:
            # Only uint64 can hold counts that int64 cannot: refuse them rather than wrap.
            row = int(np.argmax((a > 48).any(axis=1)))
            raise ValueError(f"row {row}: a count does not fit in one pit (at most 48)")
        return self._db.values_i64(np.ascontiguousarray(a, dtype=np.int64))

    def load(self, layers: Optional[Sequence[int]] = None) -> int:
        """Reads ``layers`` (default: every layer present) into memory, uncompressed (one
        byte a position: layers 0..20 take 230 MB), and returns the bytes now held.

        :meth:`values` then looks rows of those layers up in place instead of reading and
        decompressing every block a batch touches, which is most of a large random batch's
        time. Single probes are unaffected. ``LayerMissing`` for a layer not built.
        """
        return self._db.load(None if layers is None else list(layers))

    def unload(self) -> None:
        """Forgets the layers :meth:`load` read."""
        self._db.unload()

    def loaded_bytes(self) -> int:
        """Bytes held by :meth:`load`."""
        return self._db.loaded_bytes()

    def analyse(self, board: BoardLike, think_seconds: float = 1.0) -> Analysis:
        """The library's search, for boards above the tables: iterative-deepening
        alpha-beta whose leaves are the tables, within ``think_seconds``. A board inside
        the tables is looked up (exact). See the README's "Above the tables".

        ``think_seconds`` is 0 to 3600 (``ValueError`` otherwise). Ctrl-C stops the search
        within moments and raises ``KeyboardInterrupt``."""
        value, exact, depth, best, moves = self._db.analyse(board, think_seconds)
        return Analysis(value, exact, depth, best, [Move(*m) for m in moves])

    def __repr__(self) -> str:
        return repr(self._db)


class OwnRowDatabase:
    """The own-row tables of one rules preset (``awari build --cycles bounds`` and
    ``--cycles own-row-first`` or ``own-row-third``, or :func:`build` with ``cycles``),
    probed with a game's history.

    Under the own-row rule a game without captures ends when a position (board and side to
    move) occurs for the ``repetition``-th time since the last capture (``"first"``: its
    second occurrence, OpenSpiel's ``oware``; ``"third"``: its third), and each side then
    keeps the seeds on its own row. A position's value depends on its *history*: the
    boards since the last capture, oldest first, each seen from its own mover, the last
    being the one just before ``board`` (empty at the opening or just after a capture).
    :func:`own_row_history` makes one from a start board and moves.

    Each answer is proved by the library's search from the tables within ``budget`` nodes
    (default :data:`DEFAULT_SEARCH_BUDGET`, as the CLI's): exact, or the interval proved.
    A layer the search needs with neither its own-row values nor its bounds raises
    :class:`LayerMissing` with the build command; a history that cannot come before the
    board (other seed counts, or a position already repeated as often as ends the game)
    raises ``ValueError``.
    """

    __slots__ = ("_db",)

    def __init__(self, path, rules: str = ABAPA, repetition: str = "first") -> None:
        self._db = _awari.OwnRowDatabase(path, rules, repetition)

    @property
    def path(self):
        """The database folder, as given."""
        return self._db.path

    @property
    def rules(self) -> str:
        """The rules preset."""
        return self._db.rules

    @property
    def repetition(self) -> str:
        """``"first"`` or ``"third"``."""
        return self._db.repetition

    def complete_up_to(self) -> Optional[int]:
        """The largest n such that own-row layers 0..n are all present (None if layer 0 is
        not)."""
        return self._db.complete_up_to()

    def value(
        self,
        board: BoardLike,
        history: Sequence[BoardLike] = (),
        budget: int = DEFAULT_SEARCH_BUDGET,
    ) -> Interval:
        """The value of ``board`` for its mover after ``history``: exact, or the interval
        proved."""
        return Interval(*self._db.value(board, _history(history), budget))

    def answer(
        self,
        board: BoardLike,
        history: Sequence[BoardLike] = (),
        budget: int = DEFAULT_SEARCH_BUDGET,
    ) -> OwnRowAnswer:
        """The value, every legal move's interval (a capture's from its child with an empty
        history, a quiet move's by a search of its child after the history and ``board``,
        each within ``budget`` nodes) and the best moves, as ``awari probe --cycles
        own-row-...`` answers."""
        value, moves, best = self._db.answer(board, _history(history), budget)
        ms = [OwnRowMove(*m) for m in moves]
        return OwnRowAnswer(Interval(*value), ms, [m for m in ms if m.pit in best])

    def moves(
        self,
        board: BoardLike,
        history: Sequence[BoardLike] = (),
        budget: int = DEFAULT_SEARCH_BUDGET,
    ) -> List[OwnRowMove]:
        """Every legal move with its interval, in pit order (empty when the game is over)."""
        return self.answer(board, history, budget).moves

    def best_moves(
        self,
        board: BoardLike,
        history: Sequence[BoardLike] = (),
        budget: int = DEFAULT_SEARCH_BUDGET,
    ) -> List[OwnRowMove]:
        """The moves proved to keep the value when it is exact, else those with the largest
        proved low, in pit order (empty when the game is over)."""
        return self.answer(board, history, budget).best

    def values(self, array) -> np.ndarray:
        """The values of many boards, each with an empty history (the opening, or just
        after a capture: the history the tables are built for), from the tables alone: an
        ``(N, 12)`` integer array in (as :meth:`Database.values` takes it), an ``(N, 2)``
        ``int8`` array out, each row ``(low, high)`` for the board's mover, exact where
        ``low == high``.

        No search is made: each row is the pair the own-row tables hold (the bounds where a
        layer's own-row values are not built), which :meth:`value` with an empty history
        starts from and can only narrow (where a budget ran out in the build). Lookups are
        grouped by block, each block read and decompressed once per call, in parallel,
        with the GIL released. A bad row raises ``ValueError`` and a row with neither its
        own-row layer nor its bounds :class:`LayerMissing`, both naming the first such row
        (``"row 17: ..."``); a non-integer array raises ``TypeError``.
        """
        a = np.asarray(array)
        if a.ndim != 2 or a.shape[1] != 12:
            raise ValueError(f"values needs an array of shape (N, 12), got {a.shape}")
        kind = a.dtype.kind
        if kind not in "iu" or a.dtype == np.bool_:
            raise TypeError(f"values needs an integer array, got dtype {a.dtype}")
        if a.dtype == np.uint8:
            return self._db.intervals_u8(np.ascontiguousarray(a))
        if kind == "u" and a.size and int(a.max()) > np.iinfo(np.int64).max:
            # Only uint64 can hold counts that int64 cannot: refuse them rather than wrap.
            row = int(np.argmax((a > 48).any(axis=1)))
            raise ValueError(f"row {row}: a count does not fit in one pit (at most 48)")
        return self._db.intervals_i64(np.ascontiguousarray(a, dtype=np.int64))

    def __repr__(self) -> str:
        return repr(self._db)


def own_row_history(
    start: BoardLike,
    pits: Sequence[int],
    rules: str = ABAPA,
    repetition: str = "first",
) -> Tuple[Board, List[Board]]:
    """The board reached by playing ``pits`` (each 0..5, the mover's) from ``start``, and
    its history under the own-row rule: the boards since the last capture, oldest first,
    each from its own mover (what :class:`OwnRowDatabase` takes). ``ValueError`` for an
    illegal move or a move after the game ended (by the rules, or by a repetition)."""
    board, history = _awari.own_row_history(start, list(pits), rules, repetition)
    return board, list(history)


def build(
    path,
    rules: str = AWARI,
    max_seeds: int = 12,
    progress: bool = True,
    threads: Optional[int] = None,
    cycles: str = "share",
    search_budget: int = DEFAULT_SEARCH_BUDGET,
) -> List[LayerReport]:
    """Builds every missing layer 0..max_seeds of ``rules`` into the folder ``path`` (as
    ``awari build`` does; layers already there are checked and kept).

    ``cycles`` picks the tables, as ``awari build --cycles`` does (see :data:`CYCLES`):
    ``"share"`` the values (the default), ``"bounds"`` the bounds, ``"own-row-first"`` or
    ``"own-row-third"`` the own-row values :class:`OwnRowDatabase` reads (build the bounds
    too: the search falls back on them). ``search_budget`` is the nodes each own-row
    proof may visit (a position whose search runs out keeps the interval it proved).

    ``progress`` shows a bar per layer on stderr when stderr is a terminal. Ctrl-C stops
    the build within moments and raises ``KeyboardInterrupt`` saying which layer was
    stopped: the layers below it are whole on disk, nothing of it was written, and the
    same call resumes there. ``threads`` defaults to one per core.

    ``ValueError`` for an unknown rules name or ``max_seeds`` out of range, ``MemoryError``
    when the largest layer would not fit in memory (refused before any work), ``OSError``
    for a file problem or a folder another build holds.
    """
    reports = _awari.build(path, rules, max_seeds, progress, threads, cycles, search_budget)
    return [LayerReport(*r) for r in reports]
