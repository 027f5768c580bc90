"""Every bad input raises the documented exception with the library's one-line message,
and the interpreter (and the database object) go on working afterwards."""

import os
import shutil

import numpy as np
import pytest

import awari


@pytest.fixture()
def db(db_dir):
    return awari.Database(db_dir, "awari")


BAD_BOARDS = [
    ("1 1 1", ValueError, "a board needs 12 pit counts, found 3"),
    ([1] * 11, ValueError, "a board needs 12 pit counts, found 11"),
    ("1 1 1 1 1 1 1 1 1 1 1 x", ValueError, "pit 12: 'x' is not a seed count"),
    ("1 1 -1 1 1 1 1 1 1 1 1 1", ValueError, "pit 3: a seed count cannot be negative"),
    ([1, 1, -1] + [1] * 9, ValueError, "pit 3: a seed count cannot be negative ('-1')"),
    ([49] + [0] * 11, ValueError, "pit 1: 49 seeds do not fit in one pit (at most 48)"),
    ([10**40] + [0] * 11, ValueError, "do not fit in one pit"),
    ([-(10**40)] + [0] * 11, ValueError, "cannot be negative"),
    ([40, 9] + [0] * 10, ValueError, "the board holds 49 seeds, more than the 48 of the game"),
    ([1.5] + [0] * 11, TypeError, "pit 1: 1.5 is not an integer seed count"),
    (None, TypeError, "a board is a string or a sequence of 12 integers"),
    (12, TypeError, "a board is a string or a sequence of 12 integers"),
]


@pytest.mark.parametrize("board,exc,message", BAD_BOARDS)
def test_bad_boards(db, board, exc, message):
    for call in (db.value, db.best_moves, db.moves, db.perfect_move, awari.moves, awari.board):
        with pytest.raises(exc) as e:
            call(board)
        assert message in str(e.value)
        assert "\n" not in str(e.value)
    assert db.value([1] * 12) == 0


@pytest.mark.parametrize(
    "name,message",
    [
        ("nope", "unknown rules preset 'nope' (expected awari, abapa or grand-slam-captures)"),
        ("abapa-25", "depends on the score"),
    ],
)
def test_bad_rules(db_dir, name, message):
    for call in (
        lambda: awari.Database(db_dir, name),
        lambda: awari.moves([1] * 12, name),
        lambda: awari.rules(name),
        lambda: awari.build(db_dir, name, 3, progress=False),
    ):
        with pytest.raises(ValueError) as e:
            call()
        assert message in str(e.value)


def test_layer_missing(db, db_dir):
    board = [2] * 6 + [1] * 6  # 18 seeds: not built
    with pytest.raises(awari.LayerMissing) as e:
        db.value(board)
    assert isinstance(e.value, LookupError)
    assert e.value.layer == 18
    assert str(e.value) == (
        f"layer 18 (18 seeds on the board) of rules 'awari' is not built in {db_dir}; "
        f"run: awari build --rules awari --max-seeds 18 --db {db_dir}"
    )
    # A child in a missing layer: none here (captures only go down), so an empty folder.
    with pytest.raises(awari.LayerMissing):
        awari.Database(db_dir / "nothing", "awari").best_moves([1] * 12)
    assert db.value([1] * 12) == 0


def test_values_bad_rows(db):
    good = [[1] * 12, [0] * 12]
    cases = [
        (good + [[1, 1, -1] + [1] * 9], ValueError, "row 2: pit 3: a seed count cannot be negative ('-1')"),
        (good + [[60] + [0] * 11, [-1] * 12], ValueError, "row 2: pit 1: 60 seeds do not fit in one pit"),
        (good + [[40, 9] + [0] * 10], ValueError, "row 2: the board holds 49 seeds"),
        (good + [[2] * 12, [3] * 12], awari.LayerMissing, "row 2: layer 24 (24 seeds on the board)"),
    ]
    for rows, exc, message in cases:
        for dtype in (np.int64, np.uint8, np.int16):
            if dtype != np.int64 and min(min(r) for r in rows) < 0:
                continue
            with pytest.raises(exc) as e:
                db.values(np.array(rows, dtype=dtype))
            assert str(e.value).startswith(message), (dtype, str(e.value))
    with pytest.raises(ValueError, match=r"shape \(N, 12\)"):
        db.values(np.zeros((3, 11), dtype=np.int64))
    with pytest.raises(ValueError, match=r"shape \(N, 12\)"):
        db.values(np.zeros(12, dtype=np.int64))
    with pytest.raises(TypeError, match="integer array"):
        db.values(np.zeros((3, 12), dtype=np.float64))
    with pytest.raises(TypeError, match="integer array"):
        db.values(np.zeros((3, 12), dtype=bool))
    assert db.values(np.array(good)).tolist() == [0, 0]


