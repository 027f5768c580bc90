//! Writing a layer file: compress blocks in parallel, write under a temporary name, sync,
//! rename.

use super::context_coder::{as_values, layer_model, Codec, Model};
use super::header::{compression_code, Header};
use super::ranked::Ranking;
use super::zstd_contexts;
use super::*;
use crate::index;
use rayon::prelude::*;
use std::fs::{self, File};
use std::io::{BufWriter, Seek, SeekFrom, Write};
use xxhash_rust::xxh3::xxh3_64;

/// How table files are written.
#[derive(Clone, Copy, Debug)]
pub struct WriteOptions {
    /// Positions per compressed block: smaller blocks make cold probes cheaper, larger
    /// ones compress better.
    pub block_size: u32,
    /// zstd level, 1..=22.
    pub zstd_level: i32,
    /// How a values table written whole ([`write_layer`], [`write_table`]) codes its
    /// blocks; every other table, and a table written block by block, uses zstd.
    pub codec: Codec,
}

impl Default for WriteOptions {
    fn default() -> WriteOptions {
        WriteOptions {
            block_size: DEFAULT_BLOCK,
            zstd_level: 9,
            codec: Codec::Zstd,
        }
    }
}

/// What [`write_layer`] wrote.
#[derive(Clone, Debug)]
pub struct WrittenLayer {
    /// Where it was written.
    pub path: PathBuf,
    /// The file's size in bytes.
    pub bytes: u64,
    /// The summary stored in its header.
    pub summary: LayerSummary,
}

/// Writes `values` (layer `seeds`, every position in index order) to its final path under
/// `db`, atomically: under a temporary name first, renamed when complete and synced.
///
/// # Errors
///
/// [`StoreError::Io`] when a folder or the file cannot be created or written (a full disk,
/// say); the temporary file is then removed.
///
/// # Panics
///
/// If `values` does not hold exactly the positions of layer `seeds`.
pub fn write_layer(
    db: &Path,
    rules: Rules,
    seeds: u32,
    values: &[i8],
    opts: WriteOptions,
) -> Result<WrittenLayer, StoreError> {
    let summary = LayerSummary::from_values(seeds, values);
    let bytes = as_bytes(values);
    write_table(db, rules, TableKind::Values, bytes, summary, opts)
}

/// The bytes of an `i8` slice, without copying.
fn as_bytes(values: &[i8]) -> &[u8] {
    // SAFETY: i8 and u8 have the same size and alignment, and every bit pattern is valid
    // for both.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), values.len()) }
}

/// Writes one table of `kind` for layer `summary.seeds` (its bytes in index order, and the
/// summary of the layer's values for the header), atomically: under a temporary name,
/// renamed into place when whole.
///
/// # Panics
///
/// If `bytes` does not hold one byte for each position of the layer.
///
/// # Errors
///
/// A file that cannot be created, written or renamed (nothing is left behind).
pub fn write_table(
    db: &Path,
    rules: Rules,
    kind: TableKind,
    bytes: &[u8],
    summary: LayerSummary,
    opts: WriteOptions,
) -> Result<WrittenLayer, StoreError> {
    if kind == TableKind::Values && opts.codec == Codec::DontCares {
        return Err(StoreError::Unusable {
            path: table_path(db, rules, summary.seeds, kind),
            what: "values with don't-cares are written from the layers below: \
                   write them with another codec, then Database::recode_layer"
                .into(),
        });
    }
    write_coded(db, rules, kind, bytes, summary, opts)
}

/// Writes the values of layer `summary.seeds` with don't-cares ([`Codec::DontCares`]):
/// `stored` is what the file keeps, at most each position's value and equal to it wherever
/// no capture gives it, and `summary` counts the true values.
pub(crate) fn write_dont_cares(
    db: &Path,
    rules: Rules,
    stored: &[i8],
    summary: LayerSummary,
    opts: WriteOptions,
) -> Result<WrittenLayer, StoreError> {
    let opts = WriteOptions {
        codec: Codec::DontCares,
        ..opts
    };
    write_coded(
        db,
        rules,
        TableKind::Values,
        as_bytes(stored),
        summary,
        opts,
    )
}

/// [`write_table`] for every codec.
fn write_coded(
    db: &Path,
    rules: Rules,
    kind: TableKind,
    bytes: &[u8],
    summary: LayerSummary,
    opts: WriteOptions,
) -> Result<WrittenLayer, StoreError> {
    assert_eq!(bytes.len() as u64, index::size(summary.seeds));
    let model = (opts.codec.has_model() && opts.codec.fits(kind))
        .then(|| layer_model(summary.seeds, bytes, opts.block_size));
    let mut w = TableWriter::create_coded(db, rules, summary.seeds, kind, opts, model)?;
    w.append(bytes)?;
    w.finish(summary)
}

