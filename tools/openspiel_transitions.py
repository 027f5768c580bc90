#!/usr/bin/env python3
"""Record OpenSpiel `oware` transitions, to cross-check our `abapa` rules preset.

Purpose
-------
OpenSpiel's `oware` game (Oware Abapa: a grand slam is legal but captures nothing, an
empty opponent must be fed, an opponent that cannot be fed ends the game) is an independent
implementation of the rules our `awari::Rules::ABAPA` preset claims to follow. This script
plays uniformly random games with OpenSpiel and writes every move it sees to a text file;
`tests/peer_openspiel.rs` then replays each one through `Rules::ABAPA.turn` and checks the
legal moves, the captures and the resulting boards.

How to run
----------
    pip install open-spiel            # tested with open-spiel 2.0.2, Python 3.11
    python3 tools/openspiel_transitions.py --games 400 --seed 20240611 \
        --out tests/data/openspiel_abapa.txt

The defaults are the values above, so `python3 tools/openspiel_transitions.py` regenerates
the checked-in file byte for byte (a seeded `random.Random().choice` gives the same
sequence on every Python 3 version, and OpenSpiel's `oware` is deterministic).

OpenSpiel's conventions, and how they are converted
---------------------------------------------------
OpenSpiel stores 12 absolute houses: player 0 owns houses 0..5, player 1 houses 6..11, and
sowing goes house h -> h+1 (mod 12), i.e. counter-clockwise, each row in its owner's sowing
order. Action a (0..5) of player p is house 6p + a. The exact board and scores are read from
the observation string, `"<player to move> | <score0> <score1> | <12 houses>"`. So a
mover-relative board (ours: mover's pits 0..5, then the opponent's 6..11, both in sowing
order) is houses[6p:6p+6] + houses[6(1-p):6(1-p)+6], and an action is already a
mover-relative pit number.

When a game ends OpenSpiel immediately moves every seed left on the board into its owner's
score ("collect"), whatever the reason the game ended: a player's score above 24 (or 24-24),
a repeated position (the same board, scores and player to move since the last capture), or a
next player without a legal move. The board after the final move is therefore never
visible: for that move the file gives the two score gains instead (see below).

Output format
-------------
Line 1 is a `#` comment naming the fields; every other line is one transition, fields
separated by single spaces:

    game ply player score_mover score_opponent board legal move RESULT

- game: 0-based game number; ply: 0-based move number within the game; player: OpenSpiel's
  player to move (0 or 1).
- score_mover, score_opponent: seeds each side had captured before the move.
- board: 12 comma-separated counts from the mover's point of view (see above).
- legal: OpenSpiel's legal moves, comma-separated mover-relative pits 0..5, ascending.
- move: the pit played (uniformly random among the legal moves).
- RESULT is either
    `<captured> <child>`: the game goes on; captured = the mover's score gain (seeds
    captured by the move) and child = the board after the move from the NEXT mover's point
    of view (rows swapped), 12 comma-separated counts;
  or
    `end <gain_mover> <gain_opponent>`: the game ended with this move. The gains are the
    score increases of the mover and of its opponent over the move: captured seeds plus
    the seeds each collected from its own row when the game ended.

Games are recorded from the opening (4 seeds per pit) to their end. A game that reached
OpenSpiel's maximum length (1000 moves) without ending would simply stop being recorded
(none does with the default seed).
"""

import argparse
import os
import random
import sys

import pyspiel

HOUSES = 6


def parse_observation(state):
    """(player to move, [score0, score1], [12 absolute houses]) from the observation string."""
    text = state.observation_string(0)
    player, scores, seeds = (part.split() for part in text.split("|"))
    return int(player[0]), [int(s) for s in scores], [int(s) for s in seeds]


def relative(seeds, player):
    """The 12 houses seen from `player`: its own row first, both rows in sowing order."""
    mine = seeds[HOUSES * player : HOUSES * player + HOUSES]
    theirs = seeds[HOUSES * (1 - player) : HOUSES * (1 - player) + HOUSES]
    return mine + theirs


def csv(values):
    return ",".join(str(v) for v in values)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=400, help="random games to play")
    parser.add_argument("--seed", type=int, default=20240611, help="random seed")
    parser.add_argument(
        "--out",
        default=os.path.join(
            os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "openspiel_abapa.txt"
        ),
        help="output file (default: tests/data/openspiel_abapa.txt)",
    )
    args = parser.parse_args(argv)

    rng = random.Random(args.seed)
    game = pyspiel.load_game("oware")
    assert game.num_distinct_actions() == HOUSES
    max_length = game.max_game_length()

    lines = [
        "# openspiel oware (open-spiel %s) random games, seed %d, %d games; fields: "
        "game ply player score_mover score_opponent board legal move "
        "(captured child | end gain_mover gain_opponent); boards mover-relative, "
        "see tools/openspiel_transitions.py" % (_version(), args.seed, args.games)
    ]
    transitions = 0
    ended = 0
    for game_number in range(args.games):
        state = game.new_initial_state()
        ply = 0
        while not state.is_terminal() and len(state.history()) < max_length:
            player, scores, seeds = parse_observation(state)
            assert player == state.current_player()
            board = relative(seeds, player)
            legal = sorted(state.legal_actions())
            move = rng.choice(legal)
            state.apply_action(move)
            after_player, after_scores, after_seeds = parse_observation(state)
            gain_mover = after_scores[player] - scores[player]
            gain_opponent = after_scores[1 - player] - scores[1 - player]
            head = "%d %d %d %d %d %s %s %d" % (
                game_number,
                ply,
                player,
                scores[player],
                scores[1 - player],
                csv(board),
                csv(legal),
                move,
            )
            if state.is_terminal():
                assert sum(after_seeds) == 0, "OpenSpiel collects the board at the end"
                lines.append("%s end %d %d" % (head, gain_mover, gain_opponent))
                ended += 1
            else:
                assert after_player == 1 - player
                assert gain_opponent == 0
                child = relative(after_seeds, after_player)
                lines.append("%s %d %s" % (head, gain_mover, csv(child)))
            transitions += 1
            ply += 1

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="ascii", newline="\n") as out:
        out.write("\n".join(lines) + "\n")
    print(
        "%d games (%d ended), %d transitions -> %s" % (args.games, ended, transitions, args.out),
        file=sys.stderr,
    )


def _version():
    try:
        from importlib.metadata import version

        return version("open-spiel")
    except Exception:  # pragma: no cover - only the header text depends on it
        return "unknown"


if __name__ == "__main__":
    main()
