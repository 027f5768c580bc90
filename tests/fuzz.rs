//! A fuzz harness on stable Rust: proptest feeds arbitrary input to the three
//! readers of untrusted data, for a bounded number of cases so it runs in the test suite.
//!
//! - the board parser: any string gives `Ok` or `Err`, never a panic, and a parsed board
//!   prints as text that parses back to it;
//! - the batch reader (`awari probe --batch`, through the binary): arbitrary bytes give one
//!   output line per input line, never a panic;
//! - the layer-file reader (in process): a real layer file with bytes flipped, inserted or
//!   cut off either fails to open or answers every probe with the right value or an error,
//!   never a panic and never a wrong value.

mod common;

use awari::{Board, Database, Rules};
use proptest::prelude::*;
use proptest::test_runner::Config;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The layer the file fuzzing damages (12,376 positions, a few kB on disk).
const LAYER: u8 = 6;

/// Layers 0..=8 of `awari`, built with the CLI once per test binary.
fn db() -> &'static Path {
    static DB: OnceLock<PathBuf> = OnceLock::new();
    DB.get_or_init(|| common::build_fixture(&common::scratch_root("awari-fuzz-tests"), 8))
}

fn layer_path(db: &Path, n: u8) -> PathBuf {
    db.join("awari").join(format!("layer-{n:02}.awdb"))
}

fn config(cases: u32) -> Config {
    Config {
        cases,
        max_shrink_iters: 64,
        failure_persistence: None,
        ..Config::default()
    }
}

// ---------------------------------------------------------------------------------------
// The board parser
// ---------------------------------------------------------------------------------------

/// Text that is nearly a board: up to 14 numbers (some out of range, some signed or not
/// numbers at all) joined by the separators the parser knows and some it does not.
fn board_like() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        4 => (0u32..=12).prop_map(|n| n.to_string()),
        1 => (0u32..=300).prop_map(|n| n.to_string()),
        1 => any::<i64>().prop_map(|n| n.to_string()),
        1 => "[0-9a-z+\\-.]{0,4}",
    ];
    let sep = prop_oneof![
        Just(" "),
        Just(","),
        Just("/"),
        Just("|"),
        Just("  "),
        Just("\t"),
        Just(", "),
        Just(";"),
        Just("\n"),
    ];
    proptest::collection::vec((token, sep), 0..=14).prop_map(|parts| {
        parts
            .into_iter()
            .map(|(t, s)| format!("{t}{s}"))
            .collect::<String>()
    })
}

proptest! {
    #![proptest_config(config(2000))]

    #[test]
    fn the_board_parser_never_panics_on_any_string(text in any::<String>()) {
        if let Ok(b) = text.parse::<Board>() {
            prop_assert_eq!(b.to_string().parse::<Board>(), Ok(b));
        }
    }

    #[test]
    fn the_board_parser_never_panics_on_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
        let text = String::from_utf8_lossy(&bytes);
        if let Ok(b) = text.parse::<Board>() {
            prop_assert_eq!(b.to_string().parse::<Board>(), Ok(b));
        }
    }

    #[test]
    fn nearly_boards_parse_to_boards_that_round_trip(text in board_like()) {
        if let Ok(b) = text.parse::<Board>() {
            prop_assert!(b.seeds() <= 48);
            prop_assert_eq!(b.to_string().parse::<Board>(), Ok(b));
        }
    }

    #[test]
    fn every_board_round_trips_through_its_text(b in common::any_board()) {
        prop_assert_eq!(b.to_string().parse::<Board>(), Ok(b));
    }
}

// ---------------------------------------------------------------------------------------
// The batch reader
// ---------------------------------------------------------------------------------------

/// One input line (no newline in it): a good board, a near miss, or arbitrary bytes.
fn batch_line() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        2 => common::any_board().prop_map(|b| {
            // Only boards of the built layers get a value; others are bad lines too.
            b.to_string().into_bytes()
        }),
        2 => common::board_of(8).prop_map(|b| b.to_string().into_bytes()),
        1 => board_like().prop_map(|s| s.replace('\n', " ").into_bytes()),
        2 => proptest::collection::vec(any::<u8>().prop_filter("no newline", |&c| c != b'\n'), 0..40),
        1 => Just(Vec::new()),
    ]
}

