"""The own-row values from Python (awari.OwnRowDatabase, awari.openspiel's own-row
functions and OwnRowBot): the same answers as the CLI, the same repetitions as OpenSpiel's
oware, exact values that agree with an exhaustive search of OpenSpiel's own game, and the
bot's guarantee in games against OpenSpiel's MCTS bot."""

import json
import random
import subprocess
import sys

import numpy as np
import pytest

import awari
from conftest import random_boards

pyspiel = pytest.importorskip("pyspiel")

from awari import openspiel as aos  # noqa: E402

#: Layers of the own-row tables (first repetition) built here: OpenSpiel's 12-seed game
#: with at most this many seeds on the board is inside them. (Layer 6 alone takes about 20 s.)
TOP = 5
#: Layers of the third repetition's tables, built with a small budget (each layer's search
#: grows much faster with the seeds than the first repetition's).
TOP_THIRD, THIRD_BUDGET = 4, 2000


@pytest.fixture(scope="module")
def own_row_dir(tmp_path_factory):
    """Layers 0..=TOP of abapa's bounds and own-row values (both repetitions), built by
    awari.build."""
    d = tmp_path_factory.mktemp("own_row")
    for cycles, top, budget in (
        ("bounds", TOP, awari.DEFAULT_SEARCH_BUDGET),
        ("own-row-first", TOP, awari.DEFAULT_SEARCH_BUDGET),
        ("own-row-third", TOP_THIRD, THIRD_BUDGET),
    ):
        reports = awari.build(d, awari.ABAPA, top, progress=False, cycles=cycles, search_budget=budget)
        assert [r.seeds for r in reports] == list(range(top + 1))
    return d


def test_build_and_open_refuse_bad_names(tmp_path):
    with pytest.raises(ValueError, match="cycles"):
        awari.build(tmp_path, awari.ABAPA, 2, progress=False, cycles="own-row")
    with pytest.raises(ValueError, match="search_budget"):
        awari.build(tmp_path, awari.ABAPA, 2, progress=False, cycles="own-row-first", search_budget=0)
    with pytest.raises(ValueError, match="repetition"):
        awari.OwnRowDatabase(tmp_path, repetition="second")


def test_missing_tables_raise_layer_missing_with_the_build_command(own_row_dir, tmp_path):
    db = awari.OwnRowDatabase(tmp_path)
    # Neither table: the own-row layer is the one to build (as the CLI says).
    with pytest.raises(awari.LayerMissing, match=r"awari build --cycles own-row-first --rules abapa --max-seeds 1 ") as e:
        db.value("0 0 0 0 0 1 0 0 0 0 0 0")
    assert e.value.layer == 1
    # Built up to TOP: a board above raises, naming its layer.
    above = [1] * 12
    with pytest.raises(awari.LayerMissing, match="awari build --cycles own-row-first --rules abapa") as e:
        awari.OwnRowDatabase(own_row_dir).answer(above)
    assert TOP < e.value.layer <= sum(above)


def test_bad_input_raises_value_error(own_row_dir):
    db = awari.OwnRowDatabase(own_row_dir)
    board = "0 0 0 1 1 0 0 1 0 1 0 0"
    with pytest.raises(ValueError, match="history"):
        db.value(board, ["0 0 0 0 0 1 0 0 0 0 0 0"])
    with pytest.raises(ValueError, match=r"history\[0\]"):
        db.value(board, ["1 2 3"])
    with pytest.raises(TypeError):
        db.value(board, "0 0 0 1 1 0 0 1 0 1 0 0")
    with pytest.raises(ValueError, match="search_budget"):
        db.value(board, budget=0)
    # The board twice with the same mover in the history: the game ended there.
    with pytest.raises(ValueError, match="repetition"):
        db.value(board, [board, "0 0 0 1 1 0 1 0 0 1 0 0", board])
    with pytest.raises(ValueError, match="pit 0 is not a legal move"):
        awari.own_row_history(board, [0])
    with pytest.raises(ValueError, match="not a pit 0..5"):
        awari.own_row_history(board, [6])


def _random_line(db, rng, start, plies):
    """Up to `plies` random moves from `start` that do not end the game by repetition."""
    pits = []
    board, history = start, []
    for _ in range(plies):
        moves = [m for m in db.moves(board, history) if not m.ends_by_repetition]
        if not moves:
            break
        pits.append(rng.choice(moves).pit)
        board, history = awari.own_row_history(start, pits, awari.ABAPA, db.repetition)
    return pits, board, history


