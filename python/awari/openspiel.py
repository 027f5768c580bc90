"""OpenSpiel's ``oware`` and the tables: boards from states, and a perfect bot.

OpenSpiel's ``oware`` game plays this project's ``abapa`` preset (a grand slam is legal and
captures nothing; an empty opponent must be fed; one that cannot be fed ends the game and
the mover takes its own seeds). It takes ``num_seeds_per_house``, so its 12-seed game
(1 per house) and its 24-seed game (2 per house) are inside tables of those layers.

Conventions. OpenSpiel stores 12 absolute houses: player 0 owns houses 0..5, player 1
houses 6..11, each row in its owner's sowing order, and action ``a`` of player ``p`` is
house ``6p + a``. A board here is mover-relative (the mover's six pits first), so
``board = houses[6p:6p+6] + houses[6q:6q+6]`` with ``q = 1 - p``, and an action *is* the
mover's pit number 0..5.

Where the end rules differ. The tables score a position by the seed difference the mover
gets from now on, with endless play sharing the seeds left. OpenSpiel ends a game (and each
side then takes the seeds on its own row) when a score exceeds half of the seeds, at a
repetition of a position (same board, scores and player to move), or when the player to
move has no legal move. The first and the last change no winner; the repetition rule can
(see :class:`PerfectBot` for what is guaranteed).

OpenSpiel's own rule. The own-row tables (:class:`awari.OwnRowDatabase` with
``repetition="first"``) answer under OpenSpiel's repetition rule, a game's history
included: :func:`own_row_history` replays a state's actions and keeps the boards since the
last capture, :func:`own_row_answer` gives the state's value and best moves, and
:class:`OwnRowBot` plays them. OpenSpiel keeps a set of the boards (player to move and
scores included) since the last capture of more than 0 seeds, starting with the initial
board, and ends the game as a move makes a board already in it; the library's history is
that set in the order played, without the current board, so a move repeats exactly when
its board is in ``history + [board]`` with the same player to move. The one rule left
apart is the majority: OpenSpiel stops as soon as a score exceeds half of the seeds, each
side taking its own row at once; that changes no winner, but the final score difference
can differ from the value by up to twice the seeds then on the board.

"Back" from a board: OpenSpiel's Python API (2.0) cannot create an ``oware`` state at a
given position (``new_initial_state(str)`` is not implemented for it), so the way back is
:func:`houses` and :func:`observation` (the exact ``observation_string`` of a state with
that board, player and scores) plus the identity between pits and actions.
"""

from __future__ import annotations

from typing import List, Optional, Tuple, Union

try:
    import pyspiel
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(
        "awari.openspiel needs OpenSpiel: pip install open-spiel"
    ) from e

import awari

HOUSES = 6


def _check_game(state) -> None:
    game = state.get_game()
    if game.get_type().short_name != "oware":
        raise ValueError(f"not an oware state: {game.get_type().short_name}")
    houses = game.get_parameters().get("num_houses_per_player", HOUSES)
    if houses != HOUSES:
        raise ValueError(f"the tables are for 6 houses per player, this game has {houses}")


def parse_observation(state) -> Tuple[int, Tuple[int, int], Tuple[int, ...]]:
    """(player to move, (score of player 0, score of player 1), the 12 absolute houses)
    read from the state's observation string."""
    _check_game(state)
    player, scores, seeds = (part.split() for part in state.observation_string(0).split("|"))
    s0, s1 = (int(s) for s in scores)
    return int(player[0]), (s0, s1), tuple(int(s) for s in seeds)


def to_board(state) -> Tuple[Tuple[int, ...], Tuple[int, int]]:
    """The board of a non-terminal ``oware`` state, mover's row first, and the scores
    (seeds captured so far) as (mover's, opponent's). ``ValueError`` for a terminal state
    (OpenSpiel has then moved the seeds left into the scores) or another game."""
    if state.is_terminal():
        raise ValueError("the game is over: OpenSpiel has collected the seeds left into the scores")
    player, scores, h = parse_observation(state)
    q = 1 - player
    board = h[HOUSES * player : HOUSES * player + HOUSES] + h[HOUSES * q : HOUSES * q + HOUSES]
    return board, (scores[player], scores[q])


def houses(board: awari.BoardLike, player: int) -> Tuple[int, ...]:
    """The 12 absolute houses of OpenSpiel for a mover-relative ``board`` whose mover is
    ``player`` (0 or 1): the inverse of :func:`to_board`."""
    if player not in (0, 1):
        raise ValueError(f"player must be 0 or 1, not {player!r}")
    b = awari.board(board)
    mover, other = b[:HOUSES], b[HOUSES:]
    return mover + other if player == 0 else other + mover