proptest! {
    #![proptest_config(config(12))]

    #[test]
    fn the_batch_reader_answers_every_line_of_arbitrary_input(
        lines in proptest::collection::vec(batch_line(), 1..12)
    ) {
        let mut input = Vec::new();
        for l in &lines {
            input.extend_from_slice(l);
            input.push(b'\n');
        }
        let out = assert_cmd::Command::new(env!("CARGO_BIN_EXE_awari"))
            .args(["probe", "--batch", "--db"])
            .arg(db())
            .write_stdin(input)
            .timeout(std::time::Duration::from_secs(20))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        prop_assert!(!stderr.contains("panicked"), "{}", stderr);
        prop_assert!(out.status.code().is_some_and(|c| c != 101), "{:?}: {}", out.status, stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        prop_assert_eq!(
            stdout.lines().count(),
            lines.len(),
            "one output line per input line; stdout:\n{}\nstderr:\n{}",
            stdout,
            stderr
        );
    }
}

// ---------------------------------------------------------------------------------------
// The layer-file reader
// ---------------------------------------------------------------------------------------

/// One way of damaging a file.
#[derive(Clone, Debug)]
enum Damage {
    /// XOR the byte at (position mod length) with a non-zero mask.
    Flip(Vec<(usize, u8)>),
    /// Flip bytes within the first 64 (the header and the start of the block table).
    FlipHeader(Vec<(usize, u8)>),
    /// Insert bytes at (position mod length + 1).
    Insert(usize, Vec<u8>),
    /// Keep only (position mod length) bytes.
    Truncate(usize),
    /// Append bytes.
    Append(Vec<u8>),
}

fn damage() -> impl Strategy<Value = Damage> {
    let flips = proptest::collection::vec((any::<usize>(), 1u8..=255), 1..8);
    let header_flips = proptest::collection::vec((0usize..64, 1u8..=255), 1..4);
    prop_oneof![
        3 => flips.prop_map(Damage::Flip),
        3 => header_flips.prop_map(Damage::FlipHeader),
        1 => (any::<usize>(), proptest::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(at, bytes)| Damage::Insert(at, bytes)),
        2 => any::<usize>().prop_map(Damage::Truncate),
        1 => proptest::collection::vec(any::<u8>(), 1..64).prop_map(Damage::Append),
    ]
}

fn apply(damage: &Damage, bytes: &mut Vec<u8>) {
    let len = bytes.len();
    match damage {
        Damage::Flip(flips) => {
            for &(at, mask) in flips {
                bytes[at % len] ^= mask;
            }
        }
        Damage::FlipHeader(flips) => {
            for &(at, mask) in flips {
                bytes[at % len] ^= mask;
            }
        }
        Damage::Insert(at, more) => {
            let at = at % len + 1;
            bytes.splice(at..at, more.iter().copied());
        }
        Damage::Truncate(keep) => bytes.truncate(keep % len),
        Damage::Append(more) => bytes.extend_from_slice(more),
    }
}

/// The true values of every board of the layer, and the undamaged file.
fn reference() -> &'static (Vec<Board>, Vec<i8>, Vec<u8>) {
    static REF: OnceLock<(Vec<Board>, Vec<i8>, Vec<u8>)> = OnceLock::new();
    REF.get_or_init(|| {
        let database = Database::open(db(), Rules::AWARI).unwrap();
        let boards = common::every_board(LAYER);
        let values = boards.iter().map(|b| database.value(b).unwrap()).collect();
        let bytes = fs::read(layer_path(db(), LAYER)).unwrap();
        (boards, values, bytes)
    })
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn a_damaged_layer_file_gives_errors_or_right_values_never_a_panic(d in damage()) {
        let (boards, values, original) = reference();
        let mut bytes = original.clone();
        apply(&d, &mut bytes);
        // A fresh folder holding only the damaged layer (the probes need no other).
        let dir = tempfile::Builder::new().prefix("file-").tempdir_in(common::scratch_root("awari-fuzz-tests")).unwrap();
        fs::create_dir_all(dir.path().join("awari")).unwrap();
        fs::write(layer_path(dir.path(), LAYER), &bytes).unwrap();
        let Ok(db) = Database::open(dir.path(), Rules::AWARI) else {
            return Ok(());
        };
        for (b, &want) in boards.iter().zip(values) {
            if let Ok(v) = db.value(b) {
                prop_assert_eq!(v, want, "a wrong value for {} from a file damaged by {:?}", b, d);
            }
        }
    }
}