/// A table written block by block, for a pass that never holds the whole layer: the
/// blocks go to the temporary file as they come, and [`TableWriter::finish`] writes the
/// header in front (its length depends only on the layer and the block size), syncs and
/// renames. The bytes are those [`write_layer`] writes for the same values. Dropped
/// without `finish`, it removes its temporary file.
pub(crate) struct TableWriter {
    path: PathBuf,
    pub(super) tmp: PathBuf,
    pub(super) out: Option<BufWriter<File>>,
    rules: Rules,
    kind: TableKind,
    seeds: u32,
    pub(super) opts: WriteOptions,
    pub(super) lens: Vec<u64>,
    pub(super) sums: Vec<u64>,
    /// Bytes received that do not yet fill a block.
    partial: Vec<u8>,
    pub(super) positions: u64,
    /// Whether a block was left to the pair's low file ([`PairWriter`]).
    pub(super) shares: bool,
    /// The context model the blocks are coded with, kept between the header and the
    /// first block; None for zstd.
    model: Option<Model>,
    /// The model's ranking, for values with don't-cares (`ranked`).
    ranking: Option<Ranking>,
    /// The model's room in the file: its bytes and their checksum.
    gap: u64,
}

impl TableWriter {
    /// A table of zstd blocks, written block by block.
    pub fn create(
        db: &Path,
        rules: Rules,
        seeds: u32,
        kind: TableKind,
        opts: WriteOptions,
    ) -> Result<TableWriter, StoreError> {
        Self::create_coded(db, rules, seeds, kind, opts, None)
    }

    /// A table whose blocks are coded by `model`, or by zstd where it is None.
    pub(crate) fn create_coded(
        db: &Path,
        rules: Rules,
        seeds: u32,
        kind: TableKind,
        opts: WriteOptions,
        model: Option<Model>,
    ) -> Result<TableWriter, StoreError> {
        let path = table_path(db, rules, seeds, kind);
        fs::create_dir_all(rules_dir(db, rules)).map_err(|source| StoreError::Io {
            path: path.clone(),
            source,
        })?;
        let tmp = temporary_path(db, rules, seeds, kind);
        let blocks = index::size(seeds).div_ceil(u64::from(opts.block_size));
        let mut w = TableWriter {
            path,
            tmp: tmp.clone(),
            out: None,
            rules,
            kind,
            seeds,
            opts,
            lens: Vec::with_capacity(blocks as usize),
            sums: Vec::with_capacity(blocks as usize),
            partial: Vec::new(),
            positions: 0,
            shares: false,
            model: None,
            ranking: None,
            gap: 0,
        };
        let file = File::create(&tmp).map_err(|e| w.tmp_error(e))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        // Room for the header, written last; then the model, if any, and its checksum.
        let room = vec![0u8; Header::len_with_tables(blocks)];
        out.write_all(&room).map_err(|e| w.tmp_error(e))?;
        if let Some(model) = model {
            let mut bytes = model.to_bytes();
            bytes.extend_from_slice(&xxh3_64(&bytes).to_le_bytes());
            out.write_all(&bytes).map_err(|e| w.tmp_error(e))?;
            w.gap = bytes.len() as u64;
            w.ranking =
                matches!(opts.codec, Codec::DontCares | Codec::Ranks).then(|| Ranking::of(&model));
            w.model = Some(model);
        }
        w.out = Some(out);
        Ok(w)
    }

    fn tmp_error(&self, source: std::io::Error) -> StoreError {
        StoreError::Io {
            path: self.tmp.clone(),
            source,
        }
    }

    /// Appends the next bytes of the table, in index order; whole blocks are compressed
    /// (in parallel) and written at once.
    pub fn append(&mut self, bytes: &[u8]) -> Result<(), StoreError> {
        let block = self.opts.block_size as usize;
        self.positions += bytes.len() as u64;
        let mut rest = bytes;
        if !self.partial.is_empty() {
            let take = (block - self.partial.len()).min(rest.len());
            self.partial.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if self.partial.len() == block {
                let full = std::mem::take(&mut self.partial);
                self.write_blocks(&full)?;
            }
        }
        let whole = rest.len() / block * block;
        self.write_blocks(&rest[..whole])?;
        self.partial.extend_from_slice(&rest[whole..]);
        Ok(())
    }

