//! The perfect hash of a layer: rank/unrank are inverse bijections onto 0..size(n), checked
//! exhaustively for n ≤ 10 against an enumeration written here, and sampled up to n = 48.

use awari::index::{next_in_layer, rank, size, size_up_to, unrank, walk};
use awari::Board;
use proptest::prelude::*;

mod common;
use common::{any_board, board_of};

/// C(n, k) by the multiplicative formula in u128: independent of the crate's table.
fn choose(n: u64, k: u64) -> u64 {
    if k > n {
        return 0;
    }
    let mut r: u128 = 1;
    for i in 0..k as u128 {
        // r * (n - i) / (i + 1) stays an integer at every step.
        r = r * (n as u128 - i) / (i + 1);
    }
    u64::try_from(r).unwrap()
}

/// Positions in layer n by stars and bars.
fn layer_size(n: u32) -> u64 {
    choose(u64::from(n) + 11, 11)
}

/// Every placement of `n` seeds in 12 pits, by recursion over the pits.
fn all_boards(n: u32) -> Vec<Board> {
    common::every_board(n as u8)
}

// ---------------------------------------------------------------------------------------
// Sizes
// ---------------------------------------------------------------------------------------

#[test]
fn layer_sizes() {
    // C(11, 11) = 1: the empty board.
    assert_eq!(size(0), 1);
    // C(12, 11) = 12: one seed in one of 12 pits.
    assert_eq!(size(1), 12);
    // C(13, 11) = 13 * 12 / 2 = 78.
    assert_eq!(size(2), 78);
    // docs/overview.md, "The index": C(21, 11), C(35, 11), C(59, 11).
    assert_eq!(size(10), 352_716);
    assert_eq!(size(24), 417_225_900);
    assert_eq!(size(48), 279_871_768_995);
    for n in 0..=48 {
        assert_eq!(size(n), layer_size(n), "layer {n}");
    }
}

#[test]
fn all_layers_together() {
    // Σ_{n=0}^{48} C(n+11, 11) = C(60, 12) (hockey stick) = 1,399,358,844,975.
    let total: u64 = (0..=48).map(size).sum();
    assert_eq!(total, 1_399_358_844_975);
    assert_eq!(choose(60, 12), 1_399_358_844_975);
    assert_eq!(size_up_to(48), 1_399_358_844_975);
    // And for every prefix of layers.
    let mut running = 0;
    for n in 0..=48 {
        running += size(n);
        assert_eq!(size_up_to(n), running, "layers 0..={n}");
    }
}

// ---------------------------------------------------------------------------------------
// Exhaustive bijection for the small layers
// ---------------------------------------------------------------------------------------

#[test]
fn every_index_unranks_and_ranks_back_up_to_10_seeds() {
    for n in 0..=10 {
        for i in 0..size(n) {
            let board = unrank(n, i);
            assert_eq!(board.seeds(), n, "layer {n} index {i}: {board:?}");
            assert!(Board::new(*board.pits()).is_ok());
            assert_eq!(rank(&board), i, "layer {n} index {i}: {board:?}");
        }
    }
}

#[test]
fn every_board_gets_a_distinct_rank_up_to_10_seeds() {
    for n in 0..=10 {
        let boards = all_boards(n);
        // Stars and bars, counted by the enumeration itself.
        assert_eq!(boards.len() as u64, layer_size(n), "layer {n}");
        let mut seen = vec![false; boards.len()];
        for board in &boards {
            let r = rank(board);
            assert!(r < size(n), "layer {n}: {board:?} ranks {r}");
            assert!(!seen[r as usize], "layer {n}: rank {r} given twice");
            seen[r as usize] = true;
            assert_eq!(unrank(n, r), *board);
        }
        // |boards| distinct ranks below |boards|: every index is used.
        assert!(seen.iter().all(|&s| s));
    }
}

#[test]
fn small_ranks_by_hand() {
    // Order documented in src/index.rs: rank = Σ_j C(b_j, j) with bar j at slot
    // p_0 + … + p_{j-1} + j - 1.
    // One seed in pit k: bars j ≤ k sit at slot j-1 (C(j-1, j) = 0), bars j > k at slot j
    // (C(j, j) = 1): rank = 11 - k.
    for k in 0..12 {
        let mut pits = [0u8; 12];
        pits[k] = 1;
        let board = Board::new(pits).unwrap();
        assert_eq!(rank(&board), 11 - k as u64, "seed in pit {k}");
        assert_eq!(unrank(1, 11 - k as u64), board);
    }
    // Every seed in pit 11: all bars at their lowest slots, rank 0. Every seed in pit 0:
    // all bars at their highest slots, the last rank size(n) - 1.
    for n in [2u32, 10, 24, 48] {
        let mut pits = [0u8; 12];
        pits[11] = n as u8;
        assert_eq!(rank(&Board::new(pits).unwrap()), 0, "layer {n}");
        assert_eq!(unrank(n, 0), Board::new(pits).unwrap());
        let mut pits = [0u8; 12];
        pits[0] = n as u8;
        assert_eq!(rank(&Board::new(pits).unwrap()), size(n) - 1, "layer {n}");
        assert_eq!(unrank(n, size(n) - 1), Board::new(pits).unwrap());
    }
    // Two seeds, one in pit 0 and one in pit 1: bar 1 at slot 1 (C(1,1) = 1), bars 2..=11
    // at slot j + 1 (C(j+1, j) = j + 1): 1 + (3 + 4 + … + 12) = 1 + 75 = 76.
    let board: Board = "1 1 0 0 0 0 0 0 0 0 0 0".parse().unwrap();
    assert_eq!(rank(&board), 76);
    // The mover's row varies fastest: the boards sharing an opponent row are contiguous.
    // One seed in pit 6 (rank 5) comes after every one-seed board whose seed is higher.
    assert_eq!(rank(&"0 0 0 0 0 0 1 0 0 0 0 0".parse().unwrap()), 5);
}

