//! The lean pass against the in-memory one: the reachability game of the own-row values
//! settles what the in-memory pass settles, and the checkpoint interval stretches with the
//! time a save takes.

use super::*;

/// A given interval is kept whatever the saves cost; without one, the default interval
/// stretches to 50 times a save that is long enough to matter.
#[test]
fn the_default_checkpoint_interval_stretches_with_the_save_time() {
    let secs = Duration::from_secs;
    assert_eq!(checkpoint_wait(Some(secs(0)), secs(40)), secs(0));
    assert_eq!(checkpoint_wait(Some(secs(60)), secs(40)), secs(60));
    assert_eq!(checkpoint_wait(None, Duration::ZERO), secs(300));
    assert_eq!(checkpoint_wait(None, secs(2)), secs(300));
    assert_eq!(checkpoint_wait(None, secs(6)), secs(300));
    assert_eq!(checkpoint_wait(None, secs(7)), secs(350));
    assert_eq!(checkpoint_wait(None, secs(30)), secs(1500));
    assert_eq!(checkpoint_wait(None, Duration::MAX), Duration::MAX);
}

/// The lean pass of the own-row values' reachability game gives, position by position,
/// the in-memory `lo` game's values, over lower layers read from pair files: the
/// bounds of every preset, whose low and high differ (so the two nodes' exits differ),
/// and with a buffer so small that every round spills to runs.
#[test]
fn the_reachability_game_is_the_in_memory_one() {
    use crate::solve::bounds::{reach_of_layer, solve_all_bounds};
    use crate::store::{write_pair, LayerFile, LayerSummary};
    let top = 9;
    for rules in [Rules::AWARI, Rules::ABAPA, Rules::GRAND_SLAM_CAPTURES] {
        let root = tempfile::tempdir().unwrap();
        let high = TableKind::OwnRowHigh(crate::rules::Repetition::First);
        let lower = solve_all_bounds(rules, top);
        let write = WriteOptions {
            block_size: 1000,
            zstd_level: 1,
            codec: crate::store::Codec::Zstd,
        };
        for (m, pair) in lower.iter().enumerate() {
            let m = m as u32;
            let bytes = |v: &[i8]| v.iter().map(|&x| x as u8).collect::<Vec<u8>>();
            let summary = |v: &[i8]| LayerSummary::from_values(m, v);
            write_pair(
                root.path(),
                rules,
                m,
                high,
                &bytes(&pair.low),
                &bytes(&pair.high),
                (summary(&pair.low), summary(&pair.high)),
                write,
            )
            .unwrap();
        }
        let out = tempfile::tempdir().unwrap();
        let opts = LeanOptions {
            buffer_bytes: Some(MIN_BUFFER),
            checkpoint_every: Some(Duration::ZERO),
            scratch: None,
        };
        for n in 1..=top + 1 {
            // Layer n over the lower layers' files, written beside them under `out`.
            for m in n.saturating_sub(18)..n {
                for kind in [high.low_of_pair().unwrap(), high] {
                    let from = store::table_path(root.path(), rules, m, kind);
                    let to = store::table_path(out.path(), rules, m, kind);
                    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                    let _ = std::fs::copy(from, to);
                }
            }
            let scratch = out.path().join("scratch");
            let (low, high_file, exact) = build_reach_layer(
                out.path(),
                &scratch,
                rules,
                n,
                high,
                &opts,
                write,
                &super::super::Quiet,
            )
            .unwrap();
            let expected = reach_of_layer(rules, n, &lower[..n as usize]);
            let read = |w: &WrittenLayer, kind| {
                LayerFile::open_kind(&w.path, rules, n, kind)
                    .unwrap()
                    .read_all()
                    .unwrap()
            };
            for (got, want, end) in [
                (
                    read(&low, high.low_of_pair().unwrap()),
                    &expected.low,
                    "low",
                ),
                (read(&high_file, high), &expected.high, "high"),
            ] {
                let first = got.iter().zip(want.iter()).position(|(a, b)| a != b);
                assert_eq!(
                    first, None,
                    "{rules} layer {n}: the {end} end differs first at this position"
                );
                assert_eq!(got.len(), want.len());
            }
            assert_eq!(exact, expected.exact(), "{rules} layer {n}");
            assert!(!scratch.exists(), "the scratch folder is removed");
        }
    }
}
