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
        if database.rules != awari.ABAPA:
            raise ValueError(
                f"OpenSpiel's oware plays the abapa rules; this database holds '{database.rules}'"
            )
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
        a = action(pit)
        if a not in state.legal_actions():
            # Cannot happen while OpenSpiel's oware and the abapa preset agree (tested).
            raise RuntimeError(f"action {a} is not legal in OpenSpiel's state: the rules disagree")
        return a
