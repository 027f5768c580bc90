//! What a values layer would cost under other codings: a measurement of sizes, not of time.
//!
//! For each layer it reads the stored values (and those of every lower layer a capture
//! reaches), and prints, in bytes a position:
//!
//! * `file`: the layer's file as stored, and `zstd9`: the plain values compressed again as
//!   the writer does (level 9, blocks of 16,384), to check that the study sees what the store
//!   writes;
//! * the *don't-cares*: positions whose value a capture among their moves already gives
//!   (`capture`: `value = max over captures of (captured − child's value)`). Such a position
//!   may store any value at most its best capture's, and the probe takes the better of the
//!   two. (`over`, the ends of the game, which the rules value, is counted but kept: few);
//! * `dc zstd9`, `dc zstd19`: the layer with each don't-care replaced by the allowed value
//!   nearest the position before it in index order (a run goes on where it can), under the
//!   writer's zstd;
//! * `H(..)`: the size under a static context model (counts of the whole layer, their cost
//!   not included; an entropy coder reaches it within a fraction of a percent), of the plain
//!   values and of the don't-care stream: order 0, given the previous value, the previous two,
//!   and the previous value with the mover's seeds.
//!
//! Then the don't-care stream coded for real (a static model a context, an ANS coder a
//! block, every block decoded back and compared), and what a probe of don't-care tables
//! costs: a sample of the last layer's positions restored from every layer stored with its
//! don't-cares, each checked against its true value, with the lookups it took.
//!
//! `cargo run --release --example codec_study -- DIR awari 20 24`, over a folder where
//! `awari build --max-seeds 24 --db DIR` has run: the layers 20..=24 of the awari rules (a
//! fifth argument `coded` leaves out the first table).

use awari::index::{rank, size, unrank, walk};
use awari::store::{layer_path, LayerFile};
use awari::{Rules, Turn};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

const BLOCK: u64 = 1 << 14;
/// Values −48..=48 and one "none" for the first position of a block.
const SYMBOLS: usize = 98;
const NONE: usize = 97;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let db = PathBuf::from(args.get(1).map(String::as_str).unwrap_or("data/db"));
    let rules: Rules = args.get(2).map(String::as_str).unwrap_or("awari").parse()?;
    let from: u32 = args.get(3).map(String::as_str).unwrap_or("16").parse()?;
    let to: u32 = args.get(4).map(String::as_str).unwrap_or("20").parse()?;
    let coded_only = args.get(5).is_some_and(|a| a == "coded");
    let values: Vec<Vec<i8>> = (0..=to).map(|m| read_layer(&db, rules, m)).collect();
    if !coded_only {
        sizes_table(&db, rules, from, to, &values);
    }
    coded_table(rules, from, to, &values);
    resolve_table(rules, to, &values);
    Ok(())
}

/// The first table: the file, zstd with and without don't-cares, the context models'
/// entropies.
fn sizes_table(db: &Path, rules: Rules, from: u32, to: u32, values: &[Vec<i8>]) {
    println!(
        "| layer | positions | file | zstd9 | over | capture | dc zstd9 | dc zstd19 | H0 | H(prev) | H(prev2) | H(prev,seeds) | dc H0 | dc H(prev) | dc H(prev2) | dc H(prev,seeds) |"
    );
    println!("|{}", "---:|".repeat(16));
    let mut totals = [0f64; 14];
    let mut positions = 0u64;
    for n in from..=to {
        let file = layer_path(db, rules, n);
        let file_bytes = std::fs::metadata(&file).expect("layer file").len();
        let study = study_layer(rules, n, values);
        let count = size(n) as f64;
        let per = |bits: f64| bits / 8.0 / count;
        let row = [
            file_bytes as f64 / count,
            study.zstd9 as f64 / count,
            study.over as f64 / count,
            study.capture as f64 / count,
            study.dc_zstd9 as f64 / count,
            study.dc_zstd19 as f64 / count,
            per(study.plain.order0()),
            per(study.plain.given(Model::Prev)),
            per(study.plain.given(Model::Prev2)),
            per(study.plain.given(Model::PrevSeeds)),
            per(study.dc.order0()),
            per(study.dc.given(Model::Prev)),
            per(study.dc.given(Model::Prev2)),
        ];
        let last = per(study.dc.given(Model::PrevSeeds));
        print!("| {n} | {} ", size(n));
        for x in row {
            print!("| {x:.3} ");
        }
        println!("| {last:.3} |");
        for (t, x) in totals.iter_mut().zip(row) {
            *t += x * count;
        }
        totals[13] += last * count;
        positions += size(n);
    }
    print!("| {from}..={to} | {positions} ");
    for t in totals {
        print!("| {:.3} ", t / positions as f64);
    }
    println!("|");
}

