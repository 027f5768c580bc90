//! The board's text form: every refusal, the separators, print/parse round trips and the
//! picture. Expected values are written out by hand beside each case.

use awari::{Board, BoardError};
use proptest::prelude::*;

mod common;

fn parse(text: &str) -> Result<Board, BoardError> {
    text.parse::<Board>()
}

/// Parses and checks the message of the refusal is one non-empty line.
fn refuse(text: &str) -> BoardError {
    let err = parse(text).expect_err(text);
    let msg = err.to_string();
    assert!(!msg.is_empty(), "{text:?}: empty message");
    assert!(
        !msg.contains('\n') && !msg.contains('\r'),
        "{text:?}: message is not one line: {msg:?}"
    );
    err
}

// ---------------------------------------------------------------------------------------
// Refusals
// ---------------------------------------------------------------------------------------

#[test]
fn eleven_pits_are_refused() {
    let err = refuse("1 2 3 4 5 6 7 8 0 0 0");
    assert_eq!(err, BoardError::WrongPitCount { found: 11 });
    let msg = err.to_string();
    assert!(msg.contains("12") && msg.contains("11"), "{msg}");
}

#[test]
fn thirteen_pits_are_refused() {
    let err = refuse("1 2 3 4 5 6 7 8 0 0 0 1 1");
    assert_eq!(err, BoardError::WrongPitCount { found: 13 });
    let msg = err.to_string();
    assert!(msg.contains("12") && msg.contains("13"), "{msg}");
}

#[test]
fn empty_text_is_refused() {
    // No token at all, whether the text is empty or only separators.
    for text in ["", "   ", "\t\n", ", , /|"] {
        assert_eq!(
            refuse(text),
            BoardError::WrongPitCount { found: 0 },
            "{text:?}"
        );
    }
}

#[test]
fn non_numeric_counts_are_refused() {
    // Pits are named 1..=12 in messages, as players count them.
    assert_eq!(
        refuse("x 0 0 0 0 0 0 0 0 0 0 0"),
        BoardError::NotANumber {
            pit: 1,
            token: "x".into()
        }
    );
    assert_eq!(
        refuse("0 0 1.5 0 0 0 0 0 0 0 0 0"),
        BoardError::NotANumber {
            pit: 3,
            token: "1.5".into()
        }
    );
    for (token, pit) in [("4a", 12), ("0x1", 7), ("1e2", 2), ("four", 6), ("½", 9)] {
        let mut tokens = ["0"; 12];
        tokens[pit - 1] = token;
        let err = refuse(&tokens.join(" "));
        assert_eq!(
            err,
            BoardError::NotANumber {
                pit,
                token: token.into()
            }
        );
        assert!(err.to_string().contains(token), "{err}");
    }
}

#[test]
fn negative_counts_are_refused() {
    let err = refuse("0 0 0 0 -1 0 0 0 0 0 0 0");
    assert_eq!(
        err,
        BoardError::Negative {
            pit: 5,
            token: "-1".into()
        }
    );
    assert!(err.to_string().contains("-1"), "{err}");
    // Also through the comma separator, on the last pit.
    assert_eq!(
        refuse("1,1,1,1,1,1,1,1,1,1,1,-12"),
        BoardError::Negative {
            pit: 12,
            token: "-12".into()
        }
    );
}

#[test]
fn a_pit_count_too_large_is_refused() {
    // 49 seeds cannot be in one pit: the game has 48.
    let err = refuse("49 0 0 0 0 0 0 0 0 0 0 0");
    assert_eq!(
        err,
        BoardError::PitTooLarge {
            pit: 1,
            count: "49".into()
        }
    );
    assert!(err.to_string().contains("49"), "{err}");
    // 300 does not even fit a u8.
    let err = refuse("0 0 0 0 0 0 0 0 0 0 0 300");
    assert_eq!(
        err,
        BoardError::PitTooLarge {
            pit: 12,
            count: "300".into()
        }
    );
    assert!(err.to_string().contains("300"), "{err}");
    // 256 would wrap to 0 in a u8: refused rather than read as an empty pit.
    assert_eq!(
        refuse("0 256 0 0 0 0 0 0 0 0 0 0"),
        BoardError::PitTooLarge {
            pit: 2,
            count: "256".into()
        }
    );
}

#[test]
fn a_thirty_digit_count_is_refused() {
    // Does not fit a u64: refused as too large (not as non-numeric, and no panic).
    let big = "123456789012345678901234567890";
    let err = refuse(&format!("0 {big} 0 0 0 0 0 0 0 0 0 0"));
    assert!(
        matches!(err, BoardError::PitTooLarge { pit: 2, .. }),
        "{err:?}"
    );
}

