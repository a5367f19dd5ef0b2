//! The choice between the batch kernels that read the population from global memory,
//! the shared-memory-resident ones (`de_batch_*_shared`, `gpude_device::resident`) and
//! the pipelined ones (`de_batch_*_pipelined`, `gpude_device::pipelined`), and the launch
//! shapes of the last two.

use super::batch_kernel::BatchKernel;
use super::engine::{CudaEngine, cuda_err};
use super::external::check_objective;
use super::kernels::{GpuReal, de_kernel};
use crate::error::{Error, Result};
use crate::job::config::Job;
use crate::run::result::RunLayout;
use cudarc::driver::CudaFunction;
use cudarc::driver::sys::CUfunction_attribute_enum;
use gpude_device::lanes::{group_width, rounds};
use gpude_device::pipelined::pipelined_bytes;
use gpude_device::registry::{Layout, PIPELINED_CC};
use gpude_device::resident::{MAX_PASSES, resident_bytes, spare_rows};

/// The answer of a plan that cannot serve a job: with `forced` (the engine's choice
/// names the `kernel`), an error that says why; else `None`, the global-memory kernel.
fn refusal(forced: bool, kernel: &'static str) -> impl Fn(String) -> Result<Option<ResidentPlan>> {
    move |why| {
        if forced {
            Err(Error::invalid("batch kernel", kernel, why))
        } else {
            Ok(None)
        }
    }
}

/// What the driver reserves per resident block on sm_80 and later (bytes).
const RESERVED_PER_BLOCK: u32 = 1024;

/// A resident or pipelined kernel ready for a batch launch.
pub(crate) struct ResidentPlan {
    pub(crate) name: String,
    pub(crate) func: CudaFunction,
    pub(crate) threads: u32,
    /// Dynamic shared memory of each block (bytes).
    pub(crate) bytes: u32,
    /// [`RunLayout::BatchResident`] or [`RunLayout::BatchPipelined`].
    pub(crate) layout: RunLayout,
}