/// The second table: the don't-care stream through a context model and an ANS coder.
fn coded_table(rules: Rules, from: u32, to: u32, values: &[Vec<i8>]) {
    println!();
    println!(
        "| layer | context | blocks, B/pos | model, bytes | decode, ns/pos | a block of 4,096, µs |"
    );
    println!("|---:|---|---:|---:|---:|---:|");
    for n in from..=to {
        let stored = dc_stream(rules, n, values);
        for (name, context) in [("prev", Context::Prev), ("prev, run", Context::PrevRun)] {
            let c = coded(n, &stored, context);
            println!(
                "| {n} | {name} | {:.3} | {} | {:.1} | {:.0} |",
                c.bytes as f64 / size(n) as f64,
                c.model_bytes,
                c.decode_ns,
                c.decode_ns * 4096.0 / 1000.0
            );
        }
    }
}

fn read_layer(db: &Path, rules: Rules, n: u32) -> Vec<i8> {
    let file = LayerFile::open(&layer_path(db, rules, n), rules, n).expect("open a layer");
    file.read_all().expect("read a layer")
}

#[derive(Clone, Copy)]
enum Model {
    Prev,
    Prev2,
    PrevSeeds,
}

/// Counts of (context, symbol) under each model.
struct Counts {
    order0: Vec<u64>,
    prev: Vec<u64>,
    prev2: Vec<u64>,
    prev_seeds: Vec<u64>,
}

impl Counts {
    fn new() -> Counts {
        Counts {
            order0: vec![0; SYMBOLS],
            prev: vec![0; SYMBOLS * SYMBOLS],
            prev2: vec![0; SYMBOLS * SYMBOLS * SYMBOLS],
            prev_seeds: vec![0; SYMBOLS * 49 * SYMBOLS],
        }
    }

    fn add(&mut self, prev2: usize, prev: usize, seeds: usize, symbol: usize) {
        self.order0[symbol] += 1;
        self.prev[prev * SYMBOLS + symbol] += 1;
        self.prev2[(prev2 * SYMBOLS + prev) * SYMBOLS + symbol] += 1;
        self.prev_seeds[(prev * 49 + seeds) * SYMBOLS + symbol] += 1;
    }

    fn merge(mut self, other: Counts) -> Counts {
        for (a, b) in [
            (&mut self.order0, &other.order0),
            (&mut self.prev, &other.prev),
            (&mut self.prev2, &other.prev2),
            (&mut self.prev_seeds, &other.prev_seeds),
        ] {
            a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
        }
        self
    }

    fn order0(&self) -> f64 {
        code_length(&self.order0)
    }

    fn given(&self, model: Model) -> f64 {
        let table = match model {
            Model::Prev => &self.prev,
            Model::Prev2 => &self.prev2,
            Model::PrevSeeds => &self.prev_seeds,
        };
        table.chunks(SYMBOLS).map(code_length).sum()
    }
}

/// Bits to code the symbols of one context by their own frequencies.
fn code_length(counts: &[u64]) -> f64 {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return 0.0;
    }
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| c as f64 * (total as f64 / c as f64).log2())
        .sum()
}

struct Study {
    zstd9: u64,
    dc_zstd9: u64,
    dc_zstd19: u64,
    over: u64,
    capture: u64,
    plain: Counts,
    dc: Counts,
}

