"""A random capture-free walk for the own-row probe's measurement: a random board of SEEDS
seeds (abapa) and PLIES moves from it that capture nothing and never repeat a position, so
the game is still on after them. Prints the start board, then the pits (1..6), for

    awari probe --cycles own-row-first --rules abapa --db D "$(sed -n 1p W)" --moves "$(sed -n 2p W)"

Usage: python3 tools/own_row_walk.py SEEDS PLIES SEED > W   (needs the awari Python package)
"""
import random
import sys

import awari


def main() -> None:
    seeds, plies, seed = (int(a) for a in sys.argv[1:4])
    rng = random.Random(seed)
    while True:
        # Eleven draws left over from a first version, kept so that seeds 1..7 give the
        # walks measured in docs/measurements.md.
        for _ in range(11):
            rng.randrange(seeds + 12)
        board = [0] * 12
        for _ in range(seeds):
            board[rng.randrange(12)] += 1
        start = tuple(board)
        at, seen, pits = start, {start}, []
        for _ in range(plies):
            quiet = [c for c in awari.moves(at, "abapa") if c.captured == 0 and tuple(c.child) not in seen]
            if not quiet:
                break
            c = rng.choice(quiet)
            pits.append(c.pit + 1)
            at = tuple(c.child)
            seen.add(at)
        if len(pits) == plies:
            print(" ".join(map(str, start)))
            print(" ".join(map(str, pits)))
            return


if __name__ == "__main__":
    main()