def observation(board: awari.BoardLike, player: int, scores: Tuple[int, int] = (0, 0)) -> str:
    """The ``observation_string`` OpenSpiel shows for this board with ``player`` to move
    and ``scores`` = (mover's, opponent's) captured so far."""
    h = houses(board, player)
    by_player = (scores[0], scores[1]) if player == 0 else (scores[1], scores[0])
    return f"{player} | {by_player[0]} {by_player[1]} | " + " ".join(str(x) for x in h)


def action(pit: int) -> int:
    """The OpenSpiel action of the mover's pit (0..5): the same number."""
    if not 0 <= pit < HOUSES:
        raise ValueError(f"pit must be 0..5, not {pit!r}")
    return pit


class PerfectBot(pyspiel.Bot):
    """An OpenSpiel bot for ``oware`` that plays :meth:`awari.Database.perfect_move`.

    ``database`` must hold the ``abapa`` tables (OpenSpiel's rules). Inside the tables
    (a board whose layer is built) the bot plays the table's perfect move: a move of the
    best value that also makes progress.

    **What is guaranteed**, and tested against OpenSpiel's own games:

    1. Every move the bot makes inside the tables is a best move by the table: its value
       (seeds it captures minus the child's value) equals the value of the position.
    2. Let ``D = (bot's score - opponent's score) + value`` at the first position the bot
       moves in inside the tables (the value for the bot). In a game that ends *without* a
       repetition (a score above half of the seeds, or a player without a legal move),
       the bot wins if ``D > 0`` and does not lose if ``D == 0``, whatever the opponent
       plays; and when the game ends because a player cannot move, the bot's final score
       difference is at least ``D``.
    3. From a position whose value is positive for the bot, the game reaches a capture (or
       its end) before any position repeats: the bot never lets a won position go round.

    **What is not**: OpenSpiel ends the game at the first repetition and gives each side the
    seeds on its own row, while the tables share the seeds of endless play equally. A game
    that goes round in a drawn or lost position (value ``<= 0`` for the bot) can therefore
    end worse for the bot than ``D`` says, or better. No position-indexed table can do
    better: the result depends on the game's history.

    **Above the tables** (a board whose layer is not built), ``above`` decides:

    * ``"search"`` (default): the library's search (:meth:`awari.Database.analyse`,
      iterative-deepening alpha-beta whose leaves are the tables) for ``think_seconds``,
      then its first best move (lowest pit). Not a guarantee of anything.
    * ``"raise"``: :class:`awari.LayerMissing`, naming the layer and its build command.
    * a ``pyspiel.Bot``: that bot chooses the move (it is told of every action, so its
      own state stays in step).
    """

    def __init__(
        self,
        database: awari.Database,
        player_id: Optional[int] = None,
        above: Union[str, "pyspiel.Bot"] = "search",
        think_seconds: float = 1.0,
    ) -> None:
        pyspiel.Bot.__init__(self)
        _check_abapa(database)
        if isinstance(above, str) and above not in ("search", "raise"):
            raise ValueError(f"above must be 'search', 'raise' or a pyspiel.Bot, not {above!r}")
        self._db = database
        self._player_id = player_id
        self._above = above
        self._think = think_seconds

    def player_id(self) -> Optional[int]:
        """The player this bot was made for (informational: it plays whoever is to move)."""
        return self._player_id

    def restart_at(self, state) -> None:
        if isinstance(self._above, pyspiel.Bot):
            self._above.restart_at(state)

    def inform_action(self, state, player_id, action) -> None:
        if isinstance(self._above, pyspiel.Bot):
            self._above.inform_action(state, player_id, action)

    def provides_policy(self) -> bool:
        return False

    def inside_tables(self, state) -> bool:
        """Whether the state's board is in a built layer."""
        board, _ = to_board(state)
        return sum(board) in self._db.layers()

    def choose(self, state) -> Tuple[int, Optional[int]]:
        """(action, the table's value of the move, or None above the tables), without
        playing it."""
        board, _ = to_board(state)
        if sum(board) in self._db.layers() or self._above == "raise":
            m = self._db.perfect_move(board)
            if m is None:
                raise ValueError("no legal move: the game is over")
            return m.pit, m.value
        if isinstance(self._above, pyspiel.Bot):
            return int(self._above.step(state)), None
        analysis = self._db.analyse(board, self._think)
        return analysis.best[0], None

    def step(self, state) -> int:
        """The action to play in ``state`` (for the player to move)."""
        pit, _ = self.choose(state)
        return _legal(state, action(pit))


def _check_abapa(database) -> None:
    if database.rules != awari.ABAPA:
        raise ValueError(
            f"OpenSpiel's oware plays the abapa rules; this database holds '{database.rules}'"
        )


def _legal(state, a: int) -> int:
    """``a``, checked against OpenSpiel's legal actions in ``state``."""
    if a not in state.legal_actions():
        # Cannot happen while OpenSpiel's oware and the abapa preset agree (tested).
        raise RuntimeError(f"action {a} is not legal in OpenSpiel's state: the rules disagree")
    return a