/// What a position lets the store keep.
enum Freedom {
    /// Its value, exactly.
    Fixed,
    /// The end of the game, which the rules value: it could store anything, but is kept
    /// as it is (there are few, and a kept value is never above the true one, which the
    /// probe's cut-off below relies on).
    Over,
    /// Anything up to its best capture's value, which is its value.
    AtMost(i8),
}

fn freedom(rules: Rules, n: u32, board: &awari::Board, value: i8, lower: &[Vec<i8>]) -> Freedom {
    match rules.turn(board) {
        Turn::GameOver { .. } => Freedom::Over,
        Turn::Moves(moves) => {
            let best = moves
                .iter()
                .filter(|m| m.captured > 0)
                .map(|m| {
                    let child = &lower[(n - u32::from(m.captured)) as usize];
                    m.captured as i8 - child[rank(&m.child) as usize]
                })
                .max();
            match best {
                Some(c) if c == value => Freedom::AtMost(c),
                _ => Freedom::Fixed,
            }
        }
    }
}

fn study_layer(rules: Rules, n: u32, values: &[Vec<i8>]) -> Study {
    let layer = &values[n as usize];
    let blocks = size(n).div_ceil(BLOCK);
    let empty = || Study {
        zstd9: 0,
        dc_zstd9: 0,
        dc_zstd19: 0,
        over: 0,
        capture: 0,
        plain: Counts::new(),
        dc: Counts::new(),
    };
    (0..blocks as usize)
        .into_par_iter()
        // Few accumulators: each holds about 23 MB of counts.
        .with_min_len((blocks / 16).max(1) as usize)
        .fold(empty, |mut acc, b| {
            let start = b as u64 * BLOCK;
            let end = (start + BLOCK).min(size(n));
            let plain = &layer[start as usize..end as usize];
            let mut stored = vec![0i8; plain.len()];
            let (over, capture) = dc_block(rules, n, start, plain, values, &mut stored);
            acc.over += over;
            acc.capture += capture;
            let seeds: Vec<usize> = walk(n, start, end)
                .map(|(_, b)| b.mover_seeds() as usize)
                .collect();
            count(&mut acc.plain, plain, &seeds);
            count(&mut acc.dc, &stored, &seeds);
            acc.zstd9 += zstd_len(plain, 9);
            acc.dc_zstd9 += zstd_len(&stored, 9);
            acc.dc_zstd19 += zstd_len(&stored, 19);
            acc
        })
        .reduce(empty, |a, b| Study {
            zstd9: a.zstd9 + b.zstd9,
            dc_zstd9: a.dc_zstd9 + b.dc_zstd9,
            dc_zstd19: a.dc_zstd19 + b.dc_zstd19,
            over: a.over + b.over,
            capture: a.capture + b.capture,
            plain: a.plain.merge(b.plain),
            dc: a.dc.merge(b.dc),
        })
}

/// Fills `stored` with the block's values, each don't-care replaced by the allowed value
/// nearest the one stored before it. Returns how many were the end of the game and how many
/// a capture's.
fn dc_block(
    rules: Rules,
    n: u32,
    start: u64,
    plain: &[i8],
    values: &[Vec<i8>],
    stored: &mut [i8],
) -> (u64, u64) {
    let (mut over, mut capture) = (0, 0);
    let end = start + plain.len() as u64;
    for (i, ((_, board), &v)) in walk(n, start, end).zip(plain).enumerate() {
        let prev = i.checked_sub(1).map(|j| stored[j]);
        stored[i] = match freedom(rules, n, &board, v, values) {
            Freedom::Fixed => v,
            Freedom::Over => {
                over += 1;
                v
            }
            Freedom::AtMost(c) => {
                capture += 1;
                prev.map_or(c, |p| p.min(c))
            }
        };
    }
    (over, capture)
}

/// The whole layer's don't-care stream, in index order.
fn dc_stream(rules: Rules, n: u32, values: &[Vec<i8>]) -> Vec<i8> {
    let layer = &values[n as usize];
    let mut stored = vec![0i8; layer.len()];
    stored
        .par_chunks_mut(BLOCK as usize)
        .zip(layer.par_chunks(BLOCK as usize))
        .enumerate()
        .for_each(|(b, (out, plain))| {
            dc_block(rules, n, b as u64 * BLOCK, plain, values, out);
        });
    stored
}

