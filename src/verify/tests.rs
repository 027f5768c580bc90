//! The values' check on small layers solved in memory: the whole check and the sampled one
//! catch wrong values and wrong rounds alike, and the sample's runs cover the layer.

use super::sample::{run_length, sample_runs, verify_sampled};
use super::*;
use crate::rules::Rules;
use crate::solve::{solve_layer, Quiet};

/// Layers 0..=10 of every preset, solved in memory, with their rounds.
fn solved(rules: Rules) -> (Vec<Vec<i8>>, Vec<Vec<u8>>) {
    let (mut values, mut rounds) = (Vec::new(), Vec::new());
    for n in 0..=10 {
        let layer = solve_layer(rules, n, &values, &Quiet);
        values.push(layer.values);
        rounds.push(layer.distances);
    }
    (values, rounds)
}

#[test]
fn the_rounds_of_every_small_position_lead_best_play_out_of_the_layer() {
    for rules in Rules::ALL {
        let (values, rounds) = solved(rules);
        for n in 0..=10u32 {
            let check = check_layer(rules, n, &values[..=n as usize], Some(&rounds[n as usize]));
            assert_eq!(check.mismatches, 0, "{rules} layer {n}");
            assert_eq!(check.distance_faults, 0, "{rules} layer {n}");
            assert!(rounds[n as usize].iter().all(|&r| r != DISTANCE_SATURATED));
        }
    }
}

/// The runs of a sample hold exactly the sample, start on a run's boundary, never
/// overlap, repeat for the same layer, and are spread over the whole layer.
#[test]
fn the_runs_of_a_sample_cover_the_layer_evenly_and_repeat() {
    for (n, run) in [(9u32, 1000u64), (14, 16384), (20, 16384)] {
        let size = index::size(n);
        for picks in [1, 999, 1000, 1001, size / 4, size - 1] {
            let runs = sample_runs(n, picks, run);
            assert_eq!(runs, sample_runs(n, picks, run), "seeded");
            assert_eq!(runs.iter().map(|r| r.1).sum::<u64>(), picks);
            for w in runs.windows(2) {
                assert!(w[0].0 + w[0].1 <= w[1].0, "{w:?}");
            }
            for &(start, len) in &runs {
                assert_eq!(start % run, 0);
                assert!(len >= 1 && len <= run && start + len <= size);
            }
        }
        // A quarter of the layer: about a quarter of each quarter of it.
        let runs = sample_runs(n, size / 4, run);
        let total = size.div_ceil(run);
        if total >= 40 {
            for q in 0..4 {
                let (from, to) = (q * size / 4, (q + 1) * size / 4);
                let inside = runs.iter().filter(|r| (from..to).contains(&r.0)).count();
                let expected = total as f64 / 16.0;
                assert!(
                    (inside as f64 - expected).abs() <= expected / 2.0 + 3.0,
                    "layer {n}, quarter {q}: {inside} runs, about {expected} expected"
                );
            }
        }
    }
    assert_ne!(sample_runs(19, 1000, 100), sample_runs(20, 1000, 100));
    // Whole blocks for a big sample, a part of one for a small sample, one position for
    // a tiny one.
    assert_eq!(run_length(16384, 10_000_000), 16384);
    assert_eq!(run_length(16384, 1 << 30), 16384);
    assert_eq!(run_length(16384, 100_000), 128);
    assert_eq!(run_length(16384, 500), 1);
}

/// The sampled check judges as the whole check does: on a layer with wrong values and
/// wrong rounds planted, a sample of all but one position finds the whole check's
/// mismatches and distance faults (give or take the one position left out), and a
/// small sample still finds some of each.
#[test]
fn a_sample_judges_values_and_rounds_as_the_whole_check() {
    let rules = Rules::AWARI;
    let (values, mut rounds) = solved(rules);
    let dir = tempfile::tempdir().unwrap();
    let opts = store::WriteOptions {
        block_size: 1000,
        ..Default::default()
    };
    let n = 10u32;
    let mut values = values;
    // Every 97th position of layer 10 gets a wrong value, every 89th won one a round of
    // 0 and every 89th draw a round of 3.
    for i in (0..values[10].len()).step_by(97) {
        values[10][i] = if values[10][i] == 1 { 2 } else { 1 };
    }
    for i in (0..rounds[10].len()).step_by(89) {
        if values[10][i] != 0 {
            rounds[10][i] = 0;
        } else {
            rounds[10][i] = 3;
        }
    }
    for m in 0..=n {
        let summary = store::LayerSummary::from_values(m, &values[m as usize]);
        let bytes: Vec<u8> = values[m as usize].iter().map(|&v| v as u8).collect();
        store::write_table(
            dir.path(),
            rules,
            store::TableKind::Values,
            &bytes,
            summary.clone(),
            opts,
        )
        .unwrap();
        store::write_table(
            dir.path(),
            rules,
            store::TableKind::Distances,
            &rounds[m as usize],
            summary,
            opts,
        )
        .unwrap();
    }
    let db = Database::open(dir.path(), rules).unwrap();
    let whole = &verify(&db, n, n, |_| {}).unwrap()[0];
    assert!(
        whole.mismatches > 100 && whole.distance_faults > 100,
        "{whole:?}"
    );
    let size = index::size(n);
    let most = &verify_sampled(&db, n, n, size - 1, |_| {}).unwrap()[0];
    assert_eq!(most.positions, size - 1);
    assert!(
        whole.mismatches - most.mismatches <= 1,
        "{whole:?} {most:?}"
    );
    assert!(
        whole.distance_faults - most.distance_faults <= 1,
        "{whole:?} {most:?}"
    );
    let few = &verify_sampled(&db, n, n, 5000, |_| {}).unwrap()[0];
    assert!(few.mismatches >= 1 && few.distance_faults >= 1, "{few:?}");
    for m in &few.examples {
        assert_eq!(m.stored, values[10][index::rank(&m.board) as usize]);
    }
}

#[test]
fn a_wrong_round_is_caught() {
    let rules = Rules::AWARI;
    let (values, rounds) = solved(rules);
    let n = 10u32;
    // A won position that needs in-layer moves before it captures: round 1 or more.
    let at = (0..rounds[10].len())
        .find(|&i| values[10][i] > 0 && rounds[10][i] >= 2)
        .expect("layer 10 has won positions that take a few moves to convert");
    let mut wrong = rounds[10].clone();
    wrong[at] = 0;
    let check = check_layer(rules, n, &values, Some(&wrong));
    assert!(
        check.distance_faults >= 1,
        "a won position's round set to 0"
    );
    // And a draw with a round: also wrong.
    let draw = (0..rounds[10].len()).find(|&i| values[10][i] == 0).unwrap();
    let mut wrong = rounds[10].clone();
    wrong[draw] = 3;
    assert!(check_layer(rules, n, &values, Some(&wrong)).distance_faults >= 1);
}
