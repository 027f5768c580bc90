//! `awari build --mpi`: the lean pass partitioned over the ranks of an MPI job (feature
//! `mpi`, Open MPI through the `mpi` crate).
//!
//! Each rank owns a contiguous share of every layer in the lean pass's numbering: its
//! nibbles, its exits and its runs, in its own scratch folder. The ranks read the lower
//! layers from the database folder, which they must all see (one machine, or a shared
//! file system: the layers are written once and read by every rank). In every round of
//! propagation each rank un-sows its share of the frontier; parents in other shares are
//! sent in one all-to-all exchange per batch of the frontier (bulk-synchronous rounds),
//! and the rounds end together (a maximum over the ranks). At the end of a layer the
//! files' positions are dealt out to the ranks in segments of whole blocks: every rank
//! sends each segment's owner the positions of it that it settled (index, value and
//! round; each position settled in one rank only), the owner compresses the segment's
//! blocks as a single process would, and rank 0 writes the blocks in order. So the files
//! are the same, byte for byte, for any number of ranks, and no rank receives more than
//! its share of the settled positions (rank 0 besides the tables as they are on disk).
//! What a rank sends another, a batch of updates or a segment's settled positions, goes
//! sorted, delta-coded and compressed (`pack`): a few bytes an entry instead of 8.
//!
//! A rank that fails makes the caller abort the job ([`Cluster::abort`]); the layer being
//! built never reaches its final name, and running the same command again resumes at the
//! first missing layer (a partitioned build does not resume within a layer).

use crate::build::{BuildError, BuildObserver, BuildOptions, LayerReport};
use crate::solve::lean::Exchange;
use crate::store::varint;
use mpi::collective::SystemOperation;
use mpi::datatype::{Partition, PartitionMut};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Why the job could not start.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// Not started by `mpirun` (or `srun`).
    #[error("not started by an MPI launcher (mpirun or srun)")]
    NoLauncher,
    /// MPI did not start, or without the thread support the build needs.
    #[error("MPI could not start with serialized thread support")]
    Init,
}

/// This process's place in the MPI job.
pub struct Cluster {
    _universe: mpi::environment::Universe,
    world: SimpleCommunicator,
    sent: AtomicU64,
    received: AtomicU64,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("rank", &self.rank())
            .field("ranks", &self.ranks())
            .finish()
    }
}

// SAFETY: MPI is initialised with MPI_THREAD_SERIALIZED, and every call goes through the
// build driver, which runs on one thread at a time (worker threads never call MPI).
unsafe impl Sync for Cluster {}

impl Cluster {
    /// Joins the MPI job this process was started in.
    ///
    /// # Errors
    ///
    /// [`ClusterError::NoLauncher`] when no MPI launcher started this process (a clear
    /// error rather than a one-rank job), [`ClusterError::Init`] when MPI does not start.
    pub fn init() -> Result<Cluster, ClusterError> {
        let launched = [
            "OMPI_COMM_WORLD_SIZE",
            "PMI_SIZE",
            "PMIX_RANK",
            "SLURM_PROCID",
        ]
        .iter()
        .any(|v| std::env::var_os(v).is_some());
        if !launched {
            return Err(ClusterError::NoLauncher);
        }
        let (universe, threading) =
            mpi::initialize_with_threading(mpi::Threading::Serialized).ok_or(ClusterError::Init)?;
        if threading < mpi::Threading::Serialized {
            return Err(ClusterError::Init);
        }
        let world = universe.world();
        Ok(Cluster {
            _universe: universe,
            world,
            sent: AtomicU64::new(0),
            received: AtomicU64::new(0),
        })
    }

    /// This rank.
    pub fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    /// The ranks of the job.
    pub fn ranks(&self) -> usize {
        self.world.size() as usize
    }

