//! `awari play`: a game against the computer in the terminal.

use super::args::DbArgs;
use super::input::{read_line, MAX_LINE};
use super::oracle::Oracle;
use super::output::{self, say, shown};
use super::text::{check_think, parse_board};
use anyhow::{Context, Result};
use awari::game::{Game, GameRecord, Side};
use awari::search::{self, Level, Rng};
use awari::{Board, Rules};
use std::io::Write;
use std::time::Duration;

/// What `awari play` needs to know.
struct PlayOptions {
    db: std::path::PathBuf,
    rules: Rules,
    level: Level,
    /// The side the computer plays, `None` for two people at one keyboard.
    computer: Option<Side>,
    start: Board,
    first: Side,
    think: Duration,
    seed: u64,
}

/// The board as the players see it: North's row on top (its pit 1 on the right), South's
/// at the bottom, the stores at the ends (North's on the left, South's on the right).
fn picture(game: &Game) -> String {
    let pits = game.absolute();
    let top: String = (6..12).rev().map(|p| format!("{:>3}", pits[p])).collect();
    let bottom: String = (0..6).map(|p| format!("{:>3}", pits[p])).collect();
    let names_top: String = (1..=6).rev().map(|p| format!("{p:>3}")).collect();
    let names_bottom: String = (1..=6).map(|p| format!("{p:>3}")).collect();
    let [s, n] = game.captured;
    format!(
        "         {names_top}\n  north  {top}\n  [{n:>2}]                      [{s:>2}]\n  south  {bottom}\n         {names_bottom}"
    )
}

fn print_values(oracle: &Oracle, rules: Rules, game: &Game) -> Result<()> {
    let a = oracle.analyse(rules, &game.board)?;
    let how = if a.exact {
        "exact".to_string()
    } else {
        format!("searched {} plies", a.depth)
    };
    let moves: Vec<String> = a
        .moves
        .iter()
        .map(|m| format!("{}:{:+}", m.pit + 1, m.value))
        .collect();
    say!(
        "  value {:+} for {} ({how}); moves {}",
        a.value,
        game.to_move,
        moves.join("  ")
    );
    Ok(())
}

/// Runs `play`.
pub fn run(
    db: &DbArgs,
    level: Level,
    computer: Option<Side>,
    start: Option<&str>,
    first: Side,
    think_ms: u64,
    seed: Option<u64>,
) -> Result<bool> {
    let think = check_think(think_ms)?;
    let seed = seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    });
    play(PlayOptions {
        rules: db.rules,
        db: db.db.clone(),
        level,
        computer,
        start: match start {
            Some(text) => parse_board(text)?,
            None => Board::opening(4)?,
        },
        first,
        think,
        seed,
    })
}

/// What the person typed: a key, or the end of the input.
enum Key {
    Text(String),
    /// Not text, or too long: said, and the game goes on.
    Unreadable(String),
    End,
}

/// Plays a game: the person types a pit 1..6 (from their own left) and Enter; `u` undoes
/// the last move (and the computer's answer), `h` shows the value of every move, `q` quits.
/// The game record is printed at the end.
fn play(opts: PlayOptions) -> Result<bool> {
    let oracle = Oracle::open(&opts.db, opts.think)?;
    let mut record = GameRecord::new(opts.rules, opts.start, opts.first);
    let mut rng = Rng::new(opts.seed);
    let mut stdin = std::io::stdin().lock();
    say!(
        "awari play: rules {}, computer {} at level {} ({}). Keys: 1-6 play a pit from your left, u undo, h values, q quit.",
        opts.rules,
        opts.computer.map_or("nobody", Side::name),
        opts.level,
        opts.level.describe()
    );
    loop {
        let game = record.replay()?;
        say!("\n{}", picture(&game));
        if let Some(end) = game.end {
            say!("game over: {}", game.end_text(&end));
            break;
        }
        if Some(game.to_move) == opts.computer {
            let pit = computer_move(&oracle, &opts, &game, &mut rng)?;
            record.moves.push(pit);
            continue;
        }
        let key = match read_key(&mut stdin, &game)? {
            Key::End => {
                say!();
                break;
            }
            Key::Unreadable(why) => {
                say!("{why}: type a pit 1..6, u, h or q");
                continue;
            }
            Key::Text(key) => key,
        };
        match key.as_str() {
            "" => continue,
            "q" | "quit" => break,
            "h" | "?" => print_values(&oracle, opts.rules, &game)?,
            "u" | "undo" => undo(&mut record, opts.computer)?,
            _ => play_key(&mut record, &game, &key),
        }
    }
    say!("\nthe game so far (awari analyze reads this):\n{record}");
    Ok(true)
}

/// The computer's move, said.
fn computer_move(oracle: &Oracle, opts: &PlayOptions, game: &Game, rng: &mut Rng) -> Result<u8> {
    let choice = search::choose_move(
        &oracle.db(opts.rules),
        &game.board,
        opts.level,
        opts.think,
        rng,
    )?
    .context("the computer has no move")?;
    let cap = if choice.play.captured > 0 {
        format!(", captures {}", choice.play.captured)
    } else {
        String::new()
    };
    say!("{} plays {}{cap}", game.to_move, choice.play.pit + 1);
    Ok(choice.play.pit)
}

/// Prompts for and reads the person's key.
fn read_key(stdin: &mut impl std::io::BufRead, game: &Game) -> Result<Key> {
    let prompt = format!("{} to move (1-6, u, h, q): ", game.to_move);
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(prompt.as_bytes()).and_then(|()| out.flush()) {
        output::failed(e);
    }
    drop(out);
    let Some(line) = read_line(stdin, MAX_LINE).context("reading stdin")? else {
        return Ok(Key::End);
    };
    // A line that is not text, or too long, is a key like any other unknown one: the
    // game goes on.
    Ok(match line.text() {
        Ok(text) => Key::Text(text.trim().to_string()),
        Err(why) => Key::Unreadable(why),
    })
}

/// Back to the last position where a person was to move.
fn undo(record: &mut GameRecord, computer: Option<Side>) -> Result<()> {
    while record.moves.pop().is_some() {
        let back = record.replay()?;
        if Some(back.to_move) != computer {
            return Ok(());
        }
    }
    say!("nothing to undo");
    Ok(())
}

/// A key that should be a pit: played if it is one and legal, else said why not.
fn play_key(record: &mut GameRecord, game: &Game, key: &str) {
    let pit = match key.parse::<u8>() {
        Ok(p @ 1..=6) => p - 1,
        _ => {
            say!("'{}': type a pit 1..6, u, h or q", shown(key));
            return;
        }
    };
    let mut next = game.clone();
    match next.play(pit) {
        Ok(()) => record.moves.push(pit),
        Err(why) => say!("pit {}: {why}", pit + 1),
    }
}