@pytest.mark.parametrize("repetition", awari.REPETITIONS)
def test_answers_equal_the_cli(cli, own_row_dir, repetition):
    db = awari.OwnRowDatabase(own_row_dir, awari.ABAPA, repetition)
    rng = random.Random(11)
    budget = 2000
    compared = with_history = 0
    top = TOP if repetition == "first" else TOP_THIRD
    for start in random_boards(200, top, seed=21 if repetition == "first" else 22):
        if awari.game_over(start, awari.ABAPA) is not None or sum(start) < 2:
            continue
        if compared == 12:
            break
        pits, board, history = _random_line(db, rng, start, rng.randint(0, 10))
        out = subprocess.run(
            [str(cli), "probe", "--cycles", f"own-row-{repetition}", "--rules", "abapa",
             "--db", str(own_row_dir), "--search-budget", str(budget), "--json",
             " ".join(map(str, start)), "--moves", " ".join(str(p + 1) for p in pits)],
            check=True, capture_output=True, text=True,
        ).stdout
        got = json.loads(out)
        a = db.answer(board, history, budget)
        assert awari.board(got["board"]) == board
        assert got["history"] == len(history)
        assert (got["low"], got["high"], got["exact"], got["nodes"], got["stuck"]) == (
            a.value.low, a.value.high, a.value.exact, a.value.nodes, a.value.stuck)
        assert [(m["pit"] - 1, m["captured"], m["low"], m["high"], m["ends_by_repetition"],
                 awari.board(m["child"])) for m in got["moves"]] == [
            (m.pit, m.captured, m.low, m.high, m.ends_by_repetition, m.child) for m in a.moves]
        assert [p - 1 for p in got["best"]] == [m.pit for m in a.best]
        # The answer's value meets the position's own search with its moves' intervals,
        # so it is the value's alone, or narrower.
        v = db.value(board, history, budget)
        assert v.low <= a.value.low <= a.value.high <= v.high, (v, a.value)
        assert db.best_moves(board, history, budget) == a.best
        compared += 1
        with_history += bool(history)
    assert compared == 12 and with_history >= 4, (compared, with_history)


@pytest.mark.parametrize("repetition", awari.REPETITIONS)
def test_values_of_an_array_are_the_tables_intervals(cli, own_row_dir, repetition):
    """values(array): each row's interval with an empty history, from the tables alone;
    value(board) one at a time (its search included) is the same where the row is exact,
    and inside it elsewhere; the CLI's batch says the same. Layers the own-row tables of
    the third repetition leave out (5) are read from the bounds, as the probe reads them."""
    db = awari.OwnRowDatabase(own_row_dir, awari.ABAPA, repetition)
    boards = np.array(random_boards(3000, TOP, seed=31), dtype=np.uint8)
    got = db.values(boards)
    assert got.shape == (len(boards), 2) and got.dtype == np.int8
    assert (got[:, 0] <= got[:, 1]).all()
    assert (db.values(boards.astype(np.int64)) == got).all()
    assert db.values(boards[:0]).shape == (0, 2)
    exact = 0
    for i in range(0, len(boards), 15):
        v = db.value(boards[i])
        low, high = (int(x) for x in got[i])
        assert low <= v.low <= v.high <= high, (boards[i], (low, high), v)
        if low == high:
            exact += 1
            assert v.exact
    assert exact >= 100, exact
    out = subprocess.run(
        [str(cli), "probe", "--batch", "--cycles", f"own-row-{repetition}", "--rules", "abapa",
         "--db", str(own_row_dir)],
        input="".join(" ".join(map(str, b)) + "\n" for b in boards),
        check=True, capture_output=True, text=True,
    ).stdout.splitlines()
    assert [tuple(map(int, line.split()[:2])) for line in out] == [tuple(map(int, r)) for r in got]


