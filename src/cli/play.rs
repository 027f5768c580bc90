//! `awari play`: a game against the computer in the terminal, from the values or under the
//! own-row rule (the best move proved with the game's history; a repetition ends the game
//! with each side keeping its own row). The kind of tables is chosen once, in [`run`]: it
//! gives the game its [`Engine`].

use super::args::TableArgs;
use super::input::{read_line, MAX_LINE};
use super::oracle::Oracle;
use super::output::{self, say, shown};
use super::own_row_text::{budget, interval, occurrence, print_answer, rows_kept};
use super::text::{check_think, parse_board};
use anyhow::{bail, Context, Result};
use awari::game::{Game, GameRecord, Side};
use awari::search::{self, Level, Rng};
use awari::{own_row_history, Board, BoundsDatabase, OwnRowAnswer, Repetition, Rules, Tables};
use std::io::Write;
use std::time::Duration;

/// What `awari play` needs to know.
struct PlayOptions {
    rules: Rules,
    level: Level,
    /// The side the computer plays, `None` for two people at one keyboard.
    computer: Option<Side>,
    start: Board,
    first: Side,
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

/// What answers the game: the values, or the own-row values with the game's history.
trait Engine {
    /// How the computer plays, for the first line.
    fn how(&self, level: Level) -> String;
    /// How the game ended, if it did.
    fn game_end(&self, game: &Game) -> Option<String>;
    /// Says the value of the position and of every move (the `h` key).
    fn print_values(&self, record: &GameRecord, game: &Game) -> Result<()>;
    /// The computer's move, said.
    fn computer_move(
        &self,
        opts: &PlayOptions,
        record: &GameRecord,
        game: &Game,
        rng: &mut Rng,
    ) -> Result<u8>;
}

/// The values, through the Oracle (a table lookup, or a search above the built layers).
struct Values {
    oracle: Oracle,
    think: Duration,
}

impl Engine for Values {
    fn how(&self, level: Level) -> String {
        format!("at level {} ({})", level, level.describe())
    }

    fn game_end(&self, game: &Game) -> Option<String> {
        game.end.map(|end| game.end_text(&end))
    }

