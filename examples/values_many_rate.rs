//! Boards a second of `Database::values_many` on a batch of positions drawn uniformly from
//! layers `0..=top`: the library's side of Python's `Database.values` (python/bench), without
//! the interpreter. The first call warms the page cache; the best of the timed calls after
//! it is printed.
//!
//! `cargo run --release --example values_many_rate -- DB awari 20 1000000 5`

use awari::{index, Board, Database, Rules};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [db, rules, top, count, repeat] = &args[..] else {
        return Err("usage: values_many_rate DB RULES TOP COUNT REPEAT".into());
    };
    let rules: Rules = rules.parse()?;
    let (top, count, repeat): (u32, usize, usize) = (top.parse()?, count.parse()?, repeat.parse()?);
    let db = Database::open(db, rules)?;
    let span = index::size_up_to(top);
    // SplitMix64 from a fixed seed: the same boards every run.
    let mut state = 0x5EED_5A4E_u64;
    let boards: Vec<Board> = (0..count)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            let mut at = (z ^ (z >> 31)) % span;
            let mut n = 0;
            while at >= index::size(n) {
                at -= index::size(n);
                n += 1;
            }
            index::unrank(n, at)
        })
        .collect();
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
