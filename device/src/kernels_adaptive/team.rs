//! The threads that run one adaptive run together: a block ([`BlockTeam`]) or the whole
//! grid of a cooperative launch ([`GridTeam`]).

use core::arch::nvptx::{_block_dim_x, _block_idx_x, _grid_dim_x, _syncthreads, _thread_idx_x};

use crate::kernels::grid_sync;

/// The threads that run one run together: which run, this thread's index among them
/// and their count, and their barrier.
pub(crate) trait Team {
    /// The run's index (its part of every per-run buffer).
    fn run(&self) -> usize;
    /// This thread's index in the team (thread 0 does the serial parts).
    fn tid(&self) -> usize;
    /// The team's thread count (the stride of the parallel loops).
    fn threads(&self) -> usize;
    /// Every thread of the team waits for all; what any of them wrote to global memory
    /// before it, all of them see after it.
    ///
    /// # Safety
    /// Every thread of the team reaches each call, the same number of times.
    unsafe fn barrier(&mut self);
}

/// A block per run (`bar.sync`).
pub(crate) struct BlockTeam {
    run: usize,
    tid: usize,
    threads: usize,
}

impl BlockTeam {
    #[inline(always)]
    pub(crate) fn here() -> Self {
        // SAFETY: reading the special registers has no precondition.
        unsafe {
            BlockTeam {
                run: _block_idx_x() as usize,
                tid: _thread_idx_x() as usize,
                threads: _block_dim_x() as usize,
            }
        }
    }
}

impl Team for BlockTeam {
    #[inline(always)]
    fn run(&self) -> usize {
        self.run
    }
    #[inline(always)]
    fn tid(&self) -> usize {
        self.tid
    }
    #[inline(always)]
    fn threads(&self) -> usize {
        self.threads
    }
    #[inline(always)]
    unsafe fn barrier(&mut self) {
        // SAFETY: the caller's contract: every thread of the block reaches it.
        unsafe { _syncthreads() }
    }
}

/// The whole grid of a cooperative launch for run 0 ([`grid_sync`] on the counter
/// `sync`).
pub(crate) struct GridTeam {
    tid: usize,
    threads: usize,
    sync: *mut u64,
    blocks: u32,
    epoch: u64,
}

impl GridTeam {
    #[inline(always)]
    pub(crate) fn here(sync: *mut u64) -> Self {
        // SAFETY: reading the special registers has no precondition.
        unsafe {
            let (b, t, nt, nb) = (
                _block_idx_x(),
                _thread_idx_x(),
                _block_dim_x(),
                _grid_dim_x(),
            );
            GridTeam {
                tid: b as usize * nt as usize + t as usize,
                threads: nb as usize * nt as usize,
                sync,
                blocks: nb,
                epoch: 0,
            }
        }
    }
}

impl Team for GridTeam {
    #[inline(always)]
    fn run(&self) -> usize {
        0
    }
    #[inline(always)]
    fn tid(&self) -> usize {
        self.tid
    }
    #[inline(always)]
    fn threads(&self) -> usize {
        self.threads
    }
    #[inline(always)]
    unsafe fn barrier(&mut self) {
        // SAFETY: the caller's contract (every thread of the grid reaches it), and the
        // grid kernels' (a cooperative launch of `blocks` blocks, `sync` a zeroed word).
        unsafe { grid_sync(self.sync, self.blocks, &mut self.epoch) }
    }
}
