//! What compression 5's coding (each byte as its rank in its context, the context being
//! the byte before it and whether that one repeats the byte before it, each block of ranks
//! one zstd frame at level 15; docs/format.md) would make of a table of any kind, without
//! don't-cares: the values, the distances, an own-row table's low or high file. A
//! measurement of sizes, to say where the codec pays; the store writes it for values alone.
//!
//! Prints bytes a position: the file as stored, its bytes in zstd at level 15 (the level
//! alone), the ranks in zstd at level 15, and the entropy of the model (the counts of the
//! whole layer, their cost not counted), all in blocks of 16,384 cut in four parts as the
//! store cuts them.
//!
//! `cargo run --release --example rank_study -- FILE RULES SEEDS KIND` with KIND one of
//! `values`, `distances`, `r2lo`, `r2hi` (FILE: a file of that kind written with zstd).

use awari::store::{LayerFile, TableKind};
use awari::{Repetition, Rules};
use rayon::prelude::*;
use std::path::Path;

const BLOCK: usize = 1 << 14;
const PARTS: usize = 4;
const LEVEL: i32 = 15;
/// Contexts: the byte before (256), plus 256 where it repeats the one before it, and the
/// start of a part.
const CONTEXTS: usize = 2 * 256 + 1;
const START: usize = 2 * 256;

fn next_context(context: usize, byte: u8) -> usize {
    let previous = (context < START).then_some(context % 256);
    usize::from(byte) + 256 * usize::from(previous == Some(usize::from(byte)))
}

/// The positions of part `k` of a block of `len`.
fn part(len: usize, k: usize) -> std::ops::Range<usize> {
    (len * k / PARTS)..(len * (k + 1) / PARTS)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path, rules, seeds, kind] = &args[..] else {
        return Err("usage: rank_study FILE RULES SEEDS values|distances|r2lo|r2hi".into());
    };
    let rules: Rules = rules.parse()?;
    let seeds: u32 = seeds.parse()?;
    let kind = match kind.as_str() {
        "values" => TableKind::Values,
        "distances" => TableKind::Distances,
        "r2lo" => TableKind::OwnRowLow(Repetition::First),
        "r2hi" => TableKind::OwnRowHigh(Repetition::First),
        other => return Err(format!("unknown kind {other}").into()),
    };
    let file = LayerFile::open_kind(Path::new(path), rules, seeds, kind)?;
    let bytes = file.read_all_bytes()?;
    let n = bytes.len() as f64;

    // The model: counts of each byte in each context, over every part of every block.
    let mut counts = vec![[0u64; 256]; CONTEXTS];
    for block in bytes.chunks(BLOCK) {
        for k in 0..PARTS {
            let mut context = START;
            for &b in &block[part(block.len(), k)] {
                counts[context][usize::from(b)] += 1;
                context = next_context(context, b);
            }
        }
    }
    let entropy: f64 = counts
        .iter()
        .map(|row| {
            let total: u64 = row.iter().sum();
            row.iter()
                .filter(|&&c| c > 0)
                .map(|&c| c as f64 * (total as f64 / c as f64).log2())
                .sum::<f64>()
        })
        .sum::<f64>()
        / 8.0;
    // Each context's bytes from the commonest, ties to the smaller.
    let rank_of: Vec<[u8; 256]> = counts
        .iter()
        .map(|row| {
            let mut order: Vec<usize> = (0..256).collect();
            order.sort_by_key(|&s| (std::cmp::Reverse(row[s]), s));
            let mut rank = [0u8; 256];
            for (r, &s) in order.iter().enumerate() {
                rank[s] = r as u8;
            }
            rank
        })
        .collect();

    let (plain, ranked): (usize, usize) = bytes
        .par_chunks(BLOCK)
        .map(|block| {
            let mut ranks = Vec::with_capacity(block.len());
            for k in 0..PARTS {
                let mut context = START;
                for &b in &block[part(block.len(), k)] {
                    ranks.push(rank_of[context][usize::from(b)]);
                    context = next_context(context, b);
                }
            }
            let size = |data: &[u8]| zstd::bulk::compress(data, LEVEL).expect("zstd").len();
            (size(block), size(&ranks))
        })
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    println!(
        "{path}: {} positions; bytes a position: file {:.4}, zstd {LEVEL} {:.4}, ranks in zstd {LEVEL} {:.4}, model entropy {:.4}",
        bytes.len(),
        file.bytes() as f64 / n,
        plain as f64 / n,
        ranked as f64 / n,
        entropy / n,
    );
    Ok(())
}
