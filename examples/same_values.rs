//! Do two databases of one rule set answer alike? Every position of layers `0..=whole`
//! (in batches), then `sample` positions drawn uniformly from layers `whole + 1 ..= top`,
//! each asked in a batch and one by one, in both. Made to check tables re-written with
//! another codec (don't-cares restore their values through captures) against the files
//! they came from.
//!
//! `cargo run --release --example same_values -- A B awari 16 24 1000000`

use awari::{index, Database, Rules};
use std::time::Instant;

mod common;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [a, b, rules, whole, top, sample] = &args[..] else {
        return Err("usage: same_values A B RULES WHOLE TOP SAMPLE".into());
    };
    let rules: Rules = rules.parse()?;
    let (whole, top, sample): (u32, u32, u64) = (whole.parse()?, top.parse()?, sample.parse()?);
    let (a, b) = (Database::open(a, rules)?, Database::open(b, rules)?);
    let started = Instant::now();
    let differ =
        common::sum_over_layers(whole, |boards| -> Result<u64, Box<dyn std::error::Error>> {
            Ok(count_differ(
                &a.values_many(boards)?,
                &b.values_many(boards)?,
            ))
        })?;
    let positions = index::size_up_to(whole);
    println!(
        "layers 0..={whole}: {positions} positions, every one, in batches: {differ} differ ({:.1} s)",
        started.elapsed().as_secs_f64()
    );
    let boards = common::uniform_boards(whole + 1, top, sample as usize);
    let started = Instant::now();
    let (va, vb) = (a.values_many(&boards)?, b.values_many(&boards)?);
    let batch_differ = count_differ(&va, &vb);
    let batch_s = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let mut one_differ = 0;
    for (board, &want) in boards.iter().zip(&va) {
        one_differ += u64::from(b.value(board)? != want);
    }
    println!(
        "layers {}..={top}: {sample} random positions: {batch_differ} differ in batches ({batch_s:.1} s, both), {one_differ} one by one in B ({:.1} s)",
        whole + 1,
        started.elapsed().as_secs_f64()
    );
    if differ + batch_differ + one_differ > 0 {
        return Err("the databases differ".into());
    }
    Ok(())
}

fn count_differ(a: &[i8], b: &[i8]) -> u64 {
    a.iter().zip(b).filter(|(x, y)| x != y).count() as u64
}
