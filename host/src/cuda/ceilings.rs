//! The GPU's ceilings, measured on the device at hand: HBM bandwidth (a device-to-device
//! copy far larger than L2), L2 bandwidth (a copy that L2 holds, repeated), the
//! arithmetic issue rate (FMA chains, `gpude_device::ceiling`) and the time of one grid
//! barrier of the whole-GPU kernels. docs/PERFORMANCE.md puts them beside each benchmark
//! case's floor.

use super::engine::{CudaEngine, cuda_err};
use super::kernels::{GpuReal, Kernel};
use super::launch::{dev, push_params};
use crate::error::Error;
use crate::error::Result;
use cudarc::driver::{CudaStream, LaunchConfig};
use gpude_device::abi::{BarrierParams, CeilingParams, GRID_SYNC_WORDS};
use gpude_device::ceiling::CHAINS;
use serde::Serialize;
use std::time::Instant;

/// Measured ceilings; each the median of its repetitions.
#[derive(Clone, Debug, Serialize)]
pub struct Ceilings {
    /// Bytes read plus bytes written per second by a device-to-device copy of
    /// `hbm_bytes` (far beyond L2): the HBM ceiling.
    pub hbm_gb_per_s: f64,
    pub hbm_bytes: u64,
    /// The same for a copy of `l2_bytes` (source and destination fit in L2 together),
    /// repeated back to back.
    pub l2_gb_per_s: f64,
    pub l2_bytes: u64,
    /// Fused multiply-adds per second, all SMs, f32 and f64 (one FMA = 2 flops).
    pub fma_f32_per_s: f64,
    pub fma_f64_per_s: f64,
    /// Warp instructions per second that the f32 figure amounts to.
    pub warp_fma_f32_per_s: f64,
    /// Microseconds per grid barrier of the whole-GPU kernels (`kernels::grid_sync`,
    /// nothing else in the loop) over `grid_barrier_blocks` blocks of
    /// `grid_barrier_threads` threads: two per multiprocessor, the shape of the
    /// single-precision grid kernels at Np = 8192.
    pub grid_barrier_us: f64,
    pub grid_barrier_blocks: u32,
    pub grid_barrier_threads: u32,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

impl CudaEngine {
    /// Measures the ceilings (about a second of GPU time; 1 GiB of device memory).
    pub fn ceilings(&self) -> Result<Ceilings> {
        let stream = self.first_stream();
        let copy = |bytes: usize, reps: usize, rounds: usize| -> Result<f64> {
            let what = "measuring the copy ceiling";
            let src = stream
                .alloc_zeros::<u8>(bytes)
                .map_err(cuda_err(format!("{what}: allocating")))?;
            let mut dst = stream
                .alloc_zeros::<u8>(bytes)
                .map_err(cuda_err(format!("{what}: allocating")))?;
            let mut times = Vec::with_capacity(rounds);
            // One untimed copy first: pages and caches as in the timed ones.
            for round in 0..=rounds {
                stream.synchronize().map_err(cuda_err(what))?;
                let t0 = Instant::now();
                for _ in 0..reps {
                    stream
                        .memcpy_dtod(&src, &mut dst)
                        .map_err(cuda_err(format!("{what}: copying")))?;
                }
                stream.synchronize().map_err(cuda_err(what))?;
                if round > 0 {
                    times.push(t0.elapsed().as_secs_f64());
                }
            }
            Ok(2.0 * (bytes * reps) as f64 / median(times) / 1e9)
        };
        let hbm_bytes = 512usize << 20;
        let l2_bytes = 8usize << 20;
        let hbm = copy(hbm_bytes, 4, 5)?;
        let l2 = copy(l2_bytes, 200, 5)?;
        let fma32 = self.fma_rate::<f32>()?;
        let fma64 = self.fma_rate::<f64>()?;
        let (barrier, blocks, threads) = self.barrier_time()?;
        Ok(Ceilings {
            hbm_gb_per_s: hbm,
            hbm_bytes: hbm_bytes as u64,
            l2_gb_per_s: l2,
            l2_bytes: l2_bytes as u64,
            fma_f32_per_s: fma32,
            fma_f64_per_s: fma64,
            warp_fma_f32_per_s: fma32 / 32.0,
            grid_barrier_us: barrier * 1e6,
            grid_barrier_blocks: blocks,
            grid_barrier_threads: threads,
        })
    }

