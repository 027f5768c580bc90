//! Re-writing a table with other write options (its codec, block size or zstd level): the
//! same values, read twice (once to count the context model, once to code them), written
//! under the temporary name and renamed over the old file, so a run cut short leaves the
//! old file whole and readable. A pair (bounds, own-row values) is re-written so that the
//! files on disk are a whole pair at every moment (see [`recode_pair`]).

use super::context_coder::{block_counts, Codec, Counts, Model};
use super::pair_writer::{pair_counts, PairWriter};
use super::writer::TableWriter;
use super::*;
use rayon::prelude::*;

/// Blocks of the new file read and coded together (in parallel): 4 Mi positions at the
/// default block size.
const RUN_BLOCKS: u64 = 256;

/// Re-writes the values of layer `seeds` of `rules` under `db` with `opts`: a context model
/// ([`Codec::Context`], [`Codec::Ranks`]: format version 2) or zstd, in blocks of
/// `opts.block_size`. The layer's distances are left as they are. Re-writing a file with
/// the options it was written with gives the same bytes. Values with don't-cares, on
/// either side, need the layers below: [`crate::Database::recode_layer`] re-writes those.
///
/// # Errors
///
/// The layer's file cannot be opened, or a block of it is damaged (nothing is renamed
/// then), or the new file cannot be written (its temporary file is removed);
/// [`StoreError::Unusable`] for don't-cares, on either side.
pub fn recode_layer(
    db: &Path,
    rules: Rules,
    seeds: u32,
    opts: WriteOptions,
) -> Result<WrittenLayer, StoreError> {
    let old = LayerFile::open(&layer_path(db, rules, seeds), rules, seeds)?;
    if opts.codec == Codec::DontCares {
        return Err(StoreError::Unusable {
            path: old.path().to_path_buf(),
            what: "values with don't-cares are written from the layers below \
                   (Database::recode_layer)"
                .into(),
        });
    }
    rewrite(&old, db, rules, opts)
}

/// Re-writes `old` (a table that reads alone) under `db` with `opts`, over itself.
fn rewrite(
    old: &LayerFile,
    db: &Path,
    rules: Rules,
    opts: WriteOptions,
) -> Result<WrittenLayer, StoreError> {
    let (seeds, kind) = (old.seeds(), old.kind());
    let model = if opts.codec.has_model() && opts.codec.fits(kind) {
        let mut counts = Counts::new(seeds);
        in_runs(&[old], opts.block_size, |run| {
            counts.absorb(&block_counts(seeds, &run[0], opts.block_size));
            Ok(())
        })?;
        Some(Model::from_counts(&counts))
    } else {
        None
    };
    let mut new = TableWriter::create_coded(db, rules, seeds, kind, opts, model)?;
    in_runs(&[old], opts.block_size, |run| new.append(&run[0]))?;
    new.finish(old.summary().clone())
}

/// Re-writes the pair of tables of layer `seeds` of `rules` (`tables`: the bounds, or the
/// own-row values of one repetition) under `db` (the database folder) with `opts`:
/// [`Codec::Ranks`] or [`Codec::Zstd`], the high file keeping in the low file the blocks
/// where the two agree, as a build writes them. Re-writing a pair with the options it was
/// written with gives the same bytes.
///
/// Every file is written aside and renamed over the old one, in an order that keeps a
/// whole pair on disk at every moment: a high file that keeps blocks in its low file is
/// first re-written whole (zstd at level 1, every block its own), since a new low file
/// would not hold those blocks; then the new low file is renamed into place, then the new
/// high file. A run stopped anywhere leaves a pair every reader reads, and the same call
/// finishes it.
///
/// # Errors
///
/// [`StoreError::Unusable`] for a kind of tables that is not a pair or a codec a pair
/// cannot take (the context model's, don't-cares); the pair's files cannot be opened or a
/// block is damaged; a new file cannot be written (its temporary file is removed).
pub fn recode_pair(
    db: &Path,
    rules: Rules,
    seeds: u32,
    tables: Tables,
    opts: WriteOptions,
) -> Result<(WrittenLayer, WrittenLayer), StoreError> {
    let (dir, high_kind) = (tables.root(db), tables.marker());
    let low_kind = tables.companion();
    let path = |kind| table_path(&dir, rules, seeds, kind);
    if !tables.is_pair() || !matches!(opts.codec, Codec::Zstd | Codec::Ranks) {
        return Err(StoreError::Unusable {
            path: path(high_kind),
            what: format!(
                "a pair of tables is coded by zstd or by ranks, not {:?} ({tables})",
                opts.codec
            ),
        });
    }
    let open = |kind| LayerFile::open_kind(&path(kind), rules, seeds, kind);
    let mut high = open(high_kind)?;
    if high.shares() {
        let whole = WriteOptions {
            block_size: high.block_size(),
            zstd_level: 1,
            codec: Codec::Zstd,
        };
        rewrite(&high, &dir, rules, whole)?;
        high = open(high_kind)?;
    }
    let low = open(low_kind)?;
    let models = if opts.codec.has_model() {
        let mut counts = (Counts::new(seeds), Counts::new(seeds));
        in_runs(&[&low, &high], opts.block_size, |run| {
            let (l, h) = pair_counts(seeds, &run[0], &run[1], opts.block_size);
            counts.0.absorb(&l);
            counts.1.absorb(&h);
            Ok(())
        })?;
        Some((Model::from_counts(&counts.0), Model::from_counts(&counts.1)))
    } else {
        None
    };
    let mut new = PairWriter::create_coded(&dir, rules, seeds, high_kind, opts, models)?;
    in_runs(&[&low, &high], opts.block_size, |run| {
        new.append(&run[0], &run[1])
    })?;
    new.finish((low.summary().clone(), high.summary().clone()))
}

/// Calls `f` with the bytes of each of `files` (tables of one layer) over the same
/// positions, in index order, [`RUN_BLOCKS`] blocks of `block_size` positions at a time
/// from the first position (the last run may be short), whatever the files' own blocks;
/// the blocks of a run are read in parallel.
fn in_runs(
    files: &[&LayerFile],
    block_size: u32,
    mut f: impl FnMut(&[Vec<u8>]) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let positions = files[0].positions();
    let run = u64::from(block_size) * RUN_BLOCKS;
    let mut start = 0;
    while start < positions {
        let len = run.min(positions - start);
        let bytes = files
            .iter()
            .map(|file| read_span(file, start, len))
            .collect::<Result<Vec<_>, _>>()?;
        f(&bytes)?;
        start += len;
    }
    Ok(())
}

/// The bytes of positions `start..start + len` (`len` at least 1) of `file`, its blocks
/// read in parallel.
fn read_span(file: &LayerFile, start: u64, len: u64) -> Result<Vec<u8>, StoreError> {
    let size = u64::from(file.block_size());
    let (first, last) = (start / size, (start + len - 1) / size);
    let blocks = (first..=last)
        .into_par_iter()
        .map(|b| file.read_block_bytes(b))
        .collect::<Result<Vec<_>, _>>()?;
    let from = (start - first * size) as usize;
    Ok(blocks.concat()[from..from + len as usize].to_vec())
}
