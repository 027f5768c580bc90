//! Do two databases' own-row tables answer alike, and how fast? Every position of layers
//! `0..=whole` (in batches), then `sample` positions drawn uniformly from layers
//! `whole + 1 ..= top`, asked in one batch and one by one (a batch of one each), in both:
//! the intervals with an empty history. Made to check own-row pairs re-written with another
//! codec against the files they came from, and to time them back to back.
//!
//! `cargo run --release --example same_intervals -- A B abapa first 20 30 1000000`

use awari::{index, BoundsDatabase, Repetition, Rules};
use std::time::Instant;

mod common;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [a, b, rules, repetition, whole, top, sample] = &args[..] else {
        return Err("usage: same_intervals A B RULES first|third WHOLE TOP SAMPLE".into());
    };
    let rules: Rules = rules.parse()?;
    let repetition = match repetition.as_str() {
        "first" => Repetition::First,
        "third" => Repetition::Third,
        other => return Err(format!("'{other}' is not first or third").into()),
    };
    let (whole, top, sample): (u32, u32, usize) = (whole.parse()?, top.parse()?, sample.parse()?);
    let (a, b) = (
        BoundsDatabase::open(a, rules)?,
        BoundsDatabase::open(b, rules)?,
    );
    let (a, b) = (a.own_row(repetition), b.own_row(repetition));
    let started = Instant::now();
    let differ =
        common::sum_over_layers(whole, |boards| -> Result<u64, Box<dyn std::error::Error>> {
            Ok(count_differ(&a.intervals(boards)?, &b.intervals(boards)?))
        })?;
    println!(
        "layers 0..={whole}: {} positions, every one, in batches: {differ} differ ({:.1} s, both)",
        index::size_up_to(whole),
        started.elapsed().as_secs_f64()
    );
    let boards = common::uniform_boards(whole + 1, top, sample);
    let timed = |tables: &awari::OwnRowTables<'_>| -> Result<_, Box<dyn std::error::Error>> {
        let started = Instant::now();
        let batch = tables.intervals(&boards)?;
        let batch_s = started.elapsed().as_secs_f64();
        let started = Instant::now();
        let mut one = Vec::with_capacity(boards.len());
        for board in &boards {
            one.push(tables.intervals(std::slice::from_ref(board))?[0]);
        }
        Ok((batch, batch_s, one, started.elapsed().as_secs_f64()))
    };
    let (va, batch_a, oa, one_a) = timed(&a)?;
    let (vb, batch_b, ob, one_b) = timed(&b)?;
    let sample_differ = count_differ(&va, &vb) + count_differ(&oa, &ob) + count_differ(&va, &oa);
    let rate = |s: f64| sample as f64 / s / 1e6;
    println!(
        "layers {}..={top}: {sample} random positions: {sample_differ} differ; \
         a batch: A {batch_a:.2} s ({:.2} M/s), B {batch_b:.2} s ({:.2} M/s); \
         one by one: A {:.1} µs, B {:.1} µs each",
        whole + 1,
        rate(batch_a),
        rate(batch_b),
        one_a * 1e6 / sample as f64,
        one_b * 1e6 / sample as f64,
    );
    if differ + sample_differ > 0 {
        return Err("the databases differ".into());
    }
    Ok(())
}

fn count_differ(a: &[(i8, i8)], b: &[(i8, i8)]) -> u64 {
    a.iter().zip(b).filter(|(x, y)| x != y).count() as u64
}
