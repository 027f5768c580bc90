//! What a values layer would cost under other codings: a measurement of sizes, not of time.
//!
//! For each layer it reads the stored values (and those of every lower layer a capture
//! reaches), and prints, in bytes a position:
//!
//! * `file`: the layer's file as stored, and `zstd9`: the plain values compressed again as
//!   the writer does (level 9, blocks of 16,384), to check that the study sees what the store
//!   writes;
//! * the *don't-cares*: positions whose value the probe can restore without the table: the
//!   end of the game (`over`), and positions whose value a capture among their moves already
//!   gives (`capture`: `value = max over captures of (captured − child's value)`). Such a
//!   position may store any value at most its best capture's, and the probe takes the better
//!   of the two;
//! * `dc zstd9`, `dc zstd19`: the layer with each don't-care replaced by the allowed value
//!   nearest the position before it in index order (a run goes on where it can), under the
//!   writer's zstd;
//! * `H(..)`: the size under a static context model (counts of the whole layer, their cost
//!   not included; an entropy coder reaches it within a fraction of a percent), of the plain
//!   values and of the don't-care stream: order 0, given the previous value, the previous two,
//!   and the previous value with the mover's seeds.
//!
//! `AWARI_STUDY_DB=DIR AWARI_STUDY_LAYERS=20..=24 cargo bench --bench codec_study`, over a
//! folder where `awari build --max-seeds 24 --db DIR` has run (`AWARI_STUDY_RULES` names
//! other rules; the default is `awari`). Without `AWARI_STUDY_DB` it says so and stops.

use awari::index::{rank, size, walk};
use awari::store::LayerFile;
use awari::{Rules, Turn};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

const BLOCK: u64 = 1 << 14;
/// Values −48..=48 and one "none" for the first position of a block.
const SYMBOLS: usize = 98;
const NONE: usize = 97;

fn main() {
    let Some(db) = std::env::var_os("AWARI_STUDY_DB") else {
        eprintln!(
            "codec_study: set AWARI_STUDY_DB to a built database folder (see the file's comment)"
        );
        return;
    };
    let rules: Rules = match std::env::var("AWARI_STUDY_RULES") {
        Ok(name) => Rules::ALL
            .into_iter()
            .find(|r| r.name() == name)
            .unwrap_or_else(|| panic!("unknown rules {name}")),
        Err(_) => Rules::AWARI,
    };
    let layers = std::env::var("AWARI_STUDY_LAYERS").unwrap_or_else(|_| "16..=20".into());
    let (from, to) = layers
        .split_once("..=")
        .map(|(a, b)| {
            (
                a.parse::<u32>().expect("from"),
                b.parse::<u32>().expect("to"),
            )
        })
        .expect("AWARI_STUDY_LAYERS as A..=B");
    let db = PathBuf::from(db);
    let values: Vec<Vec<i8>> = (0..=to).map(|m| read_layer(&db, rules, m)).collect();
    println!(
        "| layer | positions | file | zstd9 | over | capture | dc zstd9 | dc zstd19 | H0 | H(prev) | H(prev2) | H(prev,seeds) | dc H0 | dc H(prev) | dc H(prev2) | dc H(prev,seeds) |"
    );
    println!("|{}", "---:|".repeat(16));
    let mut totals = [0f64; 14];
    let mut positions = 0u64;
    for n in from..=to {
        let file = layer_path(&db, rules, n);
        let file_bytes = std::fs::metadata(&file).expect("layer file").len();
        let study = study_layer(rules, n, &values);
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

fn layer_path(db: &Path, rules: Rules, n: u32) -> PathBuf {
    db.join(rules.name()).join(format!("layer-{n:02}.awdb"))
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
    /// Anything: the end of the game, which the rules value.
    Any,
    /// Anything up to its best capture's value, which is its value.
    AtMost(i8),
}

fn freedom(rules: Rules, n: u32, board: &awari::Board, value: i8, lower: &[Vec<i8>]) -> Freedom {
    match rules.turn(board) {
        Turn::GameOver { .. } => Freedom::Any,
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
            let mut stored = Vec::with_capacity(plain.len());
            let mut seeds = Vec::with_capacity(plain.len());
            for ((_, board), &v) in walk(n, start, end).zip(plain) {
                let prev = stored.last().copied();
                let s = match freedom(rules, n, &board, v, values) {
                    Freedom::Fixed => v,
                    Freedom::Any => {
                        acc.over += 1;
                        prev.unwrap_or(v)
                    }
                    Freedom::AtMost(c) => {
                        acc.capture += 1;
                        prev.map_or(c, |p| p.min(c))
                    }
                };
                stored.push(s);
                seeds.push(board.mover_seeds() as usize);
            }
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