fn symbol(v: i8) -> usize {
    (i32::from(v) + 48) as usize
}

fn count(counts: &mut Counts, values: &[i8], seeds: &[usize]) {
    let (mut prev2, mut prev) = (NONE, NONE);
    for (&v, &s) in values.iter().zip(seeds) {
        let sym = symbol(v);
        counts.add(prev2, prev, s, sym);
        prev2 = prev;
        prev = sym;
    }
}

fn zstd_len(values: &[i8], level: i32) -> u64 {
    let bytes: Vec<u8> = values.iter().map(|&v| v as u8).collect();
    zstd::bulk::compress(&bytes, level).expect("zstd").len() as u64
}

/// The don't-care stream coded for real: a static model a context (counts of the whole
/// layer, 12-bit probabilities), an ANS coder a block, decoded by lookup tables.
struct Coded {
    /// The blocks' bytes.
    bytes: u64,
    /// The model's frequencies, two bytes each of those not zero: what a header would hold.
    model_bytes: u64,
    /// One thread decoding every block, nanoseconds a position (the machine as it is).
    decode_ns: f64,
}

/// A context from the two values stored before (`None` at a block's start), each as a
/// symbol `v + n` in `0..=2n` (a value of the shared-cycle game need not have the parity of
/// the seeds: endless play splits what is left evenly).
#[derive(Clone, Copy)]
enum Context {
    /// The previous value.
    Prev,
    /// The previous value, and whether it repeats the one before it.
    PrevRun,
}

impl Context {
    fn count(self, n: u32) -> usize {
        let k = 2 * n as usize + 1;
        match self {
            Context::Prev => k + 1,
            Context::PrevRun => 2 * k + 1,
        }
    }

    fn of(self, n: u32, prev2: Option<usize>, prev: Option<usize>) -> usize {
        let k = 2 * n as usize + 1;
        match (self, prev) {
            (_, None) => self.count(n) - 1,
            (Context::Prev, Some(p)) => p,
            (Context::PrevRun, Some(p)) => p + k * usize::from(prev2 == Some(p)),
        }
    }
}

fn coded(n: u32, stored: &[i8], context: Context) -> Coded {
    use constriction::stream::model::{
        SmallContiguousCategoricalEntropyModel, SmallContiguousLookupDecoderModel,
    };
    use constriction::stream::stack::SmallAnsCoder;
    use constriction::stream::{Decode, Encode};

    let k = 2 * n as usize + 1;
    let sym = |v: i8| (i32::from(v) + n as i32) as usize;
    let contexts = |block: &[i8]| {
        let mut out = Vec::with_capacity(block.len());
        let (mut prev2, mut prev) = (None, None);
        for &v in block {
            out.push(context.of(n, prev2, prev));
            prev2 = prev;
            prev = Some(sym(v));
        }
        out
    };
    let mut counts = vec![vec![0u64; k]; context.count(n)];
    for block in stored.chunks(BLOCK as usize) {
        for (&v, c) in block.iter().zip(contexts(block)) {
            counts[c][sym(v)] += 1;
        }
    }
    let probabilities: Vec<Option<Vec<f64>>> = counts
        .iter()
        .map(|c| (c.iter().sum::<u64>() > 0).then(|| c.iter().map(|&x| x as f64).collect()))
        .collect();
    let encoders: Vec<Option<SmallContiguousCategoricalEntropyModel>> = probabilities
        .iter()
        .map(|p| {
            p.as_ref().map(|p| {
                SmallContiguousCategoricalEntropyModel::from_floating_point_probabilities_fast(
                    p, None,
                )
                .expect("a model")
            })
        })
        .collect();
    let decoders: Vec<Option<SmallContiguousLookupDecoderModel>> = probabilities
        .iter()
        .map(|p| {
            p.as_ref().map(|p| {
                SmallContiguousLookupDecoderModel::from_floating_point_probabilities_fast(p, None)
                    .expect("a model")
            })
        })
        .collect();
    let model_bytes = 2 * counts.iter().flatten().filter(|&&c| c > 0).count() as u64;

    let blocks: Vec<Vec<u16>> = stored
        .par_chunks(BLOCK as usize)
        .map(|block| {
            let mut coder = SmallAnsCoder::new();
            for (&v, c) in block.iter().zip(contexts(block)).rev() {
                let model = encoders[c].as_ref().expect("a counted context");
                coder.encode_symbol(sym(v), model).expect("encode");
            }
            coder.into_compressed().expect("compressed")
        })
        .collect();
    let bytes = blocks.iter().map(|b| 2 * b.len() as u64).sum();
    let clock = std::time::Instant::now();
    let mut decoded = 0u64;
    for (words, block) in blocks.iter().zip(stored.chunks(BLOCK as usize)) {
        let mut coder = SmallAnsCoder::from_compressed(words.clone()).expect("a stream");
        let (mut prev2, mut prev) = (None, None);
        for &v in block {
            let model = decoders[context.of(n, prev2, prev)].as_ref();
            let s = coder
                .decode_symbol(model.expect("a counted context"))
                .expect("decode");
            assert_eq!(s, sym(v), "the coder gave back another value");
            prev2 = prev;
            prev = Some(s);
            decoded += 1;
        }
    }
    Coded {
        bytes,
        model_bytes,
        decode_ns: clock.elapsed().as_nanos() as f64 / decoded as f64,
    }
}