    /// Seconds per barrier of `ceiling_barrier_f32` over two blocks of 256 threads per
    /// multiprocessor, timed at two barrier counts (the difference drops the launch and
    /// the clearing of the barrier word), with the launch's shape. Every block must
    /// report every barrier passed.
    pub(super) fn barrier_time(&self) -> Result<(f64, u32, u32)> {
        let kernel = Kernel::CeilingBarrier;
        let name = &kernel.name();
        let func = self.function(kernel)?;
        let stream = self.first_stream();
        let threads = 256u32;
        let blocks = self
            .resident_blocks(&func, name, threads)?
            .min(2 * self.multiprocessors());
        let mut sync = stream
            .alloc_zeros::<u64>(GRID_SYNC_WORDS)
            .map_err(cuda_err(format!("{name}: allocating")))?;
        let out = stream
            .alloc_zeros::<f32>(blocks as usize)
            .map_err(cuda_err(format!("{name}: allocating")))?;
        let mut time = |iters: u32| -> Result<f64> {
            let t = median_of_rounds(&stream, name, || {
                stream
                    .memset_zeros(&mut sync)
                    .map_err(cuda_err(format!("{name}: clearing the barrier")))?;
                let params = BarrierParams::<f32> {
                    iters,
                    sync: dev(&sync, &stream),
                    out: dev(&out, &stream),
                };
                let mut b = stream.launch_builder(&func);
                push_params(&mut b, &params);
                // SAFETY: the parameters are the kernel's (checked against the PTX at
                // build time); `sync` is zeroed and `out` holds one value per block,
                // both alive until the stream is synchronised after the round; the
                // cooperative launch refuses blocks that cannot all be resident, which
                // the barrier needs.
                unsafe {
                    b.launch_cooperative(LaunchConfig {
                        grid_dim: (blocks, 1, 1),
                        block_dim: (threads, 1, 1),
                        shared_mem_bytes: 0,
                    })
                }
                .map_err(cuda_err(format!("{name}: launching (cooperative)")))?;
                Ok(())
            })?;
            let passed = stream
                .clone_dtoh(&out)
                .map_err(cuda_err(format!("{name}: reading")))?;
            if let Some(p) = passed.iter().find(|&&p| p != iters as f32) {
                return Err(Error::Cuda {
                    context: name.to_string(),
                    message: format!("a block passed {p} of {iters} barriers"),
                });
            }
            Ok(t)
        };
        let (short, long) = (1_000u32, 11_000u32);
        let dt = time(long)? - time(short)?;
        Ok((dt.max(1e-12) / f64::from(long - short), blocks, threads))
    }

    /// FMAs per second of the `ceiling_fma_*` kernel over a grid of 8 blocks of 256
    /// threads per SM, timed at two iteration counts (the difference drops the launch).
    pub(super) fn fma_rate<T: GpuReal>(&self) -> Result<f64> {
        let kernel = Kernel::CeilingFma(T::KERNEL);
        let name = kernel.name();
        let func = self.function(kernel)?;
        let stream = self.first_stream();
        let threads = 256u32;
        let blocks = self.multiprocessors() * 8;
        let n = (threads * blocks) as usize;
        let out = stream
            .alloc_zeros::<T>(n)
            .map_err(cuda_err(format!("{name}: allocating")))?;
        let time = |iters: u32| -> Result<f64> {
            let params = CeilingParams::<T> {
                iters,
                seed: T::ONE,
                out: dev(&out, &stream),
            };
            median_of_rounds(&stream, &name, || {
                let mut b = stream.launch_builder(&func);
                push_params(&mut b, &params);
                // SAFETY: the parameters are the kernel's (checked against the PTX at
                // build time); `out` holds one value per thread of the grid and lives
                // until the stream is synchronised after the round.
                unsafe {
                    b.launch(LaunchConfig {
                        grid_dim: (blocks, 1, 1),
                        block_dim: (threads, 1, 1),
                        shared_mem_bytes: 0,
                    })
                }
                .map_err(cuda_err(format!("{name}: launching")))?;
                Ok(())
            })
        };
        let (short, long) = (1u32 << 12, 1u32 << 15);
        let dt = time(long)? - time(short)?;
        Ok(n as f64 * f64::from(CHAINS) * f64::from(long - short) / dt.max(1e-9))
    }
}

/// The median wall time of five rounds of `round` (after one untimed round), each on an
/// idle stream and waited for.
fn median_of_rounds(
    stream: &CudaStream,
    name: &str,
    mut round: impl FnMut() -> Result<()>,
) -> Result<f64> {
    let mut times = Vec::with_capacity(5);
    for r in 0..=5 {
        stream.synchronize().map_err(cuda_err(name))?;
        let t0 = Instant::now();
        round()?;
        stream
            .synchronize()
            .map_err(cuda_err(format!("{name}: running")))?;
        if r > 0 {
            times.push(t0.elapsed().as_secs_f64());
        }
    }
    Ok(median(times))
}