    /// Stops every rank of the job with exit code `code` (after an error on this rank:
    /// the others would otherwise wait for it for ever).
    pub fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }

    /// Builds as [`crate::build::build`] does, with this rank's share of every layer (the
    /// lean pass for every layer). Every rank calls this with the same options; only rank
    /// 0's observer should show anything.
    ///
    /// # Errors
    ///
    /// As [`crate::build::build`]; an error on one rank leaves the others waiting: call
    /// [`Cluster::abort`].
    pub fn build(
        &self,
        opts: &BuildOptions,
        observer: &dyn BuildObserver,
    ) -> Result<Vec<LayerReport>, BuildError> {
        crate::build::build_partitioned(opts, observer, self)
    }

    fn count(&self, bytes: usize) {
        self.sent.fetch_add(bytes as u64, Relaxed);
    }

    fn count_received(&self, bytes: usize) {
        self.received.fetch_add(bytes as u64, Relaxed);
    }

    /// `x` reduced by `op` over the ranks, on every rank.
    fn all_reduce(&self, x: u64, op: SystemOperation) -> u64 {
        let mut out = 0u64;
        self.world.all_reduce_into(&x, &mut out, op);
        self.count(8);
        self.count_received(8);
        out
    }
}

/// The zstd level of what the ranks send each other: the fastest, since it runs between
/// the rounds' steps, on every batch.
const PACK_LEVEL: i32 = 1;

/// `entries` as sent to another rank: sorted (the receiver applies them in any order), as
/// the LEB128 varints of the differences from one to the next (sorted keys, indices and
/// bit fields of nearby positions differ little), compressed with zstd, after the length
/// of the varints (8 bytes, little-endian). Nothing at all for no entries.
fn pack(entries: &[u64]) -> Vec<u8> {
    if entries.is_empty() {
        return Vec::new();
    }
    let mut sorted = entries.to_vec();
    sorted.par_sort_unstable();
    let mut varints = Vec::with_capacity(3 * sorted.len());
    let mut last = 0u64;
    for &x in &sorted {
        varint::push(&mut varints, x - last);
        last = x;
    }
    let mut out = (varints.len() as u64).to_le_bytes().to_vec();
    out.extend(zstd::bulk::compress(&varints, PACK_LEVEL).expect("zstd compresses in memory"));
    out
}

/// The entries [`pack`] packed, sorted; None when `bytes` are not what it makes.
fn unpack(bytes: &[u8]) -> Option<Vec<u64>> {
    if bytes.is_empty() {
        return Some(Vec::new());
    }
    let (len, frame) = bytes.split_first_chunk::<8>()?;
    let len = usize::try_from(u64::from_le_bytes(*len)).ok()?;
    let varints = zstd::bulk::decompress(frame, len).ok()?;
    if varints.len() != len {
        return None;
    }
    let mut entries = Vec::with_capacity(len / 2);
    let (mut last, mut at) = (0u64, 0usize);
    while at < varints.len() {
        last = last.checked_add(varint::read(&varints, &mut at)?)?;
        entries.push(last);
    }
    Some(entries)
}

/// An empty buffer of bytes whose address is not 1: Open MPI reads the address 1 as
/// `MPI_IN_PLACE`, and an empty `Vec<u8>` that never allocated has that address.
fn buffer(mut bytes: Vec<u8>) -> Vec<u8> {
    bytes.reserve(1);
    bytes
}

/// Where each rank's part starts in a buffer of parts of `counts` entries, in rank order.
fn displacements(counts: &[i32]) -> Vec<i32> {
    counts
        .iter()
        .scan(0i32, |at, &n| {
            let d = *at;
            *at += n;
            Some(d)
        })
        .collect()
}

impl Exchange for Cluster {
    fn rank(&self) -> usize {
        Cluster::rank(self)
    }

    fn ranks(&self) -> usize {
        Cluster::ranks(self)
    }

    fn all_to_all(&self, send: &[Vec<u64>]) -> Vec<u64> {
        let rank = self.rank();
        let packed: Vec<Vec<u8>> = send
            .par_iter()
            .enumerate()
            .map(|(to, part)| if to == rank { Vec::new() } else { pack(part) })
            .collect();
        let parts: Vec<Vec<u64>> = self
            .all_to_all_bytes(packed)
            .into_par_iter()
            .enumerate()
            .map(|(from, bytes)| {
                if from == rank {
                    return send[rank].clone();
                }
                unpack(&bytes).unwrap_or_else(|| panic!("rank {from} sent a damaged batch"))
            })
            .collect();
        parts.concat()
    }