/// The third table: what a probe of a don't-care file costs. Every layer up to `to` stored
/// with its don't-cares; for a sample of positions of layer `to`, the value restored by
/// `max(stored, best capture)`, each capture's child restored the same way (only where
/// `captured − stored(child)`, an upper bound of that capture, could beat the best so far),
/// checked against the true value; and the lookups it took.
fn resolve_table(rules: Rules, to: u32, values: &[Vec<i8>]) {
    let stored: Vec<Vec<i8>> = (0..=to).map(|m| dc_stream(rules, m, values)).collect();
    // SplitMix64 from a fixed seed: the same sample every run.
    let mut state = 0x5EED_0FDC_u64;
    let sample: Vec<u64> = (0..100_000)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)) % size(to)
        })
        .collect();
    let mut lookups: Vec<u32> = sample
        .par_iter()
        .map(|&i| {
            let board = unrank(to, i);
            let mut count = 0;
            let v = restore(rules, &stored, to, &board, None, &mut count);
            assert_eq!(v, values[to as usize][i as usize], "{board}");
            count
        })
        .collect();
    lookups.sort_unstable();
    let mean = lookups.iter().map(|&x| f64::from(x)).sum::<f64>() / lookups.len() as f64;
    println!();
    println!("| layer | probes | lookups a probe: mean | median | 99th percentile | max |");
    println!("|---:|---:|---:|---:|---:|---:|");
    println!(
        "| {to} | {} | {mean:.2} | {} | {} | {} |",
        lookups.len(),
        lookups[lookups.len() / 2],
        lookups[lookups.len() * 99 / 100],
        lookups[lookups.len() - 1]
    );
}

/// The value of `board` (layer `n`) from don't-care tables; `known` is its stored value if
/// already looked up.
fn restore(
    rules: Rules,
    stored: &[Vec<i8>],
    n: u32,
    board: &awari::Board,
    known: Option<i8>,
    lookups: &mut u32,
) -> i8 {
    let moves = match rules.turn(board) {
        Turn::GameOver { value } => return value,
        Turn::Moves(moves) => moves,
    };
    let mut best = known.unwrap_or_else(|| {
        *lookups += 1;
        stored[n as usize][rank(board) as usize]
    });
    for m in moves.iter().filter(|m| m.captured > 0) {
        let c = n - u32::from(m.captured);
        let child = &m.child;
        *lookups += 1;
        let s = stored[c as usize][rank(child) as usize];
        if m.captured as i8 - s <= best {
            continue;
        }
        let v = restore(rules, stored, c, child, Some(s), lookups);
        best = best.max(m.captured as i8 - v);
    }
    best
}
