//! The figures behind the block size and compression level of the layer files: for one
//! built layer, bytes per position and the time to decompress one block (the cost of a
//! cold probe, besides reading the block's pages), for several block sizes and zstd levels,
//! and for two value encodings (the raw `i8`, and each value XOR the previous one).
//!
//! `cargo run --release --example block_size -- data/db awari 20`

use awari::store::{layer_path, LayerFile};
use awari::Rules;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let db = args.get(1).map(String::as_str).unwrap_or("data/db");
    let rules: Rules = args.get(2).map(String::as_str).unwrap_or("awari").parse()?;
    let n: u32 = args.get(3).map(String::as_str).unwrap_or("20").parse()?;
    let file = LayerFile::open(&layer_path(db.as_ref(), rules, n), rules, n)?;
    let values: Vec<u8> = file.read_all()?.into_iter().map(|v| v as u8).collect();
    let xored: Vec<u8> = std::iter::once(values[0])
        .chain(values.windows(2).map(|w| w[0] ^ w[1]))
        .collect();
    println!("layer {n} of {rules}: {} positions", values.len());
    println!(
        "{:>8} {:>6} {:>6} {:>8} {:>12} {:>12}",
        "block", "level", "enc", "B/pos", "compress s", "µs/block"
    );
    for block in [4096usize, 16384, 32768, 65536, 131072] {
        for level in [3, 9, 19] {
            for (name, data) in [("i8", &values), ("xor", &xored)] {
                if level == 19 && block != 32768 {
                    continue; // level 19 is far too slow to build with; one row shows why
                }
                let t = Instant::now();
                let blocks: Vec<Vec<u8>> = data
                    .chunks(block)
                    .map(|c| zstd::bulk::compress(c, level).expect("compress"))
                    .collect();
                let secs = t.elapsed().as_secs_f64();
                let bytes: usize = blocks.iter().map(Vec::len).sum::<usize>() + 16 * blocks.len();
                // Decompress a spread of blocks to time one cold probe's decompression.
                let picks: Vec<&Vec<u8>> =
                    blocks.iter().step_by((blocks.len() / 200).max(1)).collect();
                // One decompression context reused, as the reader does.
                let mut dctx = zstd::bulk::Decompressor::new().expect("zstd context");
                let mut out = vec![0u8; block];
                let t = Instant::now();
                for b in &picks {
                    let len = dctx.decompress_to_buffer(b, &mut out).expect("decompress");
                    std::hint::black_box(&out[..len]);
                }
                let per_block = t.elapsed().as_secs_f64() * 1e6 / picks.len() as f64;
                println!(
                    "{block:>8} {level:>6} {name:>6} {:>8.4} {secs:>12.2} {per_block:>12.1}",
                    bytes as f64 / values.len() as f64
                );
            }
        }
    }
    Ok(())
}