    fn print_values(&self, record: &GameRecord, game: &Game) -> Result<()> {
        let a = self.oracle.analyse(record.rules, &game.board)?;
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

    fn computer_move(
        &self,
        opts: &PlayOptions,
        _record: &GameRecord,
        game: &Game,
        rng: &mut Rng,
    ) -> Result<u8> {
        let choice = search::choose_move(
            &self.oracle.db(opts.rules),
            &game.board,
            opts.level,
            self.think,
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
}

/// The own-row values of a repetition rule, each position asked with the game's history.
struct OwnRow {
    db: BoundsDatabase,
    repetition: Repetition,
    budget: u64,
}

impl OwnRow {
    /// The own-row answer for the current position of `record`, with its history.
    fn answer(&self, record: &GameRecord) -> Result<OwnRowAnswer> {
        let (board, history) =
            own_row_history(record.rules, self.repetition, &record.start, &record.moves)?;
        Ok(self
            .db
            .own_row(self.repetition)
            .answer(&board, &history, self.budget)?)
    }
}

impl Engine for OwnRow {
    fn how(&self, _level: Level) -> String {
        format!(
            "under the own-row rule, the {} repetition ending the game (the best move proved with the game's history)",
            self.repetition.name()
        )
    }

    /// By the rules, or by a repetition under the own-row rule (a position's `ends_at`-th
    /// occurrence since the last capture; positions before a capture have more seeds, so
    /// the occurrences since the start are those).
    fn game_end(&self, game: &Game) -> Option<String> {
        let by_rules = game
            .end
            .filter(|e| e.reason != awari::game::EndReason::Repetition);
        if by_rules.is_none() && game.occurrences() >= u32::from(self.repetition.ends_at()) {
            let (mover, opponent) = rows_kept(&game.board);
            let mut score = game.captured;
            score[game.to_move.index()] += mover;
            score[game.to_move.other().index()] += opponent;
            return Some(format!(
                "this position occurs for the {} time since the last capture: the game ends by repetition, each side keeps the seeds on its own row: south {}, north {}",
                occurrence(self.repetition),
                score[0],
                score[1]
            ));
        }
        game.end.map(|end| game.end_text(&end))
    }

    fn print_values(&self, record: &GameRecord, _game: &Game) -> Result<()> {
        print_answer(&self.answer(record)?, self.budget);
        Ok(())
    }

    /// The first best move (proved to keep the value, or of the largest proved low when
    /// the value is open), else the move of the largest proved low; said with what it is
    /// proved to give.
    fn computer_move(
        &self,
        _opts: &PlayOptions,
        record: &GameRecord,
        game: &Game,
        _rng: &mut Rng,
    ) -> Result<u8> {
        let a = self.answer(record)?;
        let m = a
            .best_moves()
            .first()
            .copied()
            .or_else(|| {
                a.moves
                    .iter()
                    .copied()
                    .max_by_key(|m| (m.low, -i16::from(m.pit)))
            })
            .context("the computer has no move")?;
        let cap = if m.captured > 0 {
            format!(", captures {}", m.captured)
        } else {
            String::new()
        };
        let proved = if a.value.exact() && m.keeps(a.value.low) {
            format!("proved: value {:+}", m.low)
        } else {
            format!(
                "value {}, not proved exact within --search-budget {}",
                interval(m.low, m.high),
                self.budget
            )
        };
        say!("{} plays {}{cap} ({proved})", game.to_move, m.pit + 1);
        Ok(m.pit)
    }
}

/// Opens the engine of a game, once its options are checked.
type Opener<'a> = Box<dyn FnOnce() -> Result<Box<dyn Engine>> + 'a>;

/// Runs `play`.
pub fn run(
    tables: &TableArgs,
    level: Option<Level>,
    computer: Option<Side>,
    start: Option<&str>,
    first: Side,
    think_ms: u64,
    seed: Option<u64>,
) -> Result<bool> {
    let think = check_think(think_ms)?;
    let db = &tables.db;
    let (level, open): (Level, Opener) = match tables.kind() {
        Tables::Values => (
            level.unwrap_or(Level::Strong),
            Box::new(move || {
                let oracle = Oracle::open(&db.db, think)?;
                Ok(Box::new(Values { oracle, think }) as Box<dyn Engine>)
            }),
        ),
        Tables::Bounds => bail!("play plays by values: the bounds give none with a game's history; use --cycles own-row-first or own-row-third for the own-row rule"),
        Tables::OwnRow(repetition) => {
            if let Some(l) = level.filter(|&l| l != Level::Perfect) {
                bail!("under the own-row rule the computer plays the best move proved, perfect as far as proved: --level {l} is for the values");
            }
            let budget = budget(tables)?;
            (
                Level::Perfect,
                Box::new(move || {
                    let db = BoundsDatabase::open(&db.db, db.rules)?;
                    Ok(Box::new(OwnRow {
                        db,
                        repetition,
                        budget,
                    }) as Box<dyn Engine>)
                }),
            )
        }
    };
    let seed = seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    });
    let opts = PlayOptions {
        rules: db.rules,
        level,
        computer,
        start: match start {
            Some(text) => parse_board(text)?,
            None => Board::opening(4)?,
        },
        first,
        seed,
    };
    play(&opts, open()?.as_ref())
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
fn play(opts: &PlayOptions, engine: &dyn Engine) -> Result<bool> {
    let mut record = GameRecord::new(opts.rules, opts.start, opts.first);
    let mut rng = Rng::new(opts.seed);
    let mut stdin = std::io::stdin().lock();
    let how = engine.how(opts.level);
    say!(
        "awari play: rules {}, computer {} {how}. Keys: 1-6 play a pit from your left, u undo, h values, q quit.",
        opts.rules,
        opts.computer.map_or("nobody", Side::name),
    );
    loop {
        let game = record.replay()?;
        say!("\n{}", picture(&game));
        if let Some(end) = engine.game_end(&game) {
            say!("game over: {end}");
            break;
        }
        if Some(game.to_move) == opts.computer {
            let pit = engine.computer_move(opts, &record, &game, &mut rng)?;
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
            "h" | "?" => engine.print_values(&record, &game)?,
            "u" | "undo" => undo(&mut record, opts.computer)?,
            _ => play_key(&mut record, &game, &key),
        }
    }
    say!("\nthe game so far (awari analyze reads this):\n{record}");
    Ok(true)
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
