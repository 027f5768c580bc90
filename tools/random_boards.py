#!/usr/bin/env python3
"""Uniformly random boards of layers 0..=N, one per line, for batch-probe benchmarks.

Every position of layers 0..=N is equally likely: a layer is drawn with weight C(n+11, 11),
then a uniform placement of n seeds in 12 pits (11 bars among n + 11 slots).

    python3 tools/random_boards.py --max-seeds 24 --count 1000000 --seed 1 > /tmp/boards.txt
"""
import argparse
import math
import random


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-seeds", type=int, default=24)
    ap.add_argument("--count", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    layers = list(range(args.max_seeds + 1))
    weights = [math.comb(n + 11, 11) for n in layers]
    out = []
    for n in rng.choices(layers, weights=weights, k=args.count):
        bars = sorted(rng.sample(range(n + 11), 11))
        pits, prev = [], -1
        for b in bars:
            pits.append(b - prev - 1)
            prev = b
        pits.append(n + 10 - prev)
        out.append(" ".join(map(str, pits)))
    print("\n".join(out))


if __name__ == "__main__":
    main()
