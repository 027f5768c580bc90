"""awari.build: the CLI's files, resuming, and Ctrl-C stopping it cleanly."""

import os
import signal
import subprocess
import threading
import time

import pytest

import awari


def test_build_makes_the_cli_files(cli, tmp_path):
    ours = tmp_path / "py"
    reports = awari.build(ours, "grand-slam-captures", 9, progress=False)
    assert [r.seeds for r in reports] == list(range(10))
    assert all(r.built for r in reports)
    assert reports[9].positions == 167960
    theirs = tmp_path / "cli"
    subprocess.run(
        [str(cli), "build", "--rules", "grand-slam-captures", "--max-seeds", "9", "--db", str(theirs), "-q"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    for n in range(10):
        for ext in ("awdb", "awdz"):
            name = f"layer-{n:02}.{ext}"
            assert (ours / "grand-slam-captures" / name).read_bytes() == (
                theirs / "grand-slam-captures" / name
            ).read_bytes(), name
    again = awari.build(ours, "grand-slam-captures", 10, progress=False)
    assert [r.built for r in again] == [False] * 10 + [True]
    db = awari.Database(ours, "grand-slam-captures")
    assert db.complete_up_to() == 10


def test_ctrl_c_stops_the_build_and_it_resumes(tmp_path):
    folder = tmp_path / "db"
    # A process started in the background by a shell without job control inherits SIGINT
    # ignored, and Python then installs no handler: the test puts Python's usual one in
    # place, so it checks the build's answer to Ctrl-C wherever it is started from.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    # Layers up to 12 take about a second; 22 would take minutes.
    timer = threading.Timer(2.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt) as e:
            awari.build(folder, "awari", 22, progress=True)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    stopped_after = time.monotonic() - started
    message = str(e.value)
    assert message.startswith("the build was stopped while building layer "), message
    layer = int(message.split("layer ")[1].split(";")[0])
    assert "the same build resumes at layer" in message
    # Stopped within moments of the signal, not at the end of the build.
    assert stopped_after < 2.0 + 5.0, stopped_after
    rules_dir = folder / "awari"
    assert not (rules_dir / f"layer-{layer:02}.awdb").exists()
    assert not list(rules_dir.glob("*.tmp"))
    assert (rules_dir / f"layer-{layer - 1:02}.awdb").exists()
    # The lock went with the build, and the same call resumes (to a smaller target here).
    reports = awari.build(folder, "awari", layer, progress=False)
    assert [r.built for r in reports] == [False] * layer + [True]
    assert awari.Database(folder, "awari").value([1] * 12) == 0