// ---------------------------------------------------------------------------------------
// Walking a layer
// ---------------------------------------------------------------------------------------

#[test]
fn next_in_layer_visits_every_board_in_index_order() {
    for n in 0..=10 {
        let mut board = unrank(n, 0);
        let mut i = 0u64;
        loop {
            assert_eq!(board, unrank(n, i), "layer {n} index {i}");
            assert_eq!(rank(&board), i);
            let before = board;
            if !next_in_layer(&mut board) {
                // Stops exactly on the last board, and leaves it unchanged.
                assert_eq!(i, size(n) - 1, "layer {n}");
                assert_eq!(board, before);
                break;
            }
            i += 1;
            assert!(i < size(n), "layer {n}: stepped past the end");
        }
    }
}

#[test]
fn walk_visits_exactly_the_layer_in_index_order() {
    for n in 0..=10 {
        let mut expected = 0u64;
        for (i, board) in walk(n, 0, size(n)) {
            assert_eq!(i, expected, "layer {n}");
            assert_eq!(board, unrank(n, i));
            expected += 1;
        }
        assert_eq!(expected, size(n), "layer {n}");
    }
    // The walk's set of boards is the independent enumeration, each once.
    for n in [3u32, 7] {
        let mut walked: Vec<Board> = walk(n, 0, size(n)).map(|(_, b)| b).collect();
        let mut all = all_boards(n);
        walked.sort();
        all.sort();
        assert_eq!(walked, all, "layer {n}");
    }
}

#[test]
fn walk_of_a_range() {
    // A middle slice of layer 10 and of layer 48.
    for (n, start, len) in [(10u32, 1000u64, 50u64), (48, 123_456_789_012, 500)] {
        let got: Vec<(u64, Board)> = walk(n, start, start + len).collect();
        assert_eq!(got.len() as u64, len);
        for (k, (i, board)) in got.iter().enumerate() {
            assert_eq!(*i, start + k as u64);
            assert_eq!(*board, unrank(n, *i));
        }
    }
    // The last few of layer 24, ending exactly at size(24).
    let end = size(24);
    let got: Vec<u64> = walk(24, end - 3, end).map(|(i, _)| i).collect();
    assert_eq!(got, vec![end - 3, end - 2, end - 1]);
    // Empty ranges yield nothing.
    assert_eq!(walk(10, 5, 5).count(), 0);
    assert_eq!(walk(10, 7, 5).count(), 0);
}

#[test]
fn whole_layer_12_walk_counts_its_size() {
    // C(23, 11) = 1,352,078 positions, all with 12 seeds, ranks strictly in order.
    let mut board = unrank(12, 0);
    let mut count = 1u64;
    while next_in_layer(&mut board) {
        assert_eq!(board.seeds(), 12);
        count += 1;
    }
    assert_eq!(count, 1_352_078);
    assert_eq!(rank(&board), 1_352_077);
}

// ---------------------------------------------------------------------------------------
// Sampled layers up to 48
// ---------------------------------------------------------------------------------------

/// A random layer and a random index in it (size computed here, not by the crate).
fn any_index() -> impl Strategy<Value = (u32, u64)> {
    (0u32..=48).prop_flat_map(|n| (Just(n), 0..layer_size(n)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(5000))]

    #[test]
    fn random_boards_round_trip(board in any_board()) {
        let n = board.seeds();
        let r = rank(&board);
        prop_assert!(r < layer_size(n));
        prop_assert_eq!(unrank(n, r), board);
    }

    #[test]
    fn random_indices_round_trip((n, i) in any_index()) {
        let board = unrank(n, i);
        prop_assert_eq!(board.seeds(), n);
        prop_assert_eq!(rank(&board), i);
        // The successor in the walk is the next index.
        let mut next = board;
        let stepped = next_in_layer(&mut next);
        prop_assert_eq!(stepped, i + 1 < layer_size(n));
        if stepped {
            prop_assert_eq!(rank(&next), i + 1);
            prop_assert_eq!(next, unrank(n, i + 1));
        }
    }

    #[test]
    fn full_layers_round_trip(board in board_of(48)) {
        let r = rank(&board);
        prop_assert!(r < 279_871_768_995);
        prop_assert_eq!(unrank(48, r), board);
    }

    #[test]
    fn ranks_of_different_boards_differ(a in board_of(24), b in board_of(24)) {
        prop_assert_eq!(rank(&a) == rank(&b), a == b);
    }
}

#[test]
fn top_indices_of_layer_48_round_trip() {
    // The largest indices are where an off-by-one in the binomial table would show.
    let top = size(48);
    for i in (top - 2000..top).chain(0..2000) {
        let board = unrank(48, i);
        assert_eq!(board.seeds(), 48);
        assert_eq!(rank(&board), i, "index {i}");
    }
}
