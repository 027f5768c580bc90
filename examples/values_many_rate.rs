//! Boards a second of `Database::values_many` on a batch of positions drawn uniformly from
//! layers `0..=top`: the library's side of Python's `Database.values` (python/bench), without
//! the interpreter. The first call warms the page cache; the best of the timed calls after
//! it is printed.
//!
//! `cargo run --release --example values_many_rate -- DB awari 20 1000000 5`

use awari::{Database, Rules};
use std::time::Instant;

mod common;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [db, rules, top, count, repeat] = &args[..] else {
        return Err("usage: values_many_rate DB RULES TOP COUNT REPEAT".into());
    };
    let rules: Rules = rules.parse()?;
    let (top, count, repeat): (u32, usize, usize) = (top.parse()?, count.parse()?, repeat.parse()?);
    let db = Database::open(db, rules)?;
    let boards = common::uniform_boards(0, top, count);
    db.values_many(&boards)?;
    let mut best = f64::INFINITY;
    for _ in 0..repeat {
        let started = Instant::now();
        db.values_many(&boards)?;
        best = best.min(started.elapsed().as_secs_f64());
    }
    println!(
        "{count} boards of layers 0..={top}: best of {repeat} {best:.3} s, {:.2} M boards/s",
        count as f64 / best / 1e6
    );
    Ok(())
}