#[test]
fn a_thirty_digit_count_is_named_as_typed() {
    // The error is meant to name the problem; the user typed `big`, so the message should
    // show it (or at least not a different number).
    let big = "123456789012345678901234567890";
    let err = refuse(&format!("0 {big} 0 0 0 0 0 0 0 0 0 0"));
    let msg = err.to_string();
    assert!(msg.contains(big), "{msg}");
}

#[test]
fn more_than_48_seeds_in_all_are_refused() {
    // 11 × 4 + 5 = 49.
    let err = refuse("4 4 4 4 4 4 4 4 4 4 4 5");
    assert_eq!(err, BoardError::TooManySeeds { total: 49 });
    assert!(err.to_string().contains("49"), "{err}");
    // 10 × 5 = 50, each pit fine on its own.
    assert_eq!(
        refuse("5 5 5 5 5 5 5 5 5 5 0 0"),
        BoardError::TooManySeeds { total: 50 }
    );
    // 12 × 48 = 576: every pit at the limit.
    assert_eq!(
        refuse(&["48"; 12].join(" ")),
        BoardError::TooManySeeds { total: 576 }
    );
    // Exactly 48 is the whole game and is fine.
    assert_eq!(
        parse("4 4 4 4 4 4 4 4 4 4 4 4").unwrap(),
        Board::opening(4).unwrap()
    );
    assert_eq!(parse("48 0 0 0 0 0 0 0 0 0 0 0").unwrap().seeds(), 48);
}

