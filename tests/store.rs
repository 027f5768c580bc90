//! Layer files end to end: what `build` writes is what the readers read back, the header's
//! counts are the values' counts, and every kind of damage is refused with the right typed
//! error, never a panic.
//!
//! Every database here is built from scratch in a temporary folder (layers 0..=10 at most,
//! well under a second each at the test profile's opt-level) and compared with
//! `solve_all`, which keeps everything in memory and never touches the store.

use assert_cmd::Command;
use awari::build::{self, BuildOptions, LayerReport};
use awari::index;
use awari::store::{
    self, LayerFile, LayerSummary, StoreError, TableKind, WriteOptions, FIXED_HEADER, MAGIC,
};

/// Records the layers a build reports, in order.
#[derive(Default)]
struct SeenLayers(std::sync::Mutex<Vec<u32>>);
impl awari::solve::SolveObserver for SeenLayers {}
impl awari::solve::lean::LeanObserver for SeenLayers {}
impl build::BuildObserver for SeenLayers {
    fn layer_done(&self, r: &build::LayerReport) {
        self.0.lock().unwrap().push(r.seeds);
    }
}
use awari::{Board, Database, ProbeError, Rules};
use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use tempfile::TempDir;

const RULES: Rules = Rules::AWARI;

/// `solve_all(AWARI, 10)`, computed once for the whole test binary.
fn expected() -> &'static [Vec<i8>] {
    static EXPECTED: OnceLock<Vec<Vec<i8>>> = OnceLock::new();
    EXPECTED.get_or_init(|| awari::solve::solve_all(RULES, 10))
}

fn options(db: &Path, max_seeds: u32, block_size: u32, threads: Option<usize>) -> BuildOptions {
    BuildOptions {
        threads,
        write: WriteOptions {
            block_size,
            ..WriteOptions::default()
        },
        ..BuildOptions::new(db, RULES, max_seeds)
    }
}

fn build_db(db: &Path, max_seeds: u32, block_size: u32) -> Vec<LayerReport> {
    build::build(
        &options(db, max_seeds, block_size, Some(2)),
        &awari::solve::Quiet,
    )
    .expect("build")
}

/// A fresh database of layers 0..=max_seeds written with `block_size` positions a block.
fn fresh_db(max_seeds: u32, block_size: u32) -> TempDir {
    let dir = TempDir::new().unwrap();
    build_db(dir.path(), max_seeds, block_size);
    dir
}