    fn write_blocks(&mut self, bytes: &[u8]) -> Result<(), StoreError> {
        let blocks: Vec<Vec<u8>> = bytes
            .par_chunks(self.opts.block_size as usize)
            .map(|block| self.encode_block(block))
            .collect();
        self.write_compressed(blocks.iter().map(Vec::as_slice))
    }

    /// One block's bytes, coded as this table codes its blocks.
    pub(super) fn encode_block(&self, block: &[u8]) -> Vec<u8> {
        match (&self.model, &self.ranking) {
            (None, _) => zstd_contexts::compress(block, self.opts.zstd_level),
            // Ranks in a zstd frame, for decoding speed (`ranked`).
            (Some(_), Some(ranking)) => ranking.encode(&as_values(block)),
            (Some(model), None) => model.encode(&as_values(block)),
        }
    }

    /// Appends the next blocks of the table already compressed by [`compress_blocks`]
    /// with this writer's options (by another process, say), `positions` positions in
    /// all. What came before must have ended on a block's end: only the last block of
    /// the table may be short.
    ///
    /// # Panics
    ///
    /// If bytes appended before do not fill their last block.
    pub fn append_compressed<'b>(
        &mut self,
        blocks: impl Iterator<Item = &'b [u8]>,
        positions: u64,
    ) -> Result<(), StoreError> {
        assert!(
            self.partial.is_empty(),
            "compressed blocks after a partial one"
        );
        self.positions += positions;
        self.write_compressed(blocks)
    }

    pub(super) fn write_compressed<'b>(
        &mut self,
        blocks: impl Iterator<Item = &'b [u8]>,
    ) -> Result<(), StoreError> {
        let out = self.out.as_mut().expect("open until finish");
        for b in blocks {
            if let Err(e) = out.write_all(b) {
                return Err(StoreError::Io {
                    path: self.tmp.clone(),
                    source: e,
                });
            }
            self.lens.push(b.len() as u64);
            self.sums.push(xxh3_64(b));
        }
        Ok(())
    }

    /// Writes the header (`summary` is the layer's, for every kind), syncs and renames the
    /// file into place.
    ///
    /// # Panics
    ///
    /// If the bytes appended are not exactly the layer's positions.
    pub fn finish(mut self, summary: LayerSummary) -> Result<WrittenLayer, StoreError> {
        assert_eq!(self.positions, index::size(self.seeds), "a partial table");
        assert_eq!(summary.seeds, self.seeds);
        let last = std::mem::take(&mut self.partial);
        if !last.is_empty() {
            self.write_blocks(&last)?;
        }
        let codec = match self.model {
            Some(_) => self.opts.codec,
            None => Codec::Zstd,
        };
        let compression = compression_code(codec, self.shares);
        let header = Header::coded(
            self.rules,
            self.kind,
            self.opts.block_size,
            &summary,
            compression,
        );
        let header = header.encode(self.gap, &self.lens, &self.sums);
        let out = self.out.take().expect("open until finish");
        if let Err(e) = finish_file(out, &header) {
            return Err(self.tmp_error(e));
        }
        put_in_place(&self.tmp, &self.path, summary)
    }
}

/// `bytes` cut into blocks of `opts.block_size` positions (the last may be short), each
/// compressed at `opts.zstd_level` (in parallel): the blocks a [`TableWriter`] with these
/// options writes for them, when they start on a block's start.
pub(crate) fn compress_blocks(bytes: &[u8], opts: WriteOptions) -> Vec<Vec<u8>> {
    bytes
        .par_chunks(opts.block_size as usize)
        .map(|chunk| zstd_contexts::compress(chunk, opts.zstd_level))
        .collect()
}

/// Writes the table of `kind` of layer `summary.seeds` as one that keeps no entries: a
/// header and no blocks (a layer built without its distances), atomically as
/// [`write_table`] does.
pub(crate) fn write_without_entries(
    db: &Path,
    rules: Rules,
    kind: TableKind,
    summary: LayerSummary,
    opts: WriteOptions,
) -> Result<WrittenLayer, StoreError> {
    let path = table_path(db, rules, summary.seeds, kind);
    let tmp = temporary_path(db, rules, summary.seeds, kind);
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| StoreError::Io { path, source }
    };
    fs::create_dir_all(rules_dir(db, rules)).map_err(io(&path))?;
    let header =
        Header::without_entries(rules, kind, opts.block_size, &summary).encode(0, &[], &[]);
    let written = File::create(&tmp).and_then(|file| {
        let out = BufWriter::new(file);
        finish_file(out, &header)
    });
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(io(&tmp)(e));
    }
    put_in_place(&tmp, &path, summary).inspect_err(|_| {
        // As a dropped `TableWriter` does: leave no temporary file behind.
        let _ = fs::remove_file(&tmp);
    })
}

