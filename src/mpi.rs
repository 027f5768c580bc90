//! `awari build --mpi`: the lean pass partitioned over the ranks of an MPI job (feature
//! `mpi`, Open MPI through the `mpi` crate).
//!
//! Each rank owns a contiguous share of every layer in the lean pass's numbering: its
//! nibbles, its exits and its runs, in its own scratch folder. The ranks read the lower
//! layers from the database folder, which they must all see (one machine, or a shared
//! file system: the layers are written once and read by every rank). In every round of
//! propagation each rank un-sows its share of the frontier; parents in other shares are
//! sent in one all-to-all exchange per batch of the frontier (bulk-synchronous rounds),
//! and the rounds end together (a maximum over the ranks). At the end of a
//! layer, range by range, every rank sends rank 0 the positions of the range it settled
//! (index, value and round in 8 bytes; each position settled in one rank only) and rank 0
//! writes the files, as a single process does. So the files are the same, byte for byte,
//! for any number of ranks.
//!
//! A rank that fails makes the caller abort the job ([`Cluster::abort`]); the layer being
//! built never reaches its final name, and running the same command again resumes at the
//! first missing layer (a partitioned build does not resume within a layer).

use crate::build::{BuildError, BuildObserver, BuildOptions, LayerReport};
use crate::solve::lean::Exchange;
use mpi::collective::SystemOperation;
use mpi::datatype::{Partition, PartitionMut};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
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

    /// `x` reduced by `op` over the ranks, on every rank.
    fn all_reduce(&self, x: u64, op: SystemOperation) -> u64 {
        let mut out = 0u64;
        self.world.all_reduce_into(&x, &mut out, op);
        self.count(8);
        out
    }
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
        let ranks = self.ranks();
        let counts: Vec<i32> = send
            .iter()
            .map(|v| i32::try_from(v.len()).expect("a batch under 2^31 entries"))
            .collect();
        let mut recv_counts = vec![0i32; ranks];
        self.world
            .all_to_all_into(&counts[..], &mut recv_counts[..]);
        let flat = send.concat();
        let total: usize = recv_counts.iter().map(|&c| c as usize).sum();
        let mut recv = vec![0u64; total];
        {
            let (sd, rd) = (displacements(&counts), displacements(&recv_counts));
            let out = Partition::new(&flat[..], &counts[..], &sd[..]);
            let mut into = PartitionMut::new(&mut recv[..], &recv_counts[..], &rd[..]);
            self.world.all_to_all_varcount_into(&out, &mut into);
        }
        let own = send[self.rank()].len();
        self.count(8 * (flat.len() - own) + 4 * (ranks - 1));
        recv
    }

    fn sum(&self, x: u64) -> u64 {
        self.all_reduce(x, SystemOperation::sum())
    }

    fn max(&self, x: u64) -> u64 {
        self.all_reduce(x, SystemOperation::max())
    }

    fn gather_to_root(&self, send: &[u64]) -> Vec<u64> {
        let root = self.world.process_at_rank(0);
        let count = i32::try_from(send.len()).expect("a range under 2^31 entries");
        if self.rank() == 0 {
            let mut counts = vec![0i32; self.ranks()];
            root.gather_into_root(&count, &mut counts[..]);
            let displs = displacements(&counts);
            let total: usize = counts.iter().map(|&c| c as usize).sum();
            let mut all = vec![0u64; total];
            {
                let mut into = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
                root.gather_varcount_into_root(send, &mut into);
            }
            all
        } else {
            root.gather_into(&count);
            root.gather_varcount_into(send);
            self.count(4 + 8 * send.len());
            Vec::new()
        }
    }

    fn bytes_sent(&self) -> u64 {
        self.sent.load(Relaxed)
    }
}