#[test]
fn board_new_refuses_the_same_boards() {
    assert_eq!(
        Board::new([0, 0, 49, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
        Err(BoardError::PitTooLarge {
            pit: 3,
            count: "49".into()
        })
    );
    assert_eq!(
        Board::new([5; 12]),
        Err(BoardError::TooManySeeds { total: 60 })
    );
    assert_eq!(
        Board::opening(5),
        Err(BoardError::TooManySeeds { total: 60 })
    );
    let ok = Board::new([1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 1]).unwrap();
    assert_eq!(ok.pits(), &[1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 1]);
}

#[test]
fn every_error_message_is_one_line() {
    let cases = [
        "1 2 3",
        "",
        "1 2 3 4 5 6 7 8 9 10 11 12 13 14",
        "a b c d e f g h i j k l",
        "0 0 0 0 0 0 0 0 0 0 0 1.5",
        "0 0 0 0 0 0 0 0 0 0 0 -3",
        "0 0 0 0 0 0 0 0 0 0 0 1000",
        "0 0 0 0 0 0 0 0 0 0 0 99999999999999999999999999999",
        "9 9 9 9 9 9 0 0 0 0 0 0",
        "0 0 0 0 0 0 0 0 0 0 0 \u{1F600}",
    ];
    for text in cases {
        refuse(text); // asserts the single line
    }
}

// ---------------------------------------------------------------------------------------
// Separators and round trips
// ---------------------------------------------------------------------------------------

const PITS: [u8; 12] = [1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 1];

#[test]
fn every_separator_parses() {
    for text in [
        "1 2 3 4 5 6 7 8 0 0 0 1",
        "1,2,3,4,5,6,7,8,0,0,0,1",
        "1/2/3/4/5/6/7/8/0/0/0/1",
        "1|2|3|4|5|6|7|8|0|0|0|1",
    ] {
        assert_eq!(parse(text).unwrap().pits(), &PITS, "{text:?}");
    }
}

#[test]
fn mixed_separators_and_extra_space_parse() {
    for text in [
        "1, 2 / 3|4  5\t6,7 8/0|0 0 1",
        "  1 2 3 4 5 6 | 7 8 0 0 0 1  ",
        "1,2,3,4,5,6 / 7,8,0,0,0,1",
        "1 2 3 4 5 6\n7 8 0 0 0 1\n",
        "1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 1",
    ] {
        assert_eq!(parse(text).unwrap().pits(), &PITS, "{text:?}");
    }
}

#[test]
fn print_is_the_twelve_counts_separated_by_spaces() {
    let board = Board::new(PITS).unwrap();
    assert_eq!(board.to_string(), "1 2 3 4 5 6 7 8 0 0 0 1");
    assert_eq!(parse(&board.to_string()).unwrap(), board);
    assert_eq!(Board::default().to_string(), "0 0 0 0 0 0 0 0 0 0 0 0");
    assert_eq!(
        Board::opening(4).unwrap().to_string(),
        "4 4 4 4 4 4 4 4 4 4 4 4"
    );
    assert_eq!(
        parse("0 0 0 0 0 0 0 0 0 0 0 48").unwrap().to_string(),
        "0 0 0 0 0 0 0 0 0 0 0 48"
    );
}

#[test]
fn seeds_rows_and_swap() {
    let board = Board::new(PITS).unwrap();
    // 1+2+3+4+5+6 = 21 on the mover's side, 7+8+0+0+0+1 = 16 on the opponent's.
    assert_eq!(board.mover_seeds(), 21);
    assert_eq!(board.opponent_seeds(), 16);
    assert_eq!(board.seeds(), 37);
    assert_eq!(board.swapped().to_string(), "7 8 0 0 0 1 1 2 3 4 5 6");
    assert_eq!(board.swapped().swapped(), board);
}

// ---------------------------------------------------------------------------------------
// Picture
// ---------------------------------------------------------------------------------------

fn numbers(line: &str) -> Vec<u32> {
    line.split_whitespace()
        .filter_map(|t| t.parse().ok())
        .collect()
}

#[test]
fn picture_shows_both_rows() {
    // 21 + 26 = 47 seeds, every row distinguishable.
    let board = parse("1 2 3 4 5 6 7 8 9 0 0 2").unwrap();
    let picture = board.picture();
    let lines: Vec<&str> = picture.lines().collect();
    assert!(lines.len() >= 2, "{picture}");
    // The opponent on top, its pits in sowing order 6..=11 read right to left (the two rows
    // face each other): 2 0 0 9 8 7.
    assert_eq!(numbers(lines[0]), vec![2, 0, 0, 9, 8, 7], "{picture}");
    // The mover below, pits 0..=5 left to right.
    assert_eq!(numbers(lines[1]), vec![1, 2, 3, 4, 5, 6], "{picture}");
    // Each row's counts stand in columns under each other: pit 0 faces pit 11 and pit 5
    // faces pit 6. Check by column positions of the last characters of the numbers.
    let ends = |line: &str| -> Vec<usize> {
        let bytes = line.as_bytes();
        (0..bytes.len())
            .filter(|&i| bytes[i].is_ascii_digit() && bytes.get(i + 1).is_none_or(|c| *c == b' '))
            .collect()
    };
    assert_eq!(ends(lines[0]), ends(lines[1]), "{picture}");
}

#[test]
fn picture_of_two_digit_counts_keeps_the_columns() {
    // 10 + 12 + 11 + 15 = 48.
    let board = parse("10 0 0 0 0 12  11 0 0 0 0 15").unwrap();
    let picture = board.picture();
    let lines: Vec<&str> = picture.lines().collect();
    assert_eq!(numbers(lines[0]), vec![15, 0, 0, 0, 0, 11], "{picture}");
    assert_eq!(numbers(lines[1]), vec![10, 0, 0, 0, 0, 12], "{picture}");
    assert_eq!(lines[0].len(), lines[1].len(), "{picture}");
}

// ---------------------------------------------------------------------------------------
// Property: every valid board prints and parses back
// ---------------------------------------------------------------------------------------

/// The pit counts of a random board of up to 48 seeds.
fn any_pits() -> impl Strategy<Value = [u8; 12]> {
    common::any_board().prop_map(|b| *b.pits())
}

fn separator() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just(" "),
        Just(","),
        Just("/"),
        Just("|"),
        Just(", "),
        Just(" | "),
        Just("\t")
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn print_parse_round_trip(pits in any_pits()) {
        let board = Board::new(pits).unwrap();
        prop_assert_eq!(board.pits(), &pits);
        let text = board.to_string();
        let expected = pits.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(" ");
        prop_assert_eq!(&text, &expected);
        prop_assert_eq!(parse(&text).unwrap(), board);
    }

    #[test]
    fn any_separators_parse(pits in any_pits(), seps in proptest::collection::vec(separator(), 11)) {
        let mut text = String::new();
        for (i, p) in pits.iter().enumerate() {
            if i > 0 {
                text.push_str(seps[i - 1]);
            }
            text.push_str(&p.to_string());
        }
        prop_assert_eq!(*parse(&text).unwrap().pits(), pits);
    }

    #[test]
    fn too_many_seeds_is_always_refused(pits in proptest::array::uniform12(0u8..=48)) {
        let total: u32 = pits.iter().map(|&p| u32::from(p)).sum();
        let text = pits.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(" ");
        match parse(&text) {
            Ok(board) => {
                prop_assert!(total <= 48);
                prop_assert_eq!(board.pits(), &pits);
            }
            Err(err) => {
                prop_assert!(total > 48);
                prop_assert_eq!(err, BoardError::TooManySeeds { total });
            }
        }
    }
}
