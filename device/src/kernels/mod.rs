//! The built-in family's kernel code (nvptx64 only): the thread group's work and the
//! whole-GPU layouts (`step` and `persistent_entry`, which `crate::entries` instantiates
//! beside the batch layout's body).
//!
//! A *group* of `G` lanes of one warp serves one individual at a time (G from
//! [`crate::lanes::group_width`]); rows are stored individual-major with a padded stride
//! so that each lane moves its four components with one 16-byte load, and a group
//! reads a whole random row x_r in one coalesced request.
//!
//! Populations are double-buffered per individual: `flags[i]` says which of the two
//! buffers holds x_i. A trial is written to the other buffer (which nobody reads during
//! the generation) and the flag flips when the trial is accepted, so a generation needs
//! no copy of rejected trials and only one barrier between reading and updating.
//!
//! - `de_batch_*`: one block per population, all generations in one launch
//!   ([`crate::batch`]);
//! - `de_step_*`: one population over the whole grid, one launch per generation; the
//!   last block to finish a generation finds the new best ([`grid`]);
//! - `de_grid_*`: one population over the whole grid, every generation in one
//!   cooperative launch ([`grid`]).
//!
//! The parts: [`lane`] (a precision's lane operations, the thread group), [`trial`]
//! (settings, initialisation, trials, draws, evaluation), [`reduce`] (the best of a warp
//! and of a block), [`sync`] (shuffles, atomics, barriers, the control block's device
//! side) and [`grid`]; they share this module's imports.

use core::arch::asm;
use core::arch::nvptx::{_block_dim_x, _block_idx_x, _grid_dim_x, _syncthreads, _thread_idx_x};
use core::ptr::{read_volatile, write_volatile};

use crate::abi::{EvalParams, GRID_SLOT_STRIDE, GridParams, Run, StepParams};
use crate::control::{self, COMMAND, PROGRESS_HI, PROGRESS_LO, STOP};
use crate::de::{
    BoundPolicy, COMPONENT_SLOT, Crossover, Draws, RESAMPLE_SLOT, Strategy, TrialParams, accepts,
    best_key, better, block, first_exceeding, init_chunk, key_best, run_length, subsequence,
    trial_chunk,
};
use crate::functions::{Acc, BuiltinObjective, Formula, Function, LaneIn, lane_total};
use crate::lanes::{LaneObjective, MAX_GROUP, chunk, group_width, rounds, stride};
use crate::philox::{block_words, key_of};
use crate::real::Real;
use crate::variant::ThesisVariant;

mod grid;
mod lane;
mod reduce;
mod sync;
mod trial;

pub(crate) use grid::*;
pub use grid::{STATE_BEST, STATE_DONE, STATE_GEN, STATE_TICKET, STATE_WORDS};
pub use lane::LaneReal;
pub(crate) use lane::*;
pub(crate) use reduce::*;
pub(crate) use sync::*;
pub(crate) use trial::*;