def test_values_of_an_array_refuse_bad_rows(own_row_dir, tmp_path):
    db = awari.OwnRowDatabase(own_row_dir)
    good = [0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1]
    with pytest.raises(ValueError, match="row 1: "):
        db.values(np.array([good, [-1] + good[1:]]))
    with pytest.raises(ValueError, match=r"shape \(N, 12\)"):
        db.values(np.zeros((2, 11), dtype=np.uint8))
    with pytest.raises(TypeError, match="integer"):
        db.values(np.zeros((2, 12)))
    # Above the bounds built: the row, the layer and the command that builds it.
    above = [TOP + 1] + [0] * 11
    with pytest.raises(awari.LayerMissing, match=r"row 1: .*awari build --cycles bounds") as e:
        db.values(np.array([good, above], dtype=np.uint8))
    assert e.value.layer == TOP + 1
    with pytest.raises(awari.LayerMissing, match="row 0: "):
        awari.OwnRowDatabase(tmp_path).values(np.array([good]))


def game():
    return pyspiel.load_game("oware", {"num_seeds_per_house": 1})


def _few_seeds(rng, most):
    """A non-terminal state of the 12-seed game with at most `most` seeds on the board,
    reached by random moves from the initial state."""
    while True:
        state = game().new_initial_state()
        while not state.is_terminal():
            board, _ = aos.to_board(state)
            if sum(board) <= most:
                return state
            state.apply_action(rng.choice(state.legal_actions()))


def _diff(state, player):
    """`player`'s score minus the opponent's, as OpenSpiel counts them."""
    _, scores, _ = aos.parse_observation(state)
    return scores[player] - scores[1 - player]


def test_history_is_openspiel_repetition_rule(own_row_dir):
    """At every state of random games, each legal move ends OpenSpiel's game by repetition
    exactly when the library says it does, with the final scores the library's value of
    that move; the history equals the package's replay of the same pits."""
    db = awari.OwnRowDatabase(own_row_dir)
    rng = random.Random(3)
    initial = aos.to_board(game().new_initial_state())[0]
    repetitions = long_histories = 0
    for _ in range(30):
        state = _few_seeds(rng, TOP)
        while not state.is_terminal():
            board, history = aos.own_row_history(state)
            assert (board, history) == awari.own_row_history(initial, state.history())
            long_histories += len(history) >= 4
            player = state.current_player()
            for m in db.moves(board, history, budget=500):
                child = state.clone()
                child.apply_action(aos.action(m.pit))
                if m.ends_by_repetition:
                    repetitions += 1
                    assert child.is_terminal(), (board, history, m)
                    # The rows collected: the mover's gain is the move's value.
                    assert _diff(child, player) - _diff(state, player) == m.low == m.high
                elif m.captured == 0 and awari.game_over(m.child, awari.ABAPA) is None:
                    assert not child.is_terminal(), (board, history, m)
            # Quiet moves first, so that stretches without captures go round.
            captures = {c.pit: c.captured for c in awari.moves(board, awari.ABAPA)}
            quiet = [a for a in state.legal_actions() if captures[a] == 0]
            state.apply_action(rng.choice(quiet or state.legal_actions()))
    assert repetitions >= 10 and long_histories >= 10, (repetitions, long_histories)


#: The exhaustive search gives up on a state after this many (state, history) pairs: the
#: number of capture-free paths grows fast with the seeds.
NODES = 5_000


class TooBig(Exception):
    pass


def _minimax(state, memo):
    """The return of the player to move under perfect play of OpenSpiel's own game, by
    exhaustive search of pyspiel states. A state's future is its observation and the set
    of observations since the last change of the scores (OpenSpiel's set of boards since
    the last capture), so that pair keys the memo."""
    seen, obs = memo["seen"], state.observation_string(0)
    key = (obs, frozenset(seen))
    if key in memo:
        return memo[key]
    player = state.current_player()
    best = -2.0
    for a in state.legal_actions():
        child = state.clone()
        child.apply_action(a)
        if child.is_terminal():
            r = child.returns()[player]
        else:
            child_obs = child.observation_string(0)
            captured = child_obs.split("|")[1] != obs.split("|")[1]
            memo["seen"] = {child_obs} if captured else seen | {child_obs}
            r = -_minimax(child, memo)
            memo["seen"] = seen
        best = max(best, r)
        if best == 1.0:
            break  # nothing beats a win
    memo[key] = best
    if len(memo) > NODES:
        raise TooBig
    return best


def _sign(x):
    return (x > 0) - (x < 0)