/// Renames a finished, synced temporary file into place and makes the rename durable.
fn put_in_place(
    tmp: &Path,
    path: &Path,
    summary: LayerSummary,
) -> Result<WrittenLayer, StoreError> {
    let io = |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    };
    fs::rename(tmp, path).map_err(io)?;
    if let Some(dir) = path.parent() {
        // Make the rename itself durable.
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    let bytes = fs::metadata(path).map_err(io)?.len();
    Ok(WrittenLayer {
        path: path.to_path_buf(),
        bytes,
        summary,
    })
}

impl Drop for TableWriter {
    fn drop(&mut self) {
        // Unfinished (an error, or a pass that stopped): leave nothing behind, so a full
        // disk does not stay full of a file nobody will use. After a rename the temporary
        // name no longer exists.
        let _ = fs::remove_file(&self.tmp);
    }
}

/// Writes the header over the room left for it and syncs the file.
fn finish_file(out: BufWriter<File>, header: &[u8]) -> std::io::Result<()> {
    let mut file = out.into_inner().map_err(|e| e.into_error())?;
    file.seek(SeekFrom::Start(0))?;
    file.write_all(header)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A distances table without entries opens, keeps no entries and refuses a read with
    /// a clear error; a values table may not be one.
    #[test]
    fn only_a_distances_table_may_keep_no_entries() {
        let db = tempfile::tempdir().unwrap();
        let n = 3;
        let summary = LayerSummary::from_values(n, &vec![1; index::size(n) as usize]);
        let opts = WriteOptions::default();
        for kind in [TableKind::Distances, TableKind::Values] {
            let written =
                write_without_entries(db.path(), Rules::AWARI, kind, summary.clone(), opts)
                    .unwrap();
            assert_eq!(written.bytes as usize, Header::len_with_tables(0));
            let opened = LayerFile::open_kind(&written.path, Rules::AWARI, n, kind);
            if kind == TableKind::Values {
                let e = opened.unwrap_err().to_string();
                assert!(e.contains("unknown index kind or compression"), "{e}");
                continue;
            }
            let file = opened.unwrap();
            assert!(!file.keeps_entries());
            assert_eq!((file.blocks(), file.positions()), (0, index::size(n)));
            assert_eq!(file.summary(), &summary);
            file.check_blocks().unwrap();
            for e in [
                file.read_block_bytes(0).unwrap_err(),
                file.read_all_bytes().unwrap_err(),
            ] {
                assert!(e.to_string().contains("keeps no entries"), "{e}");
            }
            let state = layer_state(db.path(), Rules::AWARI, super::Tables::Values, n).unwrap();
            assert!(matches!(state, LayerState::Missing), "{state:?}");
        }
    }

    /// A table whose blocks were compressed elsewhere, piece by piece (whole blocks, the
    /// last short), is the file a writer given the bytes themselves writes.
    #[test]
    fn blocks_compressed_elsewhere_write_the_same_file() {
        let n = 6;
        let size = index::size(n) as usize;
        let values: Vec<i8> = (0..size).map(|i| (i * 7 % 13) as i8 - 6).collect();
        let summary = LayerSummary::from_values(n, &values);
        let opts = WriteOptions {
            block_size: 1000,
            zstd_level: 3,
            codec: crate::store::Codec::Zstd,
        };
        let whole = tempfile::tempdir().unwrap();
        let expected = write_layer(whole.path(), Rules::AWARI, n, &values, opts).unwrap();
        let pieces = tempfile::tempdir().unwrap();
        let mut w =
            TableWriter::create(pieces.path(), Rules::AWARI, n, TableKind::Values, opts).unwrap();
        for piece in as_bytes(&values).chunks(3000) {
            let blocks = compress_blocks(piece, opts);
            w.append_compressed(blocks.iter().map(Vec::as_slice), piece.len() as u64)
                .unwrap();
        }
        let got = w.finish(summary).unwrap();
        assert_eq!(
            fs::read(&got.path).unwrap(),
            fs::read(&expected.path).unwrap()
        );
    }

    /// The settings of the pairs below: blocks of 1000 positions of layer 5.
    const PAIR_LAYER: u32 = 5;
    const PAIR_OPTS: WriteOptions = WriteOptions {
        block_size: 1000,
        zstd_level: 3,
        codec: Codec::Zstd,
    };
    const PAIR_KIND: TableKind = TableKind::OwnRowHigh(Repetition::First);

    /// Another value of the layer's range than `b`.
    fn nudge(b: u8) -> u8 {
        if (b as i8) > 0 {
            b - 1
        } else {
            b.wrapping_add(1)
        }
    }

    /// The low file of the pairs below: every value of the layer's range in turn.
    fn pair_low() -> Vec<u8> {
        let size = index::size(PAIR_LAYER) as usize;
        (0..size).map(|i| ((i * 7 % 11) as i8 - 5) as u8).collect()
    }

    fn pair_summary(b: &[u8]) -> LayerSummary {
        LayerSummary::from_values(PAIR_LAYER, &b.iter().map(|&x| x as i8).collect::<Vec<_>>())
    }

    /// Writes the pair `(low, high)` under `db`.
    fn write_test_pair(db: &Path, low: &[u8], high: &[u8]) -> (WrittenLayer, WrittenLayer) {
        let summaries = (pair_summary(low), pair_summary(high));
        let (n, kind, opts) = (PAIR_LAYER, PAIR_KIND, PAIR_OPTS);
        write_pair(db, Rules::ABAPA, n, kind, low, high, summaries, opts).unwrap()
    }

    /// A pair writes the high file's blocks that equal the low file's as blocks of length
    /// 0 (compression code 2), reads back every byte through the low file, and is refused
    /// against a low file it was not written with.
    #[test]
    fn a_pair_shares_the_blocks_where_it_is_exact() {
        let (n, kind, opts) = (PAIR_LAYER, PAIR_KIND, PAIR_OPTS);
        let size = index::size(n) as usize;
        let low = pair_low();
        // Blocks 0 and 2 differ; the others (1, 3, and the short last one) are exact.
        let mut high = low.clone();
        high[10] = nudge(high[10]);
        high[2500] = nudge(high[2500]);
        let db = tempfile::tempdir().unwrap();
        let (l, h) = write_test_pair(db.path(), &low, &high);
        let file = LayerFile::open_kind(&h.path, Rules::ABAPA, n, kind).unwrap();
        assert_eq!(file.read_all_bytes().unwrap(), high);
        file.check_blocks().unwrap();
        let low_file =
            LayerFile::open_kind(&l.path, Rules::ABAPA, n, kind.low_of_pair().unwrap()).unwrap();
        let shared: Vec<bool> = (0..file.blocks())
            .map(|b| low_file.same_block(&file, b).unwrap())
            .collect();
        assert_eq!(shared, [false, true, false, true, true]);
        // The exact positions, counted with the shared blocks unread: all but the two nudged.
        assert_eq!(low_file.count_equal(&file).unwrap(), size as u64 - 2);
        // The high file holds only its two own blocks beside its header.
        let own: u64 = [0, 2]
            .iter()
            .map(|&b| compress_blocks(&high[b * 1000..(b + 1) * 1000], opts)[0].len() as u64)
            .sum();
        assert_eq!(h.bytes, Header::len_with_tables(5) as u64 + own);
        // Another low file under the same name: the high file is refused, not misread.
        let mut other = low.clone();
        other[1500] = nudge(other[1500]);
        let low_kind = kind.low_of_pair().unwrap();
        write_table(
            db.path(),
            Rules::ABAPA,
            low_kind,
            &other,
            pair_summary(&other),
            opts,
        )
        .unwrap();
        let e = LayerFile::open_kind(&h.path, Rules::ABAPA, n, kind)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not the low file it was written with"), "{e}");
        // No low file at all.
        fs::remove_file(&l.path).unwrap();
        let e = LayerFile::open_kind(&h.path, Rules::ABAPA, n, kind)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("shares blocks with") && e.contains("cannot be read"),
            "{e}"
        );
    }

    /// A pair that shares nothing is written as two plain tables; and only a pair's high
    /// file may share blocks.
    #[test]
    fn a_pair_that_shares_nothing_is_two_plain_tables() {
        let low = pair_low();
        let apart: Vec<u8> = low.iter().map(|&b| nudge(b)).collect();
        let db = tempfile::tempdir().unwrap();
        let (_, h) = write_test_pair(db.path(), &low, &apart);
        let plain = tempfile::tempdir().unwrap();
        let summary = pair_summary(&apart);
        let expected = write_table(
            plain.path(),
            Rules::ABAPA,
            PAIR_KIND,
            &apart,
            summary,
            PAIR_OPTS,
        )
        .unwrap();
        assert_eq!(
            fs::read(&h.path).unwrap(),
            fs::read(&expected.path).unwrap()
        );
        assert!(TableKind::Values.low_of_pair().is_none());
    }
}