def own_row_history(state) -> Tuple[Tuple[int, ...], List[Tuple[int, ...]]]:
    """The board of a non-terminal ``oware`` state (mover's row first) and its history
    under OpenSpiel's rule, as :class:`awari.OwnRowDatabase` takes it: the boards since the
    last capture of more than 0 seeds (or since the initial board), oldest first, each from
    its own mover, without the state's own board.

    The state's actions (``state.history()``) are replayed from the game's initial state,
    reading each board and the scores from OpenSpiel's observation: a move whose scores
    grew captured, and empties the history. ``ValueError`` for a terminal state or another
    game."""
    board, _ = to_board(state)
    replay = state.get_game().new_initial_state()
    history: List[Tuple[int, ...]] = []
    for a in state.history():
        before, _ = to_board(replay)
        _, scores_before, _ = parse_observation(replay)
        replay.apply_action(a)
        _, scores_after, _ = parse_observation(replay)
        history.append(before)
        if sum(scores_after) > sum(scores_before):
            history.clear()
    return board, history


def _check_own_row(database: awari.OwnRowDatabase) -> None:
    _check_abapa(database)
    if database.repetition != "first":
        raise ValueError(
            "OpenSpiel's oware ends the game at the first repetition; this database answers "
            f"for the {database.repetition} (open it with repetition='first')"
        )


def own_row_answer(
    database: awari.OwnRowDatabase,
    state,
    budget: int = awari.DEFAULT_SEARCH_BUDGET,
) -> awari.OwnRowAnswer:
    """The value of a non-terminal ``oware`` state for the player to move under OpenSpiel's
    own rule (its history included: :func:`own_row_history`), every legal move's interval
    and the best moves; pits are OpenSpiel's actions. The value is the seed difference the
    mover gets from now on, so the final score difference for the mover is the scores'
    difference now plus the value (see the module's note on the majority rule).

    ``database`` must hold the ``abapa`` tables and answer for the first repetition.
    """
    _check_own_row(database)
    board, history = own_row_history(state)
    return database.answer(board, history, budget)


class OwnRowBot(pyspiel.Bot):
    """An OpenSpiel bot for ``oware`` that plays under OpenSpiel's own rule from the
    own-row tables: in each state it plays the first best move of :func:`own_row_answer`
    (the lowest pit among them). When the state's value is exact that is a move proved to
    keep it (the moves are searched again with 10 and 100 times the budget when none is
    proved at first); else one with the largest proved low end.

    **What is guaranteed**, while the values it meets are exact (as everywhere in small
    layers): from a state whose value ``v`` is exact, whatever the opponent plays, the
    bot's gain from that state on (its score minus the opponent's at the end, less the same
    difference at that state) is at least ``v`` when the game ends by a repetition or a
    player without a legal move, and at least ``v`` minus twice the seeds then on the board
    when a score above half of the seeds ends it (OpenSpiel then gives each side its own
    row at once, where play would have gone on). So the bot wins when the scores'
    difference plus ``v`` is positive and does not lose when it is zero.

    ``database`` is an :class:`awari.OwnRowDatabase` of the ``abapa`` rules with
    ``repetition="first"``; a state whose layer (or a layer its search reaches) has neither
    table raises :class:`awari.LayerMissing`. ``budget`` is the search nodes per proof.
    """

    def __init__(
        self,
        database: awari.OwnRowDatabase,
        player_id: Optional[int] = None,
        budget: int = awari.DEFAULT_SEARCH_BUDGET,
    ) -> None:
        pyspiel.Bot.__init__(self)
        _check_own_row(database)
        self._db = database
        self._player_id = player_id
        self._budget = budget

    def player_id(self) -> Optional[int]:
        """The player this bot was made for (informational: it plays whoever is to move)."""
        return self._player_id

    def restart_at(self, state) -> None:
        pass

    def inform_action(self, state, player_id, action) -> None:
        pass

    def provides_policy(self) -> bool:
        return False

    def choose(self, state) -> Tuple[int, awari.OwnRowAnswer]:
        """(action, the state's answer), without playing it."""
        answer = own_row_answer(self._db, state, self._budget)
        # An exact value (read from the table) can come with no move proved to keep it
        # within the budget: the moves are searched again with more nodes.
        budget = self._budget
        for _ in range(2):
            if answer.best or not answer.moves:
                break
            budget *= 10
            answer = own_row_answer(self._db, state, budget)
        if not answer.moves:
            raise ValueError("no legal move: the game is over")
        if answer.best:
            return action(answer.best[0].pit), answer
        top = max(answer.moves, key=lambda m: (m.low, m.high))
        return action(top.pit), answer

    def step(self, state) -> int:
        """The action to play in ``state`` (for the player to move)."""
        a, _ = self.choose(state)
        return _legal(state, a)