def test_exact_values_agree_with_exhaustive_search_of_openspiel(own_row_dir):
    """From states with at most 4 seeds on the board (reached by random play, histories
    included), the outcome of perfect play in OpenSpiel's own game, found by exhaustive
    search, is the sign of the scores' difference plus the exact value the package reports
    (OpenSpiel's returns say win, draw or loss)."""
    db = awari.OwnRowDatabase(own_row_dir)
    rng = random.Random(8)
    # A line of the search goes as deep as the positions it has not repeated.
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))
    checked = set()
    values = set()
    with_history = 0
    while len(checked) < 25:
        state = _few_seeds(rng, 4)
        # A few random moves more, so that the histories are not all short.
        for _ in range(rng.randint(0, 6)):
            if state.is_terminal():
                break
            state.apply_action(rng.choice(state.legal_actions()))
        if state.is_terminal():
            continue
        board, history = aos.own_row_history(state)
        key = (board, tuple(history), state.observation_string(0))
        if key in checked:
            continue
        v = aos.own_row_answer(db, state).value
        assert v.exact, (board, history, v)
        values.add(v.low)
        # OpenSpiel's set of boards since the last capture: the history and the board.
        replay = game().new_initial_state()
        seen = {replay.observation_string(0)}
        for a in state.history():
            before = replay.observation_string(0).split("|")[1]
            replay.apply_action(a)
            if replay.observation_string(0).split("|")[1] != before:
                seen = set()
            seen.add(replay.observation_string(0))
        assert len(seen) == len(history) + 1
        try:
            expected = _minimax(state, {"seen": seen})
        except TooBig:
            continue
        assert expected == _sign(_diff(state, state.current_player()) + v.low), (
            board, history, v, aos.parse_observation(state))
        checked.add(key)
        with_history += bool(history)
    assert len(values) >= 3 and with_history >= 5, (values, with_history)


@pytest.mark.parametrize("bot_player", [0, 1])
def test_own_row_bot_against_mcts(own_row_dir, bot_player):
    """From states with at most TOP seeds on the board, the bot's gain from the first state
    it moves in with an exact value is at least that value (less twice the seeds on the
    board when a score above half ends the game), and it never loses what the value wins,
    whatever OpenSpiel's MCTS bot plays."""
    g = game()
    db = awari.OwnRowDatabase(own_row_dir)
    bot = aos.OwnRowBot(db, player_id=bot_player)
    rng = random.Random(40 + bot_player)
    games = endings = proved = 0
    while games < 8:
        state = _few_seeds(rng, TOP)
        mcts = pyspiel.MCTSBot(g, pyspiel.RandomRolloutEvaluator(1, rng.randrange(1 << 30)),
                               2.0, 200, 100, True, rng.randrange(1 << 30), False)
        promised = start_diff = None
        majority_left = 0  # seeds on the board when a score above half ended the game
        kept = True
        while not state.is_terminal():
            if state.current_player() == bot_player:
                a, answer = bot.choose(state)
                if promised is None and answer.value.exact:
                    promised, start_diff = answer.value.low, _diff(state, bot_player)
                # The guarantee is for a game whose values stay proved: each of the bot's
                # states exact, and its move proved to keep the value.
                if promised is not None:
                    kept &= answer.value.exact and {m.pit: m for m in answer.moves}[a].keeps(answer.value.low)
            else:
                a = mcts.step(state)
            board, scores = aos.to_board(state)
            move = {m.pit: m for m in awari.moves(board, awari.ABAPA)}[a]
            state.apply_action(a)
            if state.is_terminal() and scores[0] + move.captured > 6:
                majority_left = sum(move.child)
        if promised is None:
            continue
        games += 1
        if not kept:
            continue
        proved += 1
        gain = _diff(state, bot_player) - start_diff
        # A majority collects each row at once, where play would go on.
        assert gain >= promised - 2 * majority_left, (promised, gain, majority_left)
        if majority_left == 0:
            endings += 1
            assert gain >= promised, (promised, gain)
        assert state.returns()[bot_player] >= _sign(start_diff + promised)
    assert proved >= 4 and endings >= 1, (proved, endings)
    assert aos.OwnRowBot(db).step(_few_seeds(random.Random(1), TOP)) in range(6)


def test_own_row_bot_refuses_other_tables(own_row_dir):
    with pytest.raises(ValueError, match="abapa"):
        aos.OwnRowBot(awari.OwnRowDatabase(own_row_dir, awari.AWARI))
    with pytest.raises(ValueError, match="first repetition"):
        aos.OwnRowBot(awari.OwnRowDatabase(own_row_dir, repetition="third"))