    fn all_to_all_bytes(&self, mut send: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        let (rank, ranks) = (self.rank(), self.ranks());
        // This rank's own part stays where it is.
        let own = std::mem::take(&mut send[rank]);
        let counts: Vec<i32> = send
            .iter()
            .map(|v| i32::try_from(v.len()).expect("a packed part under 2 GiB"))
            .collect();
        let mut recv_counts = vec![0i32; ranks];
        self.world
            .all_to_all_into(&counts[..], &mut recv_counts[..]);
        let flat = buffer(send.concat());
        drop(send);
        let total: usize = recv_counts.iter().map(|&c| c as usize).sum();
        let mut recv = buffer(vec![0u8; total]);
        let rd = displacements(&recv_counts);
        {
            let sd = displacements(&counts);
            let out = Partition::new(&flat[..], &counts[..], &sd[..]);
            let mut into = PartitionMut::new(&mut recv[..], &recv_counts[..], &rd[..]);
            self.world.all_to_all_varcount_into(&out, &mut into);
        }
        self.count(flat.len() + 4 * (ranks - 1));
        self.count_received(total + 4 * (ranks - 1));
        let mut own = Some(own);
        (0..ranks)
            .map(|from| {
                if from == rank {
                    return own.take().expect("once");
                }
                let at = rd[from] as usize;
                recv[at..at + recv_counts[from] as usize].to_vec()
            })
            .collect()
    }

    fn sum(&self, x: u64) -> u64 {
        self.all_reduce(x, SystemOperation::sum())
    }

    fn max(&self, x: u64) -> u64 {
        self.all_reduce(x, SystemOperation::max())
    }

    fn gather_bytes(&self, send: Vec<u8>) -> Vec<Vec<u8>> {
        let root = self.world.process_at_rank(0);
        let count = i32::try_from(send.len()).expect("a part of a table under 2 GiB");
        if self.rank() != 0 {
            root.gather_into(&count);
            root.gather_varcount_into(&buffer(send)[..]);
            self.count(4 + count as usize);
            return Vec::new();
        }
        let mut counts = vec![0i32; self.ranks()];
        root.gather_into_root(&count, &mut counts[..]);
        // Rank 0's own part stays where it is.
        counts[0] = 0;
        let displs = displacements(&counts);
        let total: usize = counts.iter().map(|&c| c as usize).sum();
        let mut all = buffer(vec![0u8; total]);
        {
            let mut into = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
            root.gather_varcount_into_root(&buffer(Vec::new())[..], &mut into);
        }
        self.count_received(total + 4 * (self.ranks() - 1));
        let mut parts = vec![send];
        parts.extend((1..self.ranks()).map(|from| {
            let at = displs[from] as usize;
            all[at..at + counts[from] as usize].to_vec()
        }));
        parts
    }

    fn bytes_sent(&self) -> u64 {
        self.sent.load(Relaxed)
    }

    fn bytes_received(&self) -> u64 {
        self.received.load(Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::{pack, unpack};

    #[test]
    fn packed_entries_unpack_sorted() {
        let mut entries: Vec<u64> = (0..10_000u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (i % 40))
            .chain([0, 0, u64::MAX, 1 << 63, 5, 5])
            .collect();
        let packed = pack(&entries);
        entries.sort_unstable();
        assert_eq!(unpack(&packed), Some(entries));
        assert_eq!(pack(&[]), Vec::<u8>::new());
        assert_eq!(unpack(&[]), Some(Vec::new()));
        assert_eq!(unpack(&packed[..packed.len() - 1]), None);
        assert_eq!(unpack(&[1, 2, 3]), None);
    }

    #[test]
    fn nearby_entries_pack_small() {
        let entries: Vec<u64> = (0..100_000u64).map(|i| 3 * i + i % 2).collect();
        assert!(pack(&entries).len() < entries.len() / 4);
    }
}
