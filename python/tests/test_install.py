"""The README's install command in a fresh virtual environment, then the Romein & Bal
check from a database built by the CLI."""

import os
import subprocess
import sys

import pytest

from conftest import REPO

# The README's board (the Romein & Bal check): value 0, the six moves worth
# -1 -1 -2 -2 -2 0.
BOARD = "1 1 1 1 1 2 4 2 3 0 0 0"
CHECK = (
    "import awari, sys; db = awari.Database(sys.argv[1]); b = sys.argv[2]; "
    "print(db.value(b), *[m.value for m in db.moves(b)])"
)


@pytest.mark.skipif(
    os.environ.get("AWARI_SKIP_INSTALL") == "1", reason="AWARI_SKIP_INSTALL=1"
)
def test_readme_install_in_a_fresh_venv(cli, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    env = dict(os.environ, CARGO_BUILD_JOBS=os.environ.get("CARGO_BUILD_JOBS", "1"))
    # As on a fresh machine: nothing of this environment steers the build.
    env.pop("VIRTUAL_ENV", None)
    env.pop("PYO3_PYTHON", None)
    # The README's command, from the repository's root.
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "./python"], cwd=REPO, env=env, check=True
    )
    db = tmp_path / "db"
    seeds = sum(int(x) for x in BOARD.split())
    subprocess.run(
        [str(cli), "build", "--max-seeds", str(seeds), "--db", str(db), "-q"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    out = subprocess.run(
        [str(python), "-c", CHECK, str(db), BOARD], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["0", "-1", "-1", "-2", "-2", "-2", "0"]