def test_file_problems(db_dir, tmp_path):
    # A damaged layer file: refused when the database opens it.
    copy = tmp_path / "db"
    shutil.copytree(db_dir / "awari", copy / "awari")
    layer = copy / "awari" / "layer-05.awdb"
    data = bytearray(layer.read_bytes())
    data[10] ^= 0xFF
    layer.write_bytes(bytes(data))
    with pytest.raises(OSError) as e:
        awari.Database(copy, "awari")
    assert "layer-05.awdb" in str(e.value)
    # A layer file of another rule set, under this one's name.
    shutil.copy(db_dir / "abapa" / "layer-05.awdb", layer)
    with pytest.raises(OSError):
        awari.Database(copy, "awari")
    # A block damaged after opening: the probe that reads it says so.
    shutil.copy(db_dir / "awari" / "layer-05.awdb", layer)
    db = awari.Database(copy, "awari")
    data = bytearray(layer.read_bytes())
    data[-5] ^= 0xFF
    layer.write_bytes(bytes(data))
    with pytest.raises(OSError):
        db.values(np.array([[5] + [0] * 11, [0, 5] + [0] * 10]))
    # The build refuses a layer beyond the game and a folder it cannot write.
    with pytest.raises(ValueError, match="beyond the 48 seeds"):
        awari.build(tmp_path / "x", "awari", 49, progress=False)
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(OSError):
        awari.build(blocker, "awari", 3, progress=False)
    assert awari.Database(db_dir, "awari").value([1] * 12) == 0


def test_outcome_refuses_impossible_scores(db):
    with pytest.raises(ValueError, match="more than the 48"):
        db.outcome([1] * 12, 30, 20)
    with pytest.raises((OverflowError, TypeError)):
        db.outcome([1] * 12, -1, 0)


def test_interpreter_survives_many_errors(db):
    # Errors in a loop leak nothing and leave no exception pending.
    for _ in range(10000):
        try:
            db.value([1, 2])
        except ValueError:
            pass
    assert db.value([1] * 12) == 0
    assert os.getpid() > 0


def test_os_errors_keep_the_system_s_reason(tmp_path):
    """An ``OSError`` carries ``errno``, ``strerror`` and ``filename`` as Python's own
    ``open`` does (so its subclass too), not only the path the library names."""
    import errno

    with pytest.raises(OSError) as e:
        awari.Database("/etc/passwd", "awari")
    assert isinstance(e.value, NotADirectoryError)
    assert e.value.errno == errno.ENOTDIR
    assert e.value.strerror == "Not a directory"
    assert e.value.filename == "/etc/passwd/awari"
    assert "Not a directory" in str(e.value)
    assert "\n" not in str(e.value)
    # The build's folder below a file: the same reason, from the build.
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(NotADirectoryError) as e:
        awari.build(blocker, "awari", 3, progress=False)
    assert e.value.errno == errno.ENOTDIR
    assert str(blocker) in e.value.filename


def test_analyse_stops_at_ctrl_c_and_bounds_its_think_time(db):
    """Ctrl-C (SIGINT) two tenths of a second into a 30 s think raises
    ``KeyboardInterrupt`` within moments, not at the end of the think time; a think time
    beyond an hour, or not a number of seconds, is refused."""
    import signal
    import threading
    import time

    above = "4 4 4 4 4 4 4 4 4 4 4 4"
    # A process started in the background by a shell without job control inherits SIGINT
    # ignored, and Python then installs no handler: Python's usual one is put in place, as
    # in the build's Ctrl-C test, so the test checks the answer wherever it is started from.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            db.analyse(above, 30)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - started < 5
    for bad in (3601, 1e6, -1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="from 0 to 3600"):
            db.analyse(above, bad)
    assert db.analyse(above, 0.05).depth >= 1
