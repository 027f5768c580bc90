"""The package answers what the CLI answers, and the numpy batch what one-by-one does."""

import json
import math
import shutil
import subprocess

import numpy as np
import pytest

import awari
from conftest import MAX_SEEDS, random_boards

BOARDS = 3000


@pytest.mark.parametrize("rules", ["awari", "abapa"])
def test_values_and_moves_equal_the_cli(cli, db_dir, rules):
    boards = random_boards(BOARDS, MAX_SEEDS, seed=7 if rules == "awari" else 8)
    text = "\n".join(" ".join(map(str, b)) for b in boards) + "\n"
    out = subprocess.run(
        [str(cli), "probe", "--batch", "--json", "--rules", rules, "--db", str(db_dir)],
        input=text,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert len(out) == len(boards)
    db = awari.Database(db_dir, rules)
    for board, line in zip(boards, out):
        want = json.loads(line)
        assert db.value(board) == want["value"], board
        moves = db.moves(board)
        assert [(m.pit, m.captured, m.value) for m in moves] == [
            (m["pit"], m["captured"], m["value"]) for m in want["moves"]
        ], board
        assert [m.pit for m in db.best_moves(board)] == want["best"], board
        # The same board as the CLI's text gives the same answer.
        assert db.value(" ".join(map(str, board))) == want["value"]


def test_perfect_move_and_pv_follow_best_moves(db_dir):
    db = awari.Database(db_dir, "awari")
    for board in random_boards(300, MAX_SEEDS, seed=9):
        best = db.best_moves(board)
        m = db.perfect_move(board)
        if not best:
            assert m is None and awari.game_over(board, "awari") is not None
            continue
        assert m in best
        pv = db.principal_variation(board, 50)
        assert pv.end in ("game over", "repetition", "limit")
        if pv.steps:
            assert pv.steps[0].board == awari.board(board)
            assert pv.steps[0].value == db.value(board)
            assert pv.steps[0].pit == m.pit
        if pv.end == "game over":
            assert pv.end_value == awari.game_over(pv.last, "awari")


def test_outcome(db_dir):
    db = awari.Database(db_dir, "awari")
    board = "1 1 1 1 1 1 1 1 1 1 1 1"
    v = db.value(board)
    o = db.outcome(board, 10, 14)
    assert o.mover_score == 10 + (12 + v) / 2 and o.opponent_score == 14 + (12 - v) / 2
    assert o.verdict == ("win" if 10 + v > 14 else "draw" if 10 + v == 14 else "loss")


@pytest.mark.parametrize("dtype", [np.uint8, np.int64, np.int32, np.uint16, np.int8])
def test_numpy_batch_equals_one_by_one(db_dir, dtype):
    db = awari.Database(db_dir, "abapa")
    boards = random_boards(5000, MAX_SEEDS, seed=11)
    array = np.array(boards, dtype=dtype)
    got = db.values(array)
    assert got.dtype == np.int8 and got.shape == (len(boards),)
    assert got.tolist() == [db.value(b) for b in boards]
    # A non-contiguous view (every other row) is read correctly too.
    assert db.values(array[::2]).tolist() == got[::2].tolist()


def test_numpy_batch_edge_cases(db_dir):
    db = awari.Database(db_dir, "awari")
    assert db.values(np.zeros((0, 12), dtype=np.int64)).shape == (0,)
    assert db.values([[1] * 12, [0] * 12]).tolist() == [db.value([1] * 12), 0]


def test_moves_without_a_database():
    moves = awari.moves("4 4 4 4 4 4 4 4 4 4 4 4", awari.ABAPA)
    assert [m.pit for m in moves] == list(range(6))
    assert moves[0].child == (4, 4, 4, 4, 4, 4, 0, 5, 5, 5, 5, 4)
    assert awari.moves([0] * 6 + [1] * 6) == []
    assert awari.game_over([0] * 6 + [1] * 6) == -6
    assert awari.game_over("1 1 1 1 1 1 1 1 1 1 1 1") is None
    assert awari.RULES == ("awari", "abapa", "grand-slam-captures")
    assert awari.rules(" ABAPA ") == "abapa"


def test_database_properties(db_dir):
    db = awari.Database(str(db_dir), "abapa")
    assert db.rules == "abapa"
    assert db.layers() == list(range(MAX_SEEDS + 1))
    assert db.complete_up_to() == MAX_SEEDS
    assert "abapa" in repr(db)


def test_stub_matches_the_compiled_module():
    import ast
    from pathlib import Path

    from awari import _awari

    stub = ast.parse((Path(awari.__file__).parent / "_awari.pyi").read_text())
    declared = {n.name for n in stub.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    # Constants are declared by annotation (`NAME: int`).
    declared |= {n.target.id for n in stub.body if isinstance(n, ast.AnnAssign)}
    present = {n for n in dir(_awari) if not n.startswith("_")}
    assert declared == present
    methods = {
        n.name for c in stub.body if isinstance(c, ast.ClassDef) and c.name == "Database"
        for n in c.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")
    }
    assert methods == {n for n in dir(_awari.Database) if not n.startswith("_")}
    assert (Path(awari.__file__).parent / "py.typed").exists()


def test_loaded_layers_answer_the_same(db_dir):
    db = awari.Database(db_dir, "awari")
    boards = np.array(random_boards(5000, MAX_SEEDS, seed=12), dtype=np.uint8)
    want = db.values(boards)
    # Some layers in memory, the rest from the files, in one batch.
    held = db.load([0, 3, 7, 12])
    assert held == db.loaded_bytes() == sum(math.comb(n + 11, 11) for n in (0, 3, 7, 12))
    assert db.values(boards).tolist() == want.tolist()
    db.load()
    assert db.values(boards).tolist() == want.tolist()
    assert db.values(boards.astype(np.int64)).tolist() == want.tolist()
    db.unload()
    assert db.loaded_bytes() == 0
    assert db.values(boards).tolist() == want.tolist()
    with pytest.raises(awari.LayerMissing, match="layer 13"):
        db.load([13])


def test_dont_cares_answer_the_same(cli, db_dir, tmp_path):
    """Values recoded with don't-cares (restored from captures by every probe) answer what
    the zstd files answer: one by one, in a batch, loaded, and a principal variation."""
    plain = awari.Database(db_dir, "awari")
    copy = tmp_path / "db"
    shutil.copytree(db_dir / "awari", copy / "awari")
    subprocess.run(
        [str(cli), "recode", "--codec", "dont-cares", "--db", str(copy)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    # Compression 5: the values' ranks in zstd blocks.
    assert (copy / "awari" / "layer-12.awdb").read_bytes()[14] == 5
    db = awari.Database(copy, "awari")
    boards = np.array(random_boards(5000, MAX_SEEDS, seed=13), dtype=np.uint8)
    want = plain.values(boards)
    assert db.values(boards).tolist() == want.tolist()
    assert [db.value(tuple(b)) for b in boards[:500]] == want[:500].tolist()
    board = "2 1 1 1 0 0 1 1 1 1 2 1"
    assert [(m.pit, m.value) for m in db.moves(board)] == [
        (m.pit, m.value) for m in plain.moves(board)
    ]
    db.load()
    assert db.values(boards).tolist() == want.tolist()
