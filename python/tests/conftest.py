"""Shared fixtures: the CLI binary and databases it builds (layers 0..=12: about a second)."""

import os
import random
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MAX_SEEDS = 12


def _cli() -> Path:
    """The `awari` binary: $AWARI_CLI, else the one `cargo test` / `cargo build` leaves in
    target/debug (built here if missing)."""
    given = os.environ.get("AWARI_CLI")
    if given:
        return Path(given)
    path = REPO / "target" / "debug" / "awari"
    if not path.exists():
        env = dict(os.environ, CARGO_BUILD_JOBS=os.environ.get("CARGO_BUILD_JOBS", "1"))
        subprocess.run(["cargo", "build", "--bin", "awari"], cwd=REPO, env=env, check=True)
    return path


@pytest.fixture(scope="session")
def cli() -> Path:
    return _cli()


@pytest.fixture(scope="session")
def db_dir(cli, tmp_path_factory) -> Path:
    """A folder with layers 0..=12 of awari and abapa, built by the CLI."""
    d = tmp_path_factory.mktemp("db")
    for rules in ("awari", "abapa"):
        subprocess.run(
            [str(cli), "build", "--rules", rules, "--max-seeds", str(MAX_SEEDS), "--db", str(d), "-q"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return d


def random_boards(count: int, max_seeds: int, seed: int):
    """Boards of layers 0..=max_seeds, each layer equally likely, then a uniform placement."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        n = rng.randint(0, max_seeds)
        bars = sorted(rng.sample(range(n + 11), 11))
        pits, prev = [], -1
        for b in bars:
            pits.append(b - prev - 1)
            prev = b
        pits.append(n + 10 - prev)
        out.append(tuple(pits))
    return out