impl CudaEngine {
    /// The static shared memory of `func` and the dynamic shared memory its blocks may
    /// have beside it (the device's opt-in limit less the static part), in bytes; every
    /// launch of `func` is allowed that much. The attribute is the function's (shared by
    /// every launch of it): its largest value, so that launches of other sizes from other
    /// threads stay valid.
    pub(super) fn allow_dynamic_shared(
        &self,
        func: &CudaFunction,
        name: &str,
    ) -> Result<(u32, u32)> {
        let err = |what: &str| cuda_err(format!("{name}: {what}"));
        let fixed = func
            .get_attribute(CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
            .map_err(err("querying its static shared memory"))? as u32;
        let limit = self.shared_limits.per_block_optin.saturating_sub(fixed);
        func.set_attribute(
            CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            limit as i32,
        )
        .map_err(err("setting its dynamic shared memory limit"))?;
        Ok((fixed, limit))
    }

    /// The engine's choice of batch kernel (see [`BatchKernel`]); from
    /// `GPUDE_BATCH_KERNEL` when the engine opened, auto without it.
    pub fn batch_kernel(&self) -> BatchKernel {
        *self.batch_kernel.lock().expect("batch kernel lock")
    }

    /// Sets the choice of batch kernel for the launches that follow.
    pub fn set_batch_kernel(&self, k: BatchKernel) {
        *self.batch_kernel.lock().expect("batch kernel lock") = k;
    }

    /// The most spare rows (where accepted trials wait) a resident block gets; `None`
    /// for as many as fit (the default, or `GPUDE_SHARED_SPARE`). Fewer spare rows
    /// leave more of the multiprocessor's unified L1 and shared memory to the L1 cache
    /// (the kernels' spilled registers), and send more waiting trials through L2.
    pub fn spare_rows_cap(&self) -> Option<u32> {
        *self.spare_cap.lock().expect("spare cap lock")
    }

    /// Sets [`CudaEngine::spare_rows_cap`] for the launches that follow.
    pub fn set_spare_rows_cap(&self, cap: Option<u32>) {
        *self.spare_cap.lock().expect("spare cap lock") = cap;
    }

    /// The kernel a batch launch of `job` runs under the engine's choice, and its
    /// dynamic shared memory in bytes (0 for the global-memory kernel). Loads the
    /// kernel's module.
    pub fn batch_kernel_for(&self, job: &Job) -> Result<(String, u32)> {
        if job.adaptive().is_some() {
            return Err(Error::invalid(
                "strategy",
                crate::job::config::strategy_name(job.strategy()),
                "a classic strategy or thesis: the adaptive strategies run in kernels of their own",
            ));
        }
        job.check()?;
        check_objective(job)?;
        let plan = match job.precision() {
            crate::job::precision::Precision::F32 => self.batch_plan::<f32>(job, false)?,
            crate::job::precision::Precision::F64 => self.batch_plan::<f64>(job, false)?,
        };
        Ok(match plan {
            Some(p) => (p.name, p.bytes),
            None => match job.precision() {
                crate::job::precision::Precision::F32 => {
                    (de_kernel::<f32>(Layout::Batch, job).name(), 0)
                }
                crate::job::precision::Precision::F64 => {
                    (de_kernel::<f64>(Layout::Batch, job).name(), 0)
                }
            },
        })
    }

    /// The resident or pipelined kernel for a batch launch of `job` under the
    /// engine's choice, or `None` for the global-memory kernel: auto takes the resident
    /// one where it can serve the job ([`CudaEngine::resident_plan`]), else in single
    /// precision the pipelined one where it can ([`CudaEngine::pipelined_plan`]); shared
    /// and pipelined take theirs or refuse the job with the reason.
    ///
    /// Auto's choice follows the measurements of docs/PERFORMANCE.md (version 17, H100):
    /// the pipelined kernel took 0.83–0.95 of the global-memory kernel's time on every
    /// single-precision batch of many populations, 1.02 on one population of 2 048 in
    /// one block, and 1.05 in double precision, where auto leaves it. With `controlled`,
    /// for a launch under a control block: the kernels' controlled entry points.
    pub(crate) fn batch_plan<T: GpuReal>(
        &self,
        job: &Job,
        controlled: bool,
    ) -> Result<Option<ResidentPlan>> {
        match self.batch_kernel() {
            BatchKernel::Global => Ok(None),
            BatchKernel::Auto => match self.resident_plan::<T>(job, false, controlled)? {
                Some(plan) => Ok(Some(plan)),
                None if std::mem::size_of::<T>() == 4 => {
                    self.pipelined_plan::<T>(job, false, controlled)
                }
                None => Ok(None),
            },
            BatchKernel::Shared => self.resident_plan::<T>(job, true, controlled),
            BatchKernel::Pipelined => self.pipelined_plan::<T>(job, true, controlled),
        }
    }

    /// The resident kernel for a batch launch of `job`, or `None` for the
    /// global-memory kernel: it serves the job when the family has one, the population
    /// fits in a block's shared memory (the device's opt-in limit, read at run time)
    /// and a thread group serves at most [`MAX_PASSES`] individuals; with `forced`, a
    /// job that fails one of these is refused.
    ///
    /// The block gets the population, and as many spare rows for the accepted trials
    /// (up to one per individual) as fit without lowering the blocks a multiprocessor
    /// holds for its threads; the trials of the other individuals wait in global memory.
    pub(super) fn resident_plan<T: GpuReal>(
        &self,
        job: &Job,
        forced: bool,
        controlled: bool,
    ) -> Result<Option<ResidentPlan>> {
        let refuse = refusal(forced, "shared");
        let layout = if controlled {
            Layout::BatchSharedControlled
        } else {
            Layout::BatchShared
        };
        let kernel = de_kernel::<T>(layout, job);
        let name = kernel.name();
        if !self.kernels.contains_key(name.as_str()) {
            return refuse(format!(
                "a job with a shared-memory kernel (the built-in functions in the classic \
                 and thesis families; there is no {name}); use auto or global"
            ));
        }
        let (np, dim) = (job.pop(), job.dim());
        let rb = std::mem::size_of::<T>() as u32;
        let need = resident_bytes(np, dim, 0, rb);
        let limits = self.shared_limits;
        if need > limits.per_block_optin as u64 {
            return refuse(format!(
                "a population that fits in a block's shared memory: Np = {np} at D = {dim} \
                 in {} needs {need} bytes, this GPU allows {} per block; use auto or global",
                T::NAME,
                limits.per_block_optin
            ));
        }
        let func = self.job_function::<T>(kernel, job)?;
        let err = |what: &str| cuda_err(format!("{name}: {what}"));
        let (fixed, limit) = self.allow_dynamic_shared(&func, &name)?;
        if need > limit as u64 {
            return refuse(format!(
                "a population that fits in a block's shared memory: Np = {np} at D = {dim} \
                 needs {need} bytes beside the kernel's {fixed}, this GPU allows {} per \
                 block; use auto or global",
                limits.per_block_optin
            ));
        }
        let g = group_width(dim);
        let threads = self
            .max_threads(&func, &name)?
            .min(((np * g).div_ceil(32) * 32).max(32));
        let passes = np.div_ceil(threads / g);
        if passes > MAX_PASSES {
            return refuse(format!(
                "at most {MAX_PASSES} individuals per thread group: Np = {np} at D = {dim} \
                 gives {passes} on blocks of {threads} threads; use auto or global"
            ));
        }
        // Spare rows up to the share of the multiprocessor's shared memory that leaves
        // it as many blocks as its threads and registers allow (never fewer rows than
        // none).
        self.ctx
            .bind_to_thread()
            .map_err(err("making the context current"))?;
        let blocks = func
            .occupancy_max_active_blocks_per_multiprocessor(threads, 0, None)
            .map_err(err("querying its occupancy"))?
            .max(1);
        let share = (limits.per_sm / blocks).saturating_sub(RESERVED_PER_BLOCK + fixed);
        // Spare rows only while the blocks' shared memory leaves L1 at least half of the
        // multiprocessor's (L1 and shared memory share it): the kernels' spills live in
        // L1. On an H100, 528 × 256 at D = 128 (130 KB of rows) ran 117.8 µs/gen with
        // no spare rows against 130.8 with 193 (docs/PERFORMANCE.md).
        let l1_room = (limits.per_sm / 2 / blocks).saturating_sub(RESERVED_PER_BLOCK + fixed);
        let budget = (share.min(limit).min(l1_room) as u64).max(need);
        let mut spare = spare_rows(budget, np, dim, rb).unwrap_or(0);
        if let Some(cap) = self.spare_rows_cap() {
            spare = spare.min(cap);
        }
        let bytes = resident_bytes(np, dim, spare, rb) as u32;
        Ok(Some(ResidentPlan {
            name,
            func,
            threads,
            bytes,
            layout: RunLayout::BatchResident,
        }))
    }

    /// The pipelined kernel for a batch launch of `job` (see
    /// [`BatchKernel::Pipelined`]), or `None` for the global-memory kernel when it cannot
    /// serve the job: a family without one, rows of more than one round (D > 128), a GPU
    /// older than sm_80, or a strategy's staging that does not fit in a block's shared
    /// memory; with `forced`, such a job is refused with the reason.
    ///
    /// The block has the global-memory kernel's threads (registers permitting), fewer
    /// where its stages would not fit: two stages of x_i and the drawn rows, one
    /// 4-value chunk per thread each.
    pub(super) fn pipelined_plan<T: GpuReal>(
        &self,
        job: &Job,
        forced: bool,
        controlled: bool,
    ) -> Result<Option<ResidentPlan>> {
        let refuse = refusal(forced, "pipelined");
        let layout = if controlled {
            Layout::BatchPipelinedControlled
        } else {
            Layout::BatchPipelined
        };
        let kernel = de_kernel::<T>(layout, job);
        let name = kernel.name();
        if !self.kernels.contains_key(name.as_str()) {
            return refuse(format!(
                "a job with a pipelined kernel (the built-in functions in the classic and \
                 thesis families; there is no {name}); use auto or global"
            ));
        }
        let dim = job.dim();
        if rounds(dim) != 1 {
            return refuse(format!(
                "rows that a thread group covers in one round (D ≤ 128): D = {dim}; use auto \
                 or global"
            ));
        }
        let (major, minor) = self.capability;
        let cc = (major.max(0) * 10 + minor.max(0)) as u32;
        if cc < PIPELINED_CC {
            return refuse(format!(
                "a GPU of compute capability {}.{} or later (cp.async): this one is \
                 {major}.{minor}; use auto or global",
                PIPELINED_CC / 10,
                PIPELINED_CC % 10
            ));
        }
        let func = self.job_function::<T>(kernel, job)?;
        let (_, limit) = self.allow_dynamic_shared(&func, &name)?;
        let rb = std::mem::size_of::<T>() as u32;
        let draws = job.strategy().draws();
        let per_warp = pipelined_bytes(32, draws, rb);
        let fit = (limit as u64 / per_warp) as u32 * 32;
        let g = group_width(dim);
        let threads = self
            .max_threads(&func, &name)?
            .min(((job.pop() * g).div_ceil(32) * 32).max(32))
            .min(fit);
        if threads < 32 {
            return refuse(format!(
                "staging that fits in a block's shared memory: a warp needs {per_warp} bytes, \
                 this GPU allows {limit} per block; use auto or global"
            ));
        }
        let bytes = pipelined_bytes(threads, draws, rb) as u32;
        Ok(Some(ResidentPlan {
            name,
            func,
            threads,
            bytes,
            layout: RunLayout::BatchPipelined,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_counts_rows_values_and_scratch() {
        // Np = 256 at D = 128 in f32: 128 KiB of rows, 2 KiB of values, the scratch.
        assert_eq!(
            resident_bytes(256, 128, 0, 4),
            256 * 512 + 2 * 1024 + 128 + 128
        );
        let full = resident_bytes(256, 128, 256, 4);
        assert_eq!(spare_rows(full, 256, 128, 4), Some(256));
        assert_eq!(spare_rows(full - 1, 256, 128, 4), Some(255));
        assert_eq!(spare_rows(full + 10_000, 256, 128, 4), Some(256));
        let none = resident_bytes(256, 128, 0, 4);
        assert_eq!(spare_rows(none, 256, 128, 4), Some(0));
        assert_eq!(spare_rows(none - 1, 256, 128, 4), None);
        // D = 30 rows are padded to 32 values.
        assert_eq!(
            resident_bytes(300, 30, 1, 8),
            8 * (32 * 301 + 600 + 32) + 128
        );
    }
}
