//! `awari recode`: the values of built layers re-written with another codec or block size.

use super::args::{CodecArg, DbArgs};
use super::layers::{values_span, LayerRange};
use super::output::say;
use anyhow::{bail, Context, Result};
use awari::rules::MAX_CAPTURE;
use awari::store::{self, WriteOptions};
use awari::store::{LayerState, TableKind};
use awari::{index, Database, Tables};

/// Runs `recode`: layer after layer, each file replaced only when its new one is whole.
pub fn run(
    db: &DbArgs,
    tables: Tables,
    layers: Option<LayerRange>,
    codec: CodecArg,
    block_size: Option<u32>,
    zstd_level: i32,
) -> Result<bool> {
    let opts = WriteOptions {
        block_size: codec.block_size(block_size)?,
        zstd_level,
        codec: codec.into(),
    };
    if tables.is_pair() {
        return recode_pairs(db, tables, layers, opts);
    }
    let database = Database::open(&db.db, db.rules)?;
    let (first, last) = values_span(&database, layers)?;
    // No build and no other recode writes into the folder meanwhile.
    let _lock = awari::build::lock_tables(&db.db, db.rules, Tables::Values)?;
    // Don't-cares, written or read, need the true values of the layers below: they are
    // held in memory from the lowest a capture reaches, each restored as it is loaded.
    let dont_cares = opts.codec == store::Codec::DontCares
        || (first..=last).any(|n| database.layer(n).is_some_and(|f| f.dont_cares()));
    if dont_cares {
        // Every layer held at once, one byte a position, and two more copies of the top
        // one while it is coded: refused in seconds rather than swapping for hours.
        let lowest = first.saturating_sub(MAX_CAPTURE);
        let need: u64 = (lowest..=last).map(index::size).sum::<u64>() + 2 * index::size(last);
        if let Some(have) = awari::build::physical_memory().filter(|&have| need > have) {
            bail!(
                "recoding layers {first}..={last} with don't-cares holds layers {lowest}..={last} in memory, about {:.1} GiB, over this machine's {:.1} GiB: recode fewer layers at a time, or keep these with --codec ranks",
                need as f64 / f64::from(1 << 30),
                have as f64 / f64::from(1 << 30)
            );
        }
        database.load(&(lowest..first).collect::<Vec<_>>())?;
    }
    for n in first..=last {
        let path = store::layer_path(&db.db, db.rules, n);
        let before = std::fs::metadata(&path)
            .with_context(|| format!("layer {n} of '{}': {}", db.rules, path.display()))?
            .len();
        if dont_cares {
            database.load(&[n])?;
        }
        let written = database.recode_layer(n, opts)?;
        let positions = index::size(n) as f64;
        say!(
            "layer {n:>2}: {before} bytes ({:.4} a position), now {} ({:.4})",
            before as f64 / positions,
            written.bytes,
            written.bytes as f64 / positions
        );
    }
    Ok(true)
}

/// `recode` of the pairs of `tables`: every layer of `layers` built (by default every
/// layer built from 0 up), each pair replaced so that a whole pair is on disk at every
/// moment ([`store::recode_pair`]); a pair already in ranks, in blocks of the size asked,
/// is left as it is, so that a run stopped part way resumes where it stopped.
fn recode_pairs(
    db: &DbArgs,
    tables: Tables,
    layers: Option<LayerRange>,
    opts: WriteOptions,
) -> Result<bool> {
    if !matches!(opts.codec, store::Codec::Ranks | store::Codec::Zstd) {
        bail!("--cycles {tables} takes --codec ranks or --codec zstd: the other codecs are for the values");
    }
    let built = |n| store::layer_state(&db.db, db.rules, tables, n);
    let (first, last) = match layers {
        Some(r) => (r.first, r.last),
        None => {
            let top = (0..=awari::MAX_SEEDS)
                .take_while(|&n| matches!(built(n), Ok(LayerState::Complete)))
                .last();
            let Some(top) = top else {
                bail!(
                    "no {} of '{}' is built in {}",
                    tables.layer_name(),
                    db.rules,
                    db.db.display()
                );
            };
            (0, top)
        }
    };
    let _lock = awari::build::lock_tables(&db.db, db.rules, tables)?;
    let root = tables.root(&db.db);
    let open = |n, kind: TableKind| {
        let path = store::table_path(&root, db.rules, n, kind);
        store::LayerFile::open_kind(&path, db.rules, n, kind)
    };
    for n in first..=last {
        if !matches!(built(n)?, LayerState::Complete) {
            bail!(
                "{} {n} of '{}' is not built in {}",
                tables.layer_name(),
                db.rules,
                db.db.display()
            );
        }
        let (low, high) = (open(n, tables.companion())?, open(n, tables.marker())?);
        let before = low.bytes() + high.bytes();
        let done = opts.codec == store::Codec::Ranks
            && [&low, &high]
                .iter()
                .all(|f| f.codec() == opts.codec && f.block_size() == opts.block_size);
        drop((low, high));
        let positions = index::size(n) as f64;
        if done {
            say!(
                "{} {n:>2}: {before} bytes ({:.4} a position), already in ranks",
                tables.layer_name(),
                before as f64 / positions
            );
            continue;
        }
        let (low, high) = store::recode_pair(&db.db, db.rules, n, tables, opts)?;
        let after = low.bytes + high.bytes;
        say!(
            "{} {n:>2}: {before} bytes ({:.4} a position), now {after} ({:.4})",
            tables.layer_name(),
            before as f64 / positions,
            after as f64 / positions
        );
    }
    Ok(true)
}
