//! `awari play` (a game against the computer in the terminal) and `awari analyze` (every
//! move of a game judged against the tables).

use super::output::{self, say, shown};
use super::serve::{analysis_json, Oracle};
use anyhow::{anyhow, bail, Context, Result};
use awari::game::{Game, GameRecord, Side};
use awari::search::{self, Level, Rng};
use awari::{Board, Rules};
use serde_json::json;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

/// What `awari play` needs to know.
pub struct PlayOptions {
    pub db: std::path::PathBuf,
    pub rules: Rules,
    pub level: Level,
    /// The side the computer plays, `None` for two people at one keyboard.
    pub computer: Option<Side>,
    pub start: Board,
    pub first: Side,
    pub think: Duration,
    pub seed: u64,
}

/// A side by name; `nobody` (also `none`) only where `nobody` is a choice, and the error
/// offers only what the flag accepts.
fn side_arg(flag: &str, text: &str, nobody: bool) -> Result<Option<Side>> {
    match text.trim().to_ascii_lowercase().as_str() {
        "south" => Ok(Some(Side::South)),
        "north" => Ok(Some(Side::North)),
        "none" | "nobody" if nobody => Ok(None),
        _ if nobody => bail!(
            "bad {flag} '{}': expected south, north or none",
            shown(text)
        ),
        _ => bail!("bad {flag} '{}': expected south or north", shown(text)),
    }
}

/// Parses `--computer`.
pub fn parse_computer(text: &str) -> Result<Option<Side>> {
    side_arg("--computer", text, true)
}

/// Parses `--first`.
pub fn parse_first(text: &str) -> Result<Side> {
    side_arg("--first", text, false)?.ok_or_else(|| anyhow!("--first must be south or north"))
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

/// Plays a game: the person types a pit 1..6 (from their own left) and Enter; `u` undoes
/// the last move (and the computer's answer), `h` shows the value of every move, `q` quits.
/// The game record is printed at the end.
pub fn cmd_play(opts: PlayOptions) -> Result<bool> {
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
            let choice = search::choose_move(
                oracle.db(opts.rules),
                &game.board,
                opts.level,
                opts.think,
                &mut rng,
            )?
            .context("the computer has no move")?;
            let cap = if choice.play.captured > 0 {
                format!(", captures {}", choice.play.captured)
            } else {
                String::new()
            };
            say!("{} plays {}{cap}", game.to_move, choice.play.pit + 1);
            record.moves.push(choice.play.pit);
            continue;
        }
        let prompt = format!("{} to move (1-6, u, h, q): ", game.to_move);
        let mut out = std::io::stdout().lock();
        if let Err(e) = out.write_all(prompt.as_bytes()).and_then(|()| out.flush()) {
            output::failed(e);
        }
        drop(out);
        let Some(line) =
            super::input::read_line(&mut stdin, super::input::MAX_LINE).context("reading stdin")?
        else {
            say!();
            break;
        };
        // A line that is not text, or too long, is a key like any other unknown one: the
        // game goes on.
        let key = match line.text() {
            Ok(text) => text.trim(),
            Err(why) => {
                say!("{why}: type a pit 1..6, u, h or q");
                continue;
            }
        };
        match key {
            "" => continue,
            "q" | "quit" => break,
            "h" | "?" => print_values(&oracle, opts.rules, &game)?,
            "u" | "undo" => {
                // Back to the last position where a person was to move.
                let mut undone = false;
                while record.moves.pop().is_some() {
                    let back = record.replay()?;
                    if Some(back.to_move) != opts.computer {
                        undone = true;
                        break;
                    }
                }
                if !undone {
                    say!("nothing to undo");
                }
            }
            _ => {
                let pit = match key.parse::<u8>() {
                    Ok(p @ 1..=6) => p - 1,
                    _ => {
                        say!("'{}': type a pit 1..6, u, h or q", shown(key));
                        continue;
                    }
                };
                let mut next = game.clone();
                match next.play(pit) {
                    Ok(()) => record.moves.push(pit),
                    Err(why) => say!("pit {}: {why}", pit + 1),
                }
            }
        }
    }
    say!("\nthe game so far (awari analyze reads this):\n{record}");
    Ok(true)
}

/// Replays a game and judges every move: the value before it, the value of the move played,
/// the best moves and the seeds the move gave away.
pub fn cmd_analyze(
    db: &Path,
    rules: Rules,
    file: Option<&Path>,
    think: Duration,
    json_out: bool,
) -> Result<bool> {
    let text = match file {
        Some(p) if p != Path::new("-") => {
            let name = shown(&p.display().to_string());
            let f = std::fs::File::open(p).with_context(|| format!("reading {name}"))?;
            super::input::read_game(f, &name)?
        }
        _ => super::input::read_game(std::io::stdin().lock(), "stdin")?,
    };
    let record = GameRecord::parse(&text, rules)?;
    // Checks every move (and names a bad one) before any analysis.
    let end_game = record.replay()?;
    let oracle = Oracle::open(db, think)?;
    let mut game = GameRecord {
        moves: Vec::new(),
        ..record.clone()
    }
    .replay()?;
    let mut rows = Vec::new();
    let mut lost = [0i64; 2];
    if !json_out {
        say!(
            "rules {}, start {} ({} to move), {} moves",
            record.rules,
            record.start,
            record.first,
            record.moves.len()
        );
        say!(
            "{:>4}  {:<5}  {:>3}  {:>6}  {:>6}  {:<9}  {:>4}  how",
            "move",
            "side",
            "pit",
            "before",
            "played",
            "best",
            "lost"
        );
    }
    for (i, &pit) in record.moves.iter().enumerate() {
        let a = oracle.analyse(record.rules, &game.board)?;
        let played = a
            .moves
            .iter()
            .find(|m| m.pit == pit)
            .copied()
            .expect("replay checked the move");
        let loss = i64::from(a.value) - i64::from(played.value);
        let side = game.to_move;
        lost[side.index()] += loss;
        let how = if a.exact {
            "exact".to_string()
        } else {
            format!("depth {}", a.depth)
        };
        let best: Vec<String> = a.best.iter().map(|p| (p + 1).to_string()).collect();
        if json_out {
            rows.push(json!({
                "move": i + 1,
                "side": side.name(),
                "pit": pit,
                "captured": played.captured,
                "value_before": a.value,
                "value_played": played.value,
                "best": a.best,
                "lost": loss,
                "exact": a.exact,
                "depth": a.depth,
                "position": analysis_json(record.rules, &a),
            }));
        } else {
            say!(
                "{:>4}  {:<5}  {:>3}  {:>+6}  {:>+6}  {:<9}  {:>4}  {how}",
                i + 1,
                side.name(),
                pit + 1,
                a.value,
                played.value,
                best.join(","),
                loss
            );
        }
        game.play(pit).map_err(|e| anyhow!("move {}: {e}", i + 1))?;
    }
    let end = end_game.end.map(|e| end_game.end_text(&e));
    if json_out {
        say!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "rules": record.rules.name(),
                "start": record.start.to_string(),
                "first": record.first.name(),
                "moves": rows,
                "lost": { "south": lost[0], "north": lost[1] },
                "captured": end_game.captured,
                "end": end,
            }))?
        );
    } else {
        say!(
            "seeds given away: south {}, north {}; captured so far: south {}, north {}",
            lost[0],
            lost[1],
            end_game.captured[0],
            end_game.captured[1]
        );
        match end {
            Some(text) => say!("game over: {text}"),
            None => say!("the game goes on: {} to move", end_game.to_move),
        }
    }
    Ok(true)
}