fn path_of(db: &Path, seeds: u32) -> PathBuf {
    store::layer_path(db, RULES, seeds)
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

/// The block count and the end of the header (where the first block starts) of a file.
fn layout(bytes: &[u8]) -> (usize, usize) {
    let (blocks, header_end) = header_end(bytes);
    assert_eq!(u64_at(bytes, FIXED_HEADER) as usize, header_end);
    (blocks, header_end)
}

/// The block count and the end of the header of a file (with the context model, its
/// first block starts after the model, not there).
fn header_end(bytes: &[u8]) -> (usize, usize) {
    let blocks = u64_at(bytes, 32) as usize;
    (blocks, FIXED_HEADER + 8 * (blocks + 1) + 8 * blocks + 8)
}

/// The byte range of block `b` in the file.
fn block_range(bytes: &[u8], b: usize) -> (usize, usize) {
    (
        u64_at(bytes, FIXED_HEADER + 8 * b) as usize,
        u64_at(bytes, FIXED_HEADER + 8 * (b + 1)) as usize,
    )
}

/// Opens `bytes` as layer `seeds` from a file of their own, turning a panic into a test
/// failure that names the case.
fn open_bytes(dir: &Path, bytes: &[u8], rules: Rules, seeds: u32, case: &str) -> StoreError {
    let path = dir.join("damaged.awdb");
    fs::write(&path, bytes).unwrap();
    let result = catch_unwind(AssertUnwindSafe(|| LayerFile::open(&path, rules, seeds)))
        .unwrap_or_else(|_| panic!("{case}: LayerFile::open panicked"));
    match result {
        Ok(_) => panic!("{case}: the damaged file was accepted"),
        Err(e) => e,
    }
}

// ---------------------------------------------------------------------------------------
// Round trip and summaries
// ---------------------------------------------------------------------------------------

#[test]
fn every_value_reads_back_through_read_all_and_database_value() {
    // The default block size (one block for these small layers but 3 for layer 8), a small
    // one that splits every layer above 2 into many blocks, and one that does not divide
    // any layer size, so the last block is short.
    for block_size in [store::DEFAULT_BLOCK, 64, 1000] {
        let dir = fresh_db(8, block_size);
        let db = Database::open(dir.path(), RULES).unwrap();
        assert_eq!(db.complete_up_to(), Some(8));
        for n in 0..=8u32 {
            let want = &expected()[n as usize];
            let file = LayerFile::open(&path_of(dir.path(), n), RULES, n).unwrap();
            assert_eq!(file.seeds(), n);
            assert_eq!(file.positions(), index::size(n));
            assert_eq!(file.block_size(), block_size);
            assert_eq!(
                file.blocks(),
                index::size(n).div_ceil(u64::from(block_size))
            );
            assert_eq!(file.bytes(), fs::metadata(file.path()).unwrap().len());
            assert_eq!(
                &file.read_all().unwrap(),
                want,
                "layer {n}, block size {block_size}: read_all differs from solve_all"
            );
            // Block by block too, so the blocks' lengths and order are checked.
            let mut joined = Vec::new();
            for b in 0..file.blocks() {
                let block = file.read_block(b).unwrap();
                assert_eq!(block.len(), file.block_len(b));
                joined.extend(block);
            }
            assert_eq!(&joined, want, "layer {n}: blocks joined differ");
            for (i, board) in index::walk(n, 0, index::size(n)) {
                assert_eq!(
                    db.value(&board).unwrap(),
                    want[i as usize],
                    "Database::value({board}), block size {block_size}"
                );
            }
        }
        // A layer that was not built is reported as missing: the library's message names the
        // layer and the folder; the command that builds it is the CLI's to add (tests/cli.rs).
        let nine: Board = "9 0 0 0 0 0 0 0 0 0 0 0".parse().unwrap();
        match db.value(&nine) {
            Err(e @ ProbeError::LayerMissing { seeds: 9, .. }) => {
                let msg = e.to_string();
                assert!(
                    msg.contains("layer 9") && msg.contains("not built"),
                    "{msg}"
                );
                assert!(msg.contains(&dir.path().display().to_string()), "{msg}");
                assert!(!msg.contains("awari build"), "{msg}");
            }
            other => panic!("layer 9 is not built, got {other:?}"),
        }
    }
}

#[test]
fn extreme_block_sizes_and_compression_levels_round_trip() {
    // One position a block (every block a separate zstd frame), one block for the whole
    // layer whatever its size, and the fastest and a strong compression level.
    for (block_size, zstd_level) in [(1, 1), (u32::MAX, 19), (7, 3)] {
        let dir = TempDir::new().unwrap();
        let mut opts = options(dir.path(), 6, block_size, Some(2));
        opts.write.zstd_level = zstd_level;
        build::build(&opts, &awari::solve::Quiet).unwrap();
        let db = Database::open(dir.path(), RULES).unwrap();
        for n in 0..=6u32 {
            let file = db.layer(n).unwrap();
            assert_eq!(
                file.blocks(),
                index::size(n).div_ceil(u64::from(block_size))
            );
            assert_eq!(
                file.read_all().unwrap(),
                expected()[n as usize],
                "layer {n}, blocks of {block_size}, level {zstd_level}"
            );
            assert_eq!(file.summary(), &file.recount().unwrap());
            // A sample of single probes, including the first and last position.
            let size = index::size(n);
            for i in (0..size).step_by(97).chain([size - 1]) {
                let board = index::unrank(n, i);
                assert_eq!(
                    db.value(&board).unwrap(),
                    expected()[n as usize][i as usize]
                );
            }
        }
    }
}

#[test]
fn values_coded_by_a_context_model_read_back_as_built() {
    // The default block size (one block up to layer 8), small blocks, and one position a
    // block (every block a stream of one value).
    for block_size in [store::DEFAULT_BLOCK, 64, 1] {
        let dir = TempDir::new().unwrap();
        let mut opts = options(dir.path(), 10, block_size, Some(2));
        opts.write.codec = store::Codec::Context;
        build::build(&opts, &awari::solve::Quiet).unwrap();
        let db = Database::open(dir.path(), RULES).unwrap();
        for n in 0..=10u32 {
            let want = &expected()[n as usize];
            let bytes = fs::read(path_of(dir.path(), n)).unwrap();
            let version = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
            assert_eq!(
                (version, bytes[14]),
                (2, 3),
                "layer {n}: version 2, codec 3"
            );
            let file = db.layer(n).unwrap();
            assert_eq!(
                &file.read_all().unwrap(),
                want,
                "layer {n}, blocks of {block_size}"
            );
            assert_eq!(file.summary(), &file.recount().unwrap());
            for (i, board) in index::walk(n, 0, index::size(n)).step_by(7) {
                assert_eq!(db.value(&board).unwrap(), want[i as usize], "{board}");
            }
            // The distances stay zstd: the codec is the values'.
            let distances = fs::read(store::table_path(
                dir.path(),
                RULES,
                n,
                TableKind::Distances,
            ));
            if let Ok(d) = distances {
                assert_eq!((d[8], d[14]), (1, 1), "layer {n}'s distances");
            }
        }
    }
    // Smaller than zstd's where there is something to code, with the default blocks.
    let coded = TempDir::new().unwrap();
    let mut opts = options(coded.path(), 10, store::DEFAULT_BLOCK, Some(2));
    opts.write.codec = store::Codec::Context;
    build::build(&opts, &awari::solve::Quiet).unwrap();
    let plain = fresh_db(10, store::DEFAULT_BLOCK);
    let len = |dir: &Path| fs::metadata(path_of(dir, 10)).unwrap().len();
    assert!(
        len(coded.path()) < len(plain.path()),
        "layer 10: {} bytes coded, {} with zstd",
        len(coded.path()),
        len(plain.path())
    );
}

/// Recoded to the context model (code 3) or to ranks (code 6), and back to zstd: the same
/// values, then the old bytes.
#[test]
fn a_layer_recoded_to_the_context_model_and_back_is_its_old_bytes() {
    let dir = fresh_db(8, store::DEFAULT_BLOCK);
    let before: Vec<Vec<u8>> = (0..=8)
        .map(|n| fs::read(path_of(dir.path(), n)).unwrap())
        .collect();
    let context = WriteOptions {
        block_size: store::CONTEXT_BLOCK,
        codec: store::Codec::Context,
        ..WriteOptions::default()
    };
    let ranks = WriteOptions {
        block_size: 64,
        codec: store::Codec::Ranks,
        ..WriteOptions::default()
    };
    for (opts, code) in [(context, 3), (ranks, 6)] {
        for n in 0..=8u32 {
            let written = store::recode_layer(dir.path(), RULES, n, opts).unwrap();
            let bytes = fs::read(&written.path).unwrap();
            assert_eq!((bytes[8], bytes[14]), (2, code), "layer {n} recoded");
            let file = LayerFile::open(&written.path, RULES, n).unwrap();
            assert_eq!(file.codec(), opts.codec);
            assert_eq!(
                file.read_all().unwrap(),
                expected()[n as usize],
                "layer {n}"
            );
            assert_eq!(file.block_size(), opts.block_size);
        }
        // The database still opens whole and probes alike.
        let db = Database::open(dir.path(), RULES).unwrap();
        assert_eq!(db.complete_up_to(), Some(8));
        for (i, board) in index::walk(8, 0, index::size(8)).step_by(13) {
            assert_eq!(db.value(&board).unwrap(), expected()[8][i as usize]);
        }
        drop(db);
        for n in 0..=8u32 {
            store::recode_layer(dir.path(), RULES, n, WriteOptions::default()).unwrap();
            assert_eq!(
                fs::read(path_of(dir.path(), n)).unwrap(),
                before[n as usize],
                "layer {n}: zstd again, the same bytes"
            );
        }
    }
    // A layer that is not there is an error, and leaves nothing behind.
    let err = store::recode_layer(dir.path(), RULES, 9, context).unwrap_err();
    assert!(err.to_string().contains("layer-09"), "{err}");
    let leftovers: Vec<_> = fs::read_dir(dir.path().join(RULES.name()))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn a_damaged_context_model_or_a_codec_byte_at_odds_with_the_version_is_refused() {
    let dir = TempDir::new().unwrap();
    let mut opts = options(dir.path(), 6, 64, Some(2));
    opts.write.codec = store::Codec::Context;
    build::build(&opts, &awari::solve::Quiet).unwrap();
    let good = fs::read(path_of(dir.path(), 6)).unwrap();
    let (_, header_end) = header_end(&good);
    let first_block = u64_at(&good, FIXED_HEADER) as usize;
    assert!(first_block > header_end + 8, "the model lies between them");
    let scratch = TempDir::new().unwrap();
    // Every byte of the model and of its checksum.
    for at in header_end..first_block {
        let mut bad = good.clone();
        bad[at] ^= 0x10;
        let case = format!(
            "model byte {} of {}",
            at - header_end,
            first_block - header_end
        );
        let err = open_bytes(scratch.path(), &bad, RULES, 6, &case);
        assert!(
            matches!(err, StoreError::Corrupted { .. }),
            "{case}: {err:?}"
        );
        assert!(err.to_string().contains("context model"), "{case}: {err}");
    }
    // Codec 1 under version 2, or codec 3 under version 1 (header checksum recomputed, as
    // a writer with a bug would): refused as a version this program does not read.
    for (version, codec) in [(2u32, 1u8), (1, 3), (1, 6)] {
        let mut bad = good.clone();
        bad[8..12].copy_from_slice(&version.to_le_bytes());
        bad[14] = codec;
        reseal(&mut bad);
        let case = format!("version {version} with codec {codec}");
        let err = open_bytes(scratch.path(), &bad, RULES, 6, &case);
        assert!(
            matches!(err, StoreError::Version { found, .. } if found == version),
            "{case}: {err:?}"
        );
    }
    // Code 7 (ranks, some blocks in the low file of a pair) on a values file, which has
    // no low file: refused as damage.
    let mut bad = good.clone();
    bad[14] = 7;
    reseal(&mut bad);
    let err = open_bytes(scratch.path(), &bad, RULES, 6, "codec 7 on values");
    assert!(
        err.to_string()
            .contains("unknown index kind or compression"),
        "{err}"
    );
}

#[test]
fn header_summary_equals_recount_and_counts_add_up() {
    let dir = TempDir::new().unwrap();
    let reports = build_db(dir.path(), 8, 64);
    assert_eq!(reports.len(), 9);
    for (n, report) in (0..=8u32).zip(&reports) {
        let file = LayerFile::open(&path_of(dir.path(), n), RULES, n).unwrap();
        let summary = file.summary();
        assert_eq!(summary.seeds, n);
        assert_eq!(summary.positions, index::size(n));
        assert_eq!(summary, &file.recount().unwrap(), "layer {n}");
        assert_eq!(
            summary,
            &LayerSummary::from_values(n, &expected()[n as usize]),
            "layer {n}: header counts differ from solve_all's"
        );
        assert_eq!(&report.summary, summary, "layer {n}: build report");
        assert_eq!(report.seeds, n);
        assert_eq!(report.positions, index::size(n));
        assert!(report.built);
        assert_eq!(report.bytes, file.bytes());

        let total: u64 = summary.histogram.iter().sum();
        assert_eq!(total, index::size(n), "layer {n}: histogram total");
        assert_eq!(
            summary.wins() + summary.draws() + summary.losses(),
            index::size(n)
        );
        // Values lie in −n..=n.
        for v in -48..=48i32 {
            if v.abs() > n as i32 {
                assert_eq!(summary.count(v), 0, "layer {n} counts value {v}");
            }
        }
        assert_eq!(summary.draws(), summary.count(0));
    }
    // Two facts that do not depend on the solver: the empty board is a draw, and a lone
    // seed can never go round for ever (whoever lacks it cannot move, which ends the game),
    // so no position of layer 1 is drawn.
    let l0 = LayerFile::open(&path_of(dir.path(), 0), RULES, 0).unwrap();
    assert_eq!(l0.summary().draws(), 1);
    let l1 = LayerFile::open(&path_of(dir.path(), 1), RULES, 1).unwrap();
    assert_eq!(l1.summary().wins() + l1.summary().losses(), 12);
}

// ---------------------------------------------------------------------------------------
// Damage: flipped bytes
// ---------------------------------------------------------------------------------------

#[test]
fn a_flipped_byte_anywhere_in_the_header_is_refused_at_open() {
    // Layer 5 in blocks of 64: 69 blocks, a header of about 2 KB. Every byte is flipped in
    // turn, so each field (rules, layer, sizes, histogram, block table, block checksums,
    // header checksum) is covered.
    let dir = fresh_db(5, 64);
    let good = fs::read(path_of(dir.path(), 5)).unwrap();
    let (blocks, header_end) = layout(&good);
    assert_eq!(blocks, 69);
    let scratch = TempDir::new().unwrap();
    for at in 0..header_end {
        let mut bad = good.clone();
        bad[at] ^= 0xFF;
        let case = format!("byte {at} of {header_end} flipped");
        let err = open_bytes(scratch.path(), &bad, RULES, 5, &case);
        match at {
            0..=7 => assert!(
                matches!(err, StoreError::NotADatabase { .. }),
                "{case}: {err:?}"
            ),
            8..=11 => assert!(
                matches!(err, StoreError::Version { found, .. } if found != store::VERSION),
                "{case}: {err:?}"
            ),
            // The block count sizes the table the checksum covers; a damaged count may be
            // taken for a short file. Refused either way; see
            // `a_flipped_block_count_is_reported_as_corruption` for the stricter claim.
            32..=39 => assert!(
                matches!(
                    err,
                    StoreError::Corrupted { .. } | StoreError::Truncated { .. }
                ),
                "{case}: {err:?}"
            ),
            _ => assert!(
                matches!(err, StoreError::Corrupted { .. }),
                "{case}: {err:?}"
            ),
        }
        // Every message names the file.
        assert!(err.to_string().contains("damaged.awdb"), "{case}: {err}");
    }
}

#[test]
fn a_flipped_block_count_is_reported_as_corruption() {
    // The file has its full length; only the block count (bytes 32..40) is wrong. Calling it
    // "truncated (N bytes, the header says M)" sends the user looking for a partial copy.
    let dir = fresh_db(5, 64);
    let good = fs::read(path_of(dir.path(), 5)).unwrap();
    let scratch = TempDir::new().unwrap();
    for at in 32..40 {
        let mut bad = good.clone();
        bad[at] ^= 0xFF;
        let case = format!("block count byte {at} flipped");
        let err = open_bytes(scratch.path(), &bad, RULES, 5, &case);
        assert!(matches!(err, StoreError::Corrupted { .. }), "{case}: {err}");
    }
}

/// Re-seals a header after an edit: recomputes the header checksum, as a careless tool (or
/// a malicious file) would, so only the reader's own field checks stand in the way.
fn reseal(bytes: &mut [u8]) {
    let (_, header_end) = header_end(bytes);
    let sum = xxhash_rust::xxh3::xxh3_64(&bytes[..header_end - 8]);
    bytes[header_end - 8..header_end].copy_from_slice(&sum.to_le_bytes());
}

#[test]
fn a_header_edited_behind_a_valid_checksum_is_refused_or_read_without_panic() {
    let dir = fresh_db(5, 64);
    let good = fs::read(path_of(dir.path(), 5)).unwrap();
    let (blocks, header_end) = layout(&good);
    let scratch = TempDir::new().unwrap();
    let path = scratch.path().join("resealed.awdb");
    let histogram = 40..FIXED_HEADER;
    let checksums = FIXED_HEADER + 8 * (blocks + 1)..header_end - 8;
    // Every byte after the version, except the block count (which moves the checksum) and
    // the checksum itself, with two different edits; in the histogram and the block
    // checksums (which open accepts, so each case reads the whole layer) only the first byte
    // of each entry, and in the block offsets their two low bytes and their top byte.
    let offsets = FIXED_HEADER..FIXED_HEADER + 8 * (blocks + 1);
    let sampled = |at: &usize| {
        let byte_of_entry = at % 8;
        if (32..40).contains(at) {
            false
        } else if histogram.contains(at) || checksums.contains(at) {
            byte_of_entry == 0
        } else if offsets.contains(at) {
            [0, 1, 7].contains(&byte_of_entry)
        } else {
            true
        }
    };
    for at in (12..header_end - 8).filter(sampled) {
        for flip in [0x01u8, 0xFF] {
            let mut bad = good.clone();
            bad[at] ^= flip;
            reseal(&mut bad);
            fs::write(&path, &bad).unwrap();
            let case = format!("byte {at} ^ {flip:#x}, resealed");
            let opened = catch_unwind(AssertUnwindSafe(|| LayerFile::open(&path, RULES, 5)))
                .unwrap_or_else(|_| panic!("{case}: open panicked"));
            let file = match opened {
                Err(e) => {
                    // Refused: the field that was edited decides how.
                    match at {
                        12 => assert!(matches!(e, StoreError::WrongRules { .. }), "{case}: {e:?}"),
                        // The layer no longer matches the position count: corruption (a whole
                        // file of another layer is WrongLayer, tested above).
                        16..=19 => assert!(
                            matches!(
                                e,
                                StoreError::WrongLayer { .. } | StoreError::Corrupted { .. }
                            ),
                            "{case}: {e:?}"
                        ),
                        _ => assert!(
                            matches!(
                                e,
                                StoreError::Corrupted { .. } | StoreError::Truncated { .. }
                            ),
                            "{case}: {e:?}"
                        ),
                    }
                    continue;
                }
                Ok(file) => file,
            };
            // Accepted: open checks neither the histogram nor the block checksums, and of the
            // block offsets only their order and the last one (the file length).
            assert!(
                histogram.contains(&at) || checksums.contains(&at) || offsets.contains(&at),
                "{case}: accepted"
            );
            let checked = catch_unwind(AssertUnwindSafe(|| {
                (file.check_blocks(), file.read_all(), file.recount())
            }))
            .unwrap_or_else(|_| panic!("{case}: reading panicked"));
            if histogram.contains(&at) {
                // The values are intact; the header's counts are not.
                assert_eq!(checked.1.unwrap(), expected()[5], "{case}");
                assert_ne!(&checked.2.unwrap(), file.summary(), "{case}");
            } else {
                // A moved offset shifts the blocks on either side of it; a changed checksum
                // condemns its own block. Either way every reader says so.
                let blocks_hit = if checksums.contains(&at) {
                    let b = (at - checksums.start) / 8;
                    vec![b]
                } else {
                    let b = (at - FIXED_HEADER) / 8;
                    vec![b.saturating_sub(1), b]
                };
                for result in [checked.0.err(), checked.1.err(), checked.2.err()] {
                    assert!(
                        matches!(&result, Some(StoreError::Corrupted { what, .. })
                            if blocks_hit.iter().any(|b| what.contains(&format!("block {b} ")))),
                        "{case}: {result:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn stored_values_outside_the_layer_range_are_corruption() {
    // A value of 40 cannot occur with 5 seeds; the block's checksum is right (write_layer
    // computes it), so only the reader's range check can catch it.
    let dir = fresh_db(5, 64);
    let mut values = expected()[5].clone();
    let i = 64 * 3 + 10;
    values[i] = 40;
    store::write_layer(
        dir.path(),
        RULES,
        5,
        &values,
        WriteOptions {
            block_size: 64,
            ..WriteOptions::default()
        },
    )
    .unwrap();
    let file = LayerFile::open(&path_of(dir.path(), 5), RULES, 5).unwrap();
    file.check_blocks().expect("the checksums are right");
    let err = file.read_block(3).unwrap_err();
    assert!(
        matches!(&err, StoreError::Corrupted { what, .. } if what.contains("block 3")),
        "{err:?}"
    );
    assert!(file.read_block(2).is_ok());
    let db = Database::open(dir.path(), RULES).unwrap();
    assert!(matches!(
        db.value(&index::unrank(5, i as u64)),
        Err(ProbeError::Store(StoreError::Corrupted { .. }))
    ));
}

#[test]
fn a_flipped_byte_in_a_block_is_detected_when_that_block_is_read() {
    let dir = fresh_db(8, 64);
    let path = path_of(dir.path(), 8);
    let good = fs::read(&path).unwrap();
    let (blocks, _) = layout(&good);
    assert!(blocks > 1000, "layer 8 in blocks of 64 has {blocks} blocks");
    let victim = 500usize;
    let (start, end) = block_range(&good, victim);
    assert!(end > start);
    let mut bad = good.clone();
    bad[(start + end) / 2] ^= 0x01;
    // Replace the file (not in place: nothing has it mapped yet, but be honest about it).
    fs::remove_file(&path).unwrap();
    fs::write(&path, &bad).unwrap();

    // The header is intact, so the file opens.
    let file = LayerFile::open(&path, RULES, 8).expect("the header is intact");
    let want = &expected()[8];
    let is_block_error = |e: &StoreError| {
        matches!(e, StoreError::Corrupted { what, path: p }
            if what.contains(&format!("block {victim}")) && p == &path)
    };

    // read_block: the damaged block fails, its neighbours read fine.
    let err = file.read_block(victim as u64).unwrap_err();
    assert!(is_block_error(&err), "{err:?}");
    for b in [0, victim - 1, victim + 1, blocks - 1] {
        let values = file.read_block(b as u64).unwrap();
        let from = b * 64;
        assert_eq!(values, want[from..from + values.len()], "block {b}");
    }
    // check_blocks, read_all and recount all notice.
    let err = file.check_blocks().unwrap_err();
    assert!(is_block_error(&err), "check_blocks: {err:?}");
    let err = file.read_all().unwrap_err();
    assert!(is_block_error(&err), "read_all: {err:?}");
    let err = file.recount().unwrap_err();
    assert!(is_block_error(&err), "recount: {err:?}");

    // Database::value of a board in that block fails; of a board elsewhere it works.
    let db = Database::open(dir.path(), RULES).expect("headers are intact");
    for i in [
        victim as u64 * 64,
        victim as u64 * 64 + 37,
        victim as u64 * 64 + 63,
    ] {
        let board = index::unrank(8, i);
        match db.value(&board) {
            Err(ProbeError::Store(e)) => assert!(is_block_error(&e), "{board}: {e:?}"),
            other => panic!("{board} lies in the damaged block, got {other:?}"),
        }
    }
    for i in [0, victim as u64 * 64 - 1, victim as u64 * 64 + 64] {
        let board = index::unrank(8, i);
        assert_eq!(db.value(&board).unwrap(), want[i as usize], "{board}");
    }
    // Asking twice does not get a cached wrong answer either.
    assert!(db.value(&index::unrank(8, victim as u64 * 64 + 1)).is_err());

    // Rebuilding over the damaged layer refuses rather than trusts it.
    let err = build::build(&options(dir.path(), 9, 64, Some(1)), &awari::solve::Quiet).unwrap_err();
    assert!(
        matches!(
            &err,
            build::BuildError::Damaged(StoreError::Corrupted { .. })
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("remove the damaged file"), "{err}");
}

#[test]
fn a_flipped_byte_in_any_block_is_detected_by_check_blocks() {
    // Every block of layer 6 in blocks of 64 (194 blocks), one at a time, at its first, middle
    // and last byte.
    let dir = fresh_db(6, 64);
    let good = fs::read(path_of(dir.path(), 6)).unwrap();
    let (blocks, _) = layout(&good);
    let scratch = TempDir::new().unwrap();
    let path = scratch.path().join("layer.awdb");
    for b in 0..blocks {
        let (start, end) = block_range(&good, b);
        for at in [start, (start + end) / 2, end - 1] {
            let mut bad = good.clone();
            bad[at] ^= 0x80;
            fs::write(&path, &bad).unwrap();
            let file = LayerFile::open(&path, RULES, 6).unwrap();
            let err = file.check_blocks().unwrap_err();
            assert!(
                matches!(&err, StoreError::Corrupted { what, .. } if what.contains(&format!("block {b}"))),
                "block {b}, byte {at}: {err:?}"
            );
            assert!(file.read_block(b as u64).is_err());
        }
    }
}

// ---------------------------------------------------------------------------------------
// Damage: truncation, garbage, wrong rules, wrong layer
// ---------------------------------------------------------------------------------------

#[test]
fn a_truncated_file_is_refused_and_never_panics() {
    let dir = fresh_db(8, 64);
    let good = fs::read(path_of(dir.path(), 8)).unwrap();
    let (blocks, header_end) = layout(&good);
    let table_start = FIXED_HEADER;
    let (first_block, _) = block_range(&good, 0);
    assert_eq!(first_block, header_end);
    let len = good.len();
    let scratch = TempDir::new().unwrap();

    let mut cuts: Vec<(usize, &str)> = vec![
        (8, "magic only"),
        (9, "inside the version"),
        (20, "inside the fixed header"),
        (FIXED_HEADER - 1, "just before the block table"),
        (FIXED_HEADER, "at the block table"),
        (table_start + 8 * (blocks / 2), "inside the offset table"),
        (
            FIXED_HEADER + 8 * (blocks + 1) + 8 * (blocks / 2),
            "inside the checksums",
        ),
        (header_end - 1, "inside the header checksum"),
        (header_end, "right after the header"),
        (header_end + 1, "one byte into the body"),
        (len / 2, "inside the body"),
        (
            block_range(&good, blocks / 2).0 + 1,
            "inside a middle block",
        ),
        (len - 1, "one byte short"),
    ];
    // And every cut inside the fixed header, about 300 more spread over the rest.
    cuts.extend((8..FIXED_HEADER).map(|c| (c, "fixed header sweep")));
    cuts.extend(
        (FIXED_HEADER..len)
            .step_by((len - FIXED_HEADER) / 300 + 1)
            .map(|c| (c, "sweep")),
    );

    for (cut, what) in cuts {
        let case = format!("cut at {cut} of {len} ({what})");
        let err = open_bytes(scratch.path(), &good[..cut], RULES, 8, &case);
        match err {
            StoreError::Truncated {
                found, expected, ..
            } => {
                assert_eq!(found, cut as u64, "{case}");
                assert!(expected > found, "{case}: expected {expected}");
                // Once the header is whole, the expected length is the real one.
                if cut >= header_end {
                    assert_eq!(expected, len as u64, "{case}");
                }
            }
            other => panic!("{case}: {other:?}"),
        }
    }
    // Below the magic's length it cannot even be told to be a database.
    for cut in 0..8 {
        let case = format!("cut at {cut}");
        let err = open_bytes(scratch.path(), &good[..cut], RULES, 8, &case);
        assert!(
            matches!(err, StoreError::NotADatabase { .. }),
            "{case}: {err:?}"
        );
    }
    // Trailing bytes are damage too.
    let mut longer = good.clone();
    longer.push(0);
    let err = open_bytes(scratch.path(), &longer, RULES, 8, "one byte too many");
    assert!(matches!(err, StoreError::Corrupted { .. }), "{err:?}");
}

#[test]
fn garbage_is_not_a_database() {
    let scratch = TempDir::new().unwrap();
    // A cheap deterministic generator: no dependency, same bytes every run.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x as u8
    };
    for len in [8usize, 100, 816, 5000, 100_000] {
        let bytes: Vec<u8> = (0..len).map(|_| next()).collect();
        let err = open_bytes(
            scratch.path(),
            &bytes,
            RULES,
            8,
            &format!("{len} random bytes"),
        );
        assert!(matches!(err, StoreError::NotADatabase { .. }), "{err:?}");
    }
    let text = b"layer,positions\n8,75582\n".repeat(100);
    let err = open_bytes(scratch.path(), &text, RULES, 8, "a CSV file");
    assert!(matches!(err, StoreError::NotADatabase { .. }), "{err:?}");
    assert!(err.to_string().contains("not an awari database"), "{err}");

    // The magic followed by garbage: refused with some typed error, no panic.
    for len in [8usize, 100, 816, 900, 5000, 100_000] {
        let mut bytes: Vec<u8> = (0..len).map(|_| next()).collect();
        bytes[..8].copy_from_slice(&MAGIC);
        open_bytes(
            scratch.path(),
            &bytes,
            RULES,
            8,
            &format!("magic + {len} random"),
        );
        // With a plausible version too, so the checks behind it are reached.
        if len >= 12 {
            bytes[8..12].copy_from_slice(&store::VERSION.to_le_bytes());
            open_bytes(
                scratch.path(),
                &bytes,
                RULES,
                8,
                &format!("magic + version + {len} random"),
            );
        }
    }
    // A folder, and a file that is not there: Io errors, not panics.
    let err = LayerFile::open(scratch.path(), RULES, 8).unwrap_err();
    assert!(!matches!(err, StoreError::Corrupted { .. }), "{err:?}");
    let err = LayerFile::open(&scratch.path().join("nope.awdb"), RULES, 8).unwrap_err();
    assert!(matches!(err, StoreError::Io { .. }), "{err:?}");
}

#[test]
fn another_rule_set_is_refused() {
    let dir = fresh_db(6, 64);
    let path = path_of(dir.path(), 6);
    for other in [Rules::ABAPA, Rules::GRAND_SLAM_CAPTURES] {
        match LayerFile::open(&path, other, 6).unwrap_err() {
            StoreError::WrongRules {
                expected, found, ..
            } => {
                assert_eq!(expected, other.name());
                assert_eq!(found, "awari");
            }
            e => panic!("{other}: {e:?}"),
        }
    }
    // The same file placed where the abapa layers go is refused by Database::open.
    let abapa_path = store::layer_path(dir.path(), Rules::ABAPA, 6);
    fs::create_dir_all(abapa_path.parent().unwrap()).unwrap();
    fs::copy(&path, &abapa_path).unwrap();
    match Database::open(dir.path(), Rules::ABAPA) {
        Err(StoreError::WrongRules { path, .. }) => assert_eq!(path, abapa_path),
        Err(e) => panic!("{e:?}"),
        Ok(_) => panic!("an awari layer was accepted as abapa"),
    }
    // And by the build driver (so it is not silently used to build the layers above).
    let mut opts = options(dir.path(), 7, 64, Some(1));
    opts.rules = Rules::ABAPA;
    let err = build::build(&opts, &awari::solve::Quiet).unwrap_err();
    assert!(
        matches!(
            err,
            build::BuildError::Damaged(StoreError::WrongRules { .. })
        ),
        "{err:?}"
    );
}

#[test]
fn a_file_renamed_to_another_layer_is_refused() {
    let dir = fresh_db(8, 64);
    let seven = path_of(dir.path(), 7);
    let eight = path_of(dir.path(), 8);
    match LayerFile::open(&seven, RULES, 8).unwrap_err() {
        StoreError::WrongLayer {
            expected, found, ..
        } => assert_eq!((expected, found), (8, 7)),
        e => panic!("{e:?}"),
    }
    fs::remove_file(&eight).unwrap();
    fs::rename(&seven, &eight).unwrap();
    match Database::open(dir.path(), RULES) {
        Err(StoreError::WrongLayer {
            expected: 8,
            found: 7,
            path,
        }) => assert_eq!(path, eight),
        Err(e) => panic!("{e:?}"),
        Ok(_) => panic!("layer 7 was accepted as layer 8"),
    }
}

// ---------------------------------------------------------------------------------------
// The build driver: interruption, resumption, skipping, determinism
// ---------------------------------------------------------------------------------------

/// What a build killed while writing layer 7 leaves behind: layers 0..=6 whole, the
/// distances of layer 7 already renamed into place (they are written first), and the
/// temporary values file of layer 7 cut short. Made by hand from a clean build, since a
/// fault injected into the library's write path would be a hook in production code.
fn crashed_while_writing_layer_7(clean: &std::path::Path, crashed: &std::path::Path) {
    let from = store::rules_dir(clean, RULES);
    let to = store::rules_dir(crashed, RULES);
    fs::create_dir_all(&to).unwrap();
    for n in 0..=6 {
        for kind in [TableKind::Values, TableKind::Distances] {
            let name = store::table_path(clean, RULES, n, kind);
            fs::copy(&name, to.join(name.file_name().unwrap())).unwrap();
        }
    }
    let distances = store::table_path(clean, RULES, 7, TableKind::Distances);
    fs::copy(&distances, to.join(distances.file_name().unwrap())).unwrap();
    let values = fs::read(store::table_path(clean, RULES, 7, TableKind::Values)).unwrap();
    fs::write(
        store::temporary_path(crashed, RULES, 7, TableKind::Values),
        &values[..values.len() / 2],
    )
    .unwrap();
    assert!(from.exists());
}

#[test]
fn an_interrupted_build_resumes_at_the_first_missing_layer() {
    let clean = TempDir::new().unwrap();
    build_db(clean.path(), 9, 64);
    let dir = TempDir::new().unwrap();
    crashed_while_writing_layer_7(clean.path(), dir.path());
    let db = dir.path().to_str().unwrap();

    // The database opens and knows it only has 0..=6.
    let partial = Database::open(dir.path(), RULES).unwrap();
    assert_eq!(partial.complete_up_to(), Some(6));

    // Layers 0..=6 are kept, 7..=9 are built, the leftovers replaced.
    let output = Command::cargo_bin("awari")
        .unwrap()
        .args([
            "build",
            "--max-seeds",
            "9",
            "--db",
            db,
            "-q",
            "--block-size",
            "64",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        stdout.contains("3 built, 7 already there"),
        "resumed build said:\n{stdout}"
    );
    let left: Vec<String> = fs::read_dir(store::rules_dir(dir.path(), RULES))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    for n in 0..=9 {
        for kind in [TableKind::Values, TableKind::Distances] {
            assert_eq!(
                fs::read(store::table_path(dir.path(), RULES, n, kind)).unwrap(),
                fs::read(store::table_path(clean.path(), RULES, n, kind)).unwrap(),
                "layer {n} {kind:?} differs from a build that was never interrupted"
            );
        }
    }
    Command::cargo_bin("awari")
        .unwrap()
        .args(["verify", "--db", db])
        .assert()
        .success();
}

/// A real kill, at whatever point the build has reached: the next build finishes the job
/// and every file is byte for byte what an uninterrupted build writes.
#[test]
fn a_killed_build_resumes_byte_identical() {
    let clean = TempDir::new().unwrap();
    build_db(clean.path(), 14, 64);
    let dir = TempDir::new().unwrap();
    let db = dir.path().to_str().unwrap();
    let args = [
        "build",
        "--max-seeds",
        "14",
        "--db",
        db,
        "-q",
        "--block-size",
        "64",
    ];
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("awari"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once some layers are on disk and before the last one is.
    let twelve = store::layer_path(dir.path(), RULES, 12);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !twelve.exists() && std::time::Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let _ = child.kill();
    child.wait().unwrap();
    Command::cargo_bin("awari")
        .unwrap()
        .args(args)
        .assert()
        .success();
    for n in 0..=14 {
        for kind in [TableKind::Values, TableKind::Distances] {
            assert_eq!(
                fs::read(store::table_path(dir.path(), RULES, n, kind)).unwrap(),
                fs::read(store::table_path(clean.path(), RULES, n, kind)).unwrap(),
                "layer {n} {kind:?}"
            );
        }
    }
}

#[test]
fn a_build_over_a_complete_database_skips_every_layer() {
    let dir = TempDir::new().unwrap();
    let first = build_db(dir.path(), 8, 64);
    assert!(first.iter().all(|r| r.built));
    let before: Vec<Vec<u8>> = (0..=8)
        .map(|n| fs::read(path_of(dir.path(), n)).unwrap())
        .collect();

    let seen = SeenLayers::default();
    let second = build::build(&options(dir.path(), 8, 64, Some(2)), &seen).unwrap();
    let seen = seen.0.into_inner().unwrap();
    assert_eq!(
        seen,
        (0..=8).collect::<Vec<_>>(),
        "on_layer once a layer, in order"
    );
    assert_eq!(second.len(), 9);
    for (a, b) in first.iter().zip(&second) {
        assert!(!b.built, "layer {} was built again", b.seeds);
        assert_eq!(a.seeds, b.seeds);
        assert_eq!(a.positions, b.positions);
        assert_eq!(a.bytes, b.bytes);
        assert_eq!(a.summary, b.summary);
    }
    for n in 0..=8 {
        assert_eq!(
            fs::read(path_of(dir.path(), n)).unwrap(),
            before[n as usize]
        );
    }

    // A lower --max-seeds only looks at the layers asked for.
    let lower = build_db(dir.path(), 5, 64);
    assert_eq!(lower.len(), 6);
    assert!(lower.iter().all(|r| !r.built));

    // Going further builds only the new layers, from the stored ones.
    let more = build_db(dir.path(), 10, 64);
    let built: Vec<u32> = more.iter().filter(|r| r.built).map(|r| r.seeds).collect();
    assert_eq!(built, vec![9, 10]);
    for n in 9..=10 {
        let file = LayerFile::open(&path_of(dir.path(), n), RULES, n).unwrap();
        assert_eq!(
            file.read_all().unwrap(),
            expected()[n as usize],
            "layer {n}"
        );
    }

    // A hole in the middle is filled, and only the hole is built.
    fs::remove_file(path_of(dir.path(), 4)).unwrap();
    let refill = build_db(dir.path(), 10, 64);
    let built: Vec<u32> = refill.iter().filter(|r| r.built).map(|r| r.seeds).collect();
    assert_eq!(built, vec![4]);
    assert_eq!(fs::read(path_of(dir.path(), 4)).unwrap(), before[4]);
}

#[test]
fn builds_are_byte_identical_whatever_the_thread_count() {
    let mut reference: Option<Vec<Vec<u8>>> = None;
    for threads in [1usize, 2, 4] {
        let dir = TempDir::new().unwrap();
        build::build(
            &options(dir.path(), 10, store::DEFAULT_BLOCK, Some(threads)),
            &awari::solve::Quiet,
        )
        .unwrap();
        let files: Vec<Vec<u8>> = (0..=10)
            .map(|n| fs::read(path_of(dir.path(), n)).unwrap())
            .collect();
        match &reference {
            None => {
                // The single-threaded build is also the right one.
                for (n, bytes) in files.iter().enumerate() {
                    let path = dir.path().join("check.awdb");
                    fs::write(&path, bytes).unwrap();
                    let file = LayerFile::open(&path, RULES, n as u32).unwrap();
                    assert_eq!(file.read_all().unwrap(), expected()[n], "layer {n}");
                }
                reference = Some(files);
            }
            Some(want) => {
                for (n, (a, b)) in want.iter().zip(&files).enumerate() {
                    assert!(
                        a == b,
                        "layer {n}: {threads} threads wrote different bytes than 1 thread"
                    );
                }
            }
        }
    }
}
