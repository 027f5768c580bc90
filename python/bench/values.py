#!/usr/bin/env python3
"""Database.values on uniformly random boards: boards per second, warm.

Every position of layers 0..=max-seeds is equally likely (a layer drawn with weight
C(n+11, 11), then a uniform placement, as tools/random_boards.py does). One call warms the
page cache and the process; the figure is the best of the timed calls after it.

    python python/bench/values.py --db data/db --max-seeds 20 --count 1000000
    python python/bench/values.py --db data/db --max-seeds 20 --load    # after Database.load()
    python python/bench/values.py --db data/db --rules abapa --max-seeds 12 --own-row first
                                          # OwnRowDatabase.values: the own-row tables' pairs
"""

import argparse
import math
import time

import numpy as np

import awari


def random_boards(count: int, max_seeds: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    sizes = np.array([math.comb(n + 11, 11) for n in range(max_seeds + 1)], dtype=np.float64)
    layers = rng.choice(max_seeds + 1, size=count, p=sizes / sizes.sum())
    out = np.zeros((count, 12), dtype=np.uint8)
    for n in range(max_seeds + 1):
        rows = np.flatnonzero(layers == n)
        if len(rows) == 0:
            continue
        # 11 bars among n + 11 slots, uniformly: sort 11 distinct random slots.
        keys = rng.random((len(rows), n + 11))
        bars = np.sort(np.argsort(keys, axis=1)[:, :11], axis=1)
        edges = np.concatenate(
            [np.full((len(rows), 1), -1), bars, np.full((len(rows), 1), n + 11)], axis=1
        )
        out[rows] = (np.diff(edges, axis=1) - 1).astype(np.uint8)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default="data/db")
    ap.add_argument("--rules", default="awari")
    ap.add_argument("--max-seeds", type=int, default=20)
    ap.add_argument("--count", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dtype", default="uint8", choices=["uint8", "int64"])
    ap.add_argument("--load", action="store_true", help="Database.load() the layers first")
    ap.add_argument(
        "--own-row",
        choices=awari.REPETITIONS,
        help="OwnRowDatabase(repetition=...).values instead: (low, high) with an empty history",
    )
    args = ap.parse_args()
    boards = random_boards(args.count, args.max_seeds, args.seed).astype(args.dtype)
    assert boards.sum(axis=1).max() <= args.max_seeds
    if args.own_row:
        if args.load:
            ap.error("--load is for the values' Database")
        db = awari.OwnRowDatabase(args.db, args.rules, args.own_row)
    else:
        db = awari.Database(args.db, args.rules)
    if args.load:
        db.load(range(args.max_seeds + 1))
    db.values(boards)  # warm-up: page cache, allocator, thread pool
    times = []
    for _ in range(args.repeat):
        started = time.perf_counter()
        values = db.values(boards)
        times.append(time.perf_counter() - started)
    best = min(times)
    print(
        f"{args.count} boards of layers <= {args.max_seeds} ({args.dtype}"
        f"{f', own-row {args.own_row}' if args.own_row else ''}"
        f"{', loaded' if args.load else ''}): best {best:.3f} s, "
        f"median {sorted(times)[len(times) // 2]:.3f} s: {args.count / best / 1e6:.2f} M boards/s "
        f"(checksum {int(values.astype(np.int64).sum())})"
    )


if __name__ == "__main__":
    main()
