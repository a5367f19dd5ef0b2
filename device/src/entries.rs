//! Every kernel entry point of the PTX module (`#[unsafe(no_mangle)] extern
//! "ptx-kernel"`), apart from the algorithms they run (nvptx64 only).
//!
//! An entry point takes its family's parameters as the field list of its struct in
//! [`crate::abi`] gives them, rebuilds the struct and calls a body: the batch layout's
//! one body ([`crate::batch`]) with the rows and control of its family, the whole-GPU
//! bodies of [`crate::kernels`] (`step`, `persistent`), the adaptive body
//! ([`crate::kernels_adaptive`]), the host-callback phases ([`crate::callback`]) or the
//! ceilings' ([`crate::ceiling`]). The names are [`crate::registry`]'s; the build script
//! checks that the PTX defines every one with its struct's parameters.
//!
//! The DE families take the same parameters and share [`de_kernels!`]: a family is a
//! module with the bodies `batch_plain`, `batch_controlled`, `step` and
//! `persistent_entry`: the built-in functions (`kernels`), an objective linked in whole
//! (`external`) or in separable form (`kernels_separable`).

use core::arch::nvptx::{_block_dim_x, _block_idx_x, _grid_dim_x, _thread_idx_x};
use core::slice::from_raw_parts;

use crate::abi::{
    AdaptiveParams, AdaptiveRun, BarrierParams, BatchParams, CeilingParams, EvalParams,
    GeneticParams, GridParams, MigrateParams, Run, StepParams, SwarmParams,
};
use crate::cec2017;
use crate::de::{BoundPolicy, Strategy};
use crate::external;
use crate::functions::{Formula, Function};
use crate::kernels::Setup;
use crate::kernels_adaptive as ka;
use crate::kernels_separable as separable;
use crate::separable::SepFlags;

// The DE kernels of the built-in functions.

/// The built-in family's four bodies: the batch layout's body with rows in global memory
/// and the objective in the lanes ([`crate::batch::Lanes`]), and the whole-GPU bodies of
/// [`crate::kernels`].
mod builtin {
    use crate::abi::BatchParams;
    use crate::batch::{ControlledFromBuffers, Lanes, Plain, batch};
    use crate::kernels::{LaneReal, Setup};
    pub(crate) use crate::kernels::{persistent_entry, step};

    /// The plain batch entry points' code: the one batch body ([`crate::batch`]) with rows
    /// in global memory and the objective in the lanes.
    ///
    /// # Safety
    /// As [`batch`].
    #[inline(always)]
    pub(crate) unsafe fn batch_plain<T: LaneReal>(s: Setup<T>, p: BatchParams<T>) {
        // SAFETY: forwarded.
        unsafe { batch::<T, _, Lanes<T>, Plain>(s, p) }
    }

    /// The controlled batch entry points' code (`…_ctl`): as [`batch_plain`], under the
    /// control block `p.ctl`.
    ///
    /// # Safety
    /// As [`batch`].
    #[inline(always)]
    pub(crate) unsafe fn batch_controlled<T: LaneReal>(s: Setup<T>, p: BatchParams<T>) {
        // SAFETY: forwarded.
        unsafe { batch::<T, _, Lanes<T>, ControlledFromBuffers>(s, p) }
    }
}

/// Defines the entry point `$name` of the DE kernel `$body` for function `$func`: its
/// parameters are the fields of its parameter struct, as the field list gives them
/// (see [`crate::abi`]); it rebuilds the struct and passes it on.
macro_rules! de_entry {
    ($(#[$doc:meta])* $name:ident, $body:path, $func:expr, $thesis:expr, $variants:expr;
     $params:ident<$t:ty> { $($f:ident: $ty:ty,)* }) => {
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name($($f: $ty),*) {
            let p = $params::<$t> { $($f),* };
            let Run {
                strategy,
                crossover,
                bounds,
                formula,
                dim,
                np,
                f,
                cr,
                variant,
                ..
            } = p.run;
            // The thesis variants fix the strategy (and init-only bounds) at compile time.
            let (strategy, bounds) = if $thesis {
                (Strategy::Thesis as u32, BoundPolicy::InitOnly as u32)
            } else {
                (strategy, bounds)
            };
            let s = Setup::<$t>::new(
                $func as u32,
                formula,
                strategy,
                crossover,
                bounds,
                dim,
                np,
                f,
                cr,
                // Only the thesis-variant family reads the variant: the other kernels
                // keep the default's code (and its registers).
                if $variants { variant } else { 0 },
            );
            // SAFETY: forwarded from this kernel's contract.
            unsafe { $body(s, p) }
        }
    };
}

macro_rules! de_kernels {
    ($fam:ident; $t:ty, $func:expr, $thesis:expr, $variants:expr, $batch:ident, $batch_ctl:ident,
        $step:ident, $grid:ident) => {
        crate::batch_params!(
            de_entry!(
                /// One block per population; see [`batch`].
                ///
                /// # Safety
                /// Launched by the host with buffers sized as [`BatchParams`] says.
                $batch,
                $fam::batch_plain,
                $func,
                $thesis,
                $variants
            ),
            $t
        );
        crate::batch_params!(
            de_entry!(
                /// One block per population under a control block; see [`batch`].
                ///
                /// # Safety
                /// Launched by the host with buffers sized as [`BatchParams`] says and
                /// `ctl` a mapped control block of one slot per block.
                $batch_ctl,
                $fam::batch_controlled,
                $func,
                $thesis,
                $variants
            ),
            $t
        );
        crate::step_params!(
            de_entry!(
                /// One generation (or the initialisation) of a grid-wide population; see
                /// [`step`].
                ///
                /// # Safety
                /// Launched by the host with buffers sized as [`StepParams`] says.
                $step,
                $fam::step,
                $func,
                $thesis,
                $variants
            ),
            $t
        );
        crate::grid_params!(
            de_entry!(
                /// A whole run of one grid-wide population in one cooperative launch; see
                /// [`persistent`].
                ///
                /// # Safety
                /// Launched cooperatively by the host with buffers sized as [`GridParams`]
                /// says.
                $grid,
                $fam::persistent_entry,
                $func,
                $thesis,
                $variants
            ),
            $t
        );
    };
}

/// Every kernel of the registry's functions ([`crate::registry`]): per function and
/// precision, the classic, the thesis and the thesis-variant family's batch, step and
/// grid kernels, named as [`crate::registry::KernelKey`] names them (the build script
/// checks the names).
macro_rules! all_kernels {
    ($($(#[$doc:meta])* $variant:ident = $num:literal, $key:ident, $name:literal,
        $formula:literal, ($lo:expr, $hi:expr), $argmin:expr, $min:expr, $min_dim:literal;)*) => {
        $(
            de_kernels!(builtin; f32, Function::$variant, false, false, ${concat(de_batch_f32_, $key)},
                ${concat(de_batch_f32_, $key, _ctl)},
                ${concat(de_step_f32_, $key)}, ${concat(de_grid_f32_, $key)});
            de_kernels!(builtin; f32, Function::$variant, true, false, ${concat(de_batch_f32_, $key, _thesis)},
                ${concat(de_batch_f32_, $key, _thesis_ctl)},
                ${concat(de_step_f32_, $key, _thesis)}, ${concat(de_grid_f32_, $key, _thesis)});
            de_kernels!(builtin; f32, Function::$variant, true, true,
                ${concat(de_batch_f32_, $key, _thesis_variant)},
                ${concat(de_batch_f32_, $key, _thesis_variant_ctl)},
                ${concat(de_step_f32_, $key, _thesis_variant)},
                ${concat(de_grid_f32_, $key, _thesis_variant)});
            de_kernels!(builtin; f64, Function::$variant, false, false, ${concat(de_batch_f64_, $key)},
                ${concat(de_batch_f64_, $key, _ctl)},
                ${concat(de_step_f64_, $key)}, ${concat(de_grid_f64_, $key)});
            de_kernels!(builtin; f64, Function::$variant, true, false, ${concat(de_batch_f64_, $key, _thesis)},
                ${concat(de_batch_f64_, $key, _thesis_ctl)},
                ${concat(de_step_f64_, $key, _thesis)}, ${concat(de_grid_f64_, $key, _thesis)});
            de_kernels!(builtin; f64, Function::$variant, true, true,
                ${concat(de_batch_f64_, $key, _thesis_variant)},
                ${concat(de_batch_f64_, $key, _thesis_variant_ctl)},
                ${concat(de_step_f64_, $key, _thesis_variant)},
                ${concat(de_grid_f64_, $key, _thesis_variant)});
        )*
    };
}

crate::builtin_functions!(all_kernels);

/// Defines an evaluation entry point from [`EvalParams`]' field list.
macro_rules! eval_entry {
    ($(#[$doc:meta])* $name:ident; $params:ident<$t:ty> { $($f:ident: $ty:ty,)* }) => {
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name($($f: $ty),*) {
            // SAFETY: forwarded.
            unsafe { crate::kernels::evaluate_rows($params::<$t> { $($f),* }) }
        }
    };
}

crate::eval_params!(
    eval_entry!(
        /// Evaluates `n` row-major vectors (stride [`stride`]) into `out`; one group per
        /// vector.
        ///
        /// # Safety
        /// `x` holds `n · stride(dim)` values, `out` `n` (see [`EvalParams`]).
        evaluate_f32
    ),
    f32
);
crate::eval_params!(
    eval_entry!(
        /// As `evaluate_f32`, in double precision.
        ///
        /// # Safety
        /// As `evaluate_f32`.
        evaluate_f64
    ),
    f64
);

// The DE kernels of an objective linked in whole (`external.rs`): the built-in family's
// parameters, its function code unused.

// The entry points, by the built-in family's macro (its `batch`, `step` and `persistent`
// are this module's), named as `crate::registry::for_each_external_key` names them (the
// build script checks). The function code is unused: the objective is the linked one.
de_kernels!(
    external;
    f32,
    Function::Sphere,
    false,
    false,
    de_batch_f32_external,
    de_batch_f32_external_ctl,
    de_step_f32_external,
    de_grid_f32_external
);
de_kernels!(
    external;
    f32,
    Function::Sphere,
    true,
    false,
    de_batch_f32_external_thesis,
    de_batch_f32_external_thesis_ctl,
    de_step_f32_external_thesis,
    de_grid_f32_external_thesis
);
de_kernels!(
    external;
    f32,
    Function::Sphere,
    true,
    true,
    de_batch_f32_external_thesis_variant,
    de_batch_f32_external_thesis_variant_ctl,
    de_step_f32_external_thesis_variant,
    de_grid_f32_external_thesis_variant
);
de_kernels!(
    external;
    f64,
    Function::Sphere,
    false,
    false,
    de_batch_f64_external,
    de_batch_f64_external_ctl,
    de_step_f64_external,
    de_grid_f64_external
);
de_kernels!(
    external;
    f64,
    Function::Sphere,
    true,
    false,
    de_batch_f64_external_thesis,
    de_batch_f64_external_thesis_ctl,
    de_step_f64_external_thesis,
    de_grid_f64_external_thesis
);
de_kernels!(
    external;
    f64,
    Function::Sphere,
    true,
    true,
    de_batch_f64_external_thesis_variant,
    de_batch_f64_external_thesis_variant_ctl,
    de_step_f64_external_thesis_variant,
    de_grid_f64_external_thesis_variant
);

// The DE kernels of a separable objective linked in (`kernels_separable.rs`).

// The entry points, named as `crate::registry::for_each_separable_key` names them (the
// build script checks); the thesis family as the external family has it.
de_kernels!(
    separable;
    f32,
    Function::Sphere,
    false,
    false,
    de_batch_f32_separable,
    de_batch_f32_separable_ctl,
    de_step_f32_separable,
    de_grid_f32_separable
);
de_kernels!(
    separable;
    f32,
    Function::Sphere,
    true,
    false,
    de_batch_f32_separable_thesis,
    de_batch_f32_separable_thesis_ctl,
    de_step_f32_separable_thesis,
    de_grid_f32_separable_thesis
);
de_kernels!(
    separable;
    f32,
    Function::Sphere,
    true,
    true,
    de_batch_f32_separable_thesis_variant,
    de_batch_f32_separable_thesis_variant_ctl,
    de_step_f32_separable_thesis_variant,
    de_grid_f32_separable_thesis_variant
);
de_kernels!(
    separable;
    f64,
    Function::Sphere,
    false,
    false,
    de_batch_f64_separable,
    de_batch_f64_separable_ctl,
    de_step_f64_separable,
    de_grid_f64_separable
);
de_kernels!(
    separable;
    f64,
    Function::Sphere,
    true,
    false,
    de_batch_f64_separable_thesis,
    de_batch_f64_separable_thesis_ctl,
    de_step_f64_separable_thesis,
    de_grid_f64_separable_thesis
);
de_kernels!(
    separable;
    f64,
    Function::Sphere,
    true,
    true,
    de_batch_f64_separable_thesis_variant,
    de_batch_f64_separable_thesis_variant_ctl,
    de_step_f64_separable_thesis_variant,
    de_grid_f64_separable_thesis_variant
);

// The batch kernels whose rows sit in shared memory: resident for the whole run
// (`resident.rs`) or staged with `cp.async` one pass ahead (`pipelined.rs`).

/// The batch kernels of one function and precision with the body `$body`: the classic
/// and the thesis family, named as [`crate::registry::KernelKey`] names them
/// ([`crate::registry::Layout::BatchShared`], [`crate::registry::Layout::BatchPipelined`]).
macro_rules! shared_rows_kernels {
    ($body:path, $t:ty, $func:expr, $classic:ident, $thesis:ident) => {
        crate::batch_params!(
            de_entry!(
                /// One block per population, its rows in shared memory (see the body's
                /// module).
                ///
                /// # Safety
                /// As the body's.
                $classic,
                $body,
                $func,
                false,
                false
            ),
            $t
        );
        crate::batch_params!(
            de_entry!(
                /// As the classic one, for the thesis strategy with init-only bounds.
                ///
                /// # Safety
                /// As the body's.
                $thesis,
                $body,
                $func,
                true,
                false
            ),
            $t
        );
    };
}

macro_rules! all_shared_rows_kernels {
    ($($(#[$doc:meta])* $variant:ident = $num:literal, $key:ident, $name:literal,
        $formula:literal, ($lo:expr, $hi:expr), $argmin:expr, $min:expr, $min_dim:literal;)*) => {
        $(
            shared_rows_kernels!(crate::resident::batch_resident, f32, Function::$variant,
                ${concat(de_batch_f32_, $key, _shared)},
                ${concat(de_batch_f32_, $key, _thesis_shared)});
            shared_rows_kernels!(crate::resident::batch_resident, f64, Function::$variant,
                ${concat(de_batch_f64_, $key, _shared)},
                ${concat(de_batch_f64_, $key, _thesis_shared)});
            shared_rows_kernels!(crate::resident::batch_resident_ctl, f32, Function::$variant,
                ${concat(de_batch_f32_, $key, _shared_ctl)},
                ${concat(de_batch_f32_, $key, _thesis_shared_ctl)});
            shared_rows_kernels!(crate::resident::batch_resident_ctl, f64, Function::$variant,
                ${concat(de_batch_f64_, $key, _shared_ctl)},
                ${concat(de_batch_f64_, $key, _thesis_shared_ctl)});
            shared_rows_kernels!(crate::pipelined::batch_pipelined, f32, Function::$variant,
                ${concat(de_batch_f32_, $key, _pipelined)},
                ${concat(de_batch_f32_, $key, _thesis_pipelined)});
            shared_rows_kernels!(crate::pipelined::batch_pipelined, f64, Function::$variant,
                ${concat(de_batch_f64_, $key, _pipelined)},
                ${concat(de_batch_f64_, $key, _thesis_pipelined)});
            shared_rows_kernels!(crate::pipelined::batch_pipelined_ctl, f32, Function::$variant,
                ${concat(de_batch_f32_, $key, _pipelined_ctl)},
                ${concat(de_batch_f32_, $key, _thesis_pipelined_ctl)});
            shared_rows_kernels!(crate::pipelined::batch_pipelined_ctl, f64, Function::$variant,
                ${concat(de_batch_f64_, $key, _pipelined_ctl)},
                ${concat(de_batch_f64_, $key, _thesis_pipelined_ctl)});
        )*
    };
}

crate::builtin_functions!(all_shared_rows_kernels);

// The host-callback phases (`callback.rs`).

/// Defines the host-callback kernels of one precision and family.
macro_rules! host_kernel {
    ($t:ty, $thesis:expr, $variants:expr, $name:ident) => {
        crate::step_params!(
            de_entry!(
                /// One phase of a run whose objective the host evaluates; see
                /// [`host_entry`].
                ///
                /// # Safety
                /// Launched by the host with buffers sized as [`StepParams`] says, `fit`
                /// 2·np values and every flag 0.
                $name,
                crate::callback::host_entry,
                Function::Sphere,
                $thesis,
                $variants
            ),
            $t
        );
    };
}

// Named as `crate::registry::for_each_host_key` names them (the build script checks).
host_kernel!(f32, false, false, de_step_f32_host);
host_kernel!(f32, true, false, de_step_f32_host_thesis);
host_kernel!(f32, true, true, de_step_f32_host_thesis_variant);
host_kernel!(f64, false, false, de_step_f64_host);
host_kernel!(f64, true, false, de_step_f64_host_thesis);
host_kernel!(f64, true, true, de_step_f64_host_thesis_variant);

// The adaptive kernels (`kernels_adaptive.rs`).

/// An adaptive kernel's objective ([`Eval`]) from its kind and the kernel's parameters
/// `p`: `builtin Variant`, `cec` (the function's number and data from `p`), `external`,
/// `separable` (the flags from `p.run.formula`) or `host`.
macro_rules! objective {
    (builtin $variant:ident, $p:ident) => {
        ka::Builtin(
            Function::$variant,
            Formula::from_u32($p.run.formula).unwrap_or(Formula::Exact),
        )
    };
    (cec, $p:ident) => {{
        let (n, d) = ($p.run.function, $p.run.dim as usize);
        // SAFETY: the CEC kernels' contract: the host passes the function's data,
        // `components(n)` shifts and rotations and `shuffles(n)` permutations of D.
        unsafe {
            ka::Cec(
                n,
                cec2017::Data {
                    shift: from_raw_parts($p.shift, cec2017::components(n) * d),
                    rotation: from_raw_parts($p.rotation, cec2017::components(n) * d * d),
                    shuffle: from_raw_parts($p.shuffle, cec2017::shuffles(n) * d),
                },
            )
        }
    }};
    (external, $p:ident) => {
        ka::External
    };
    (separable, $p:ident) => {
        ka::SeparableLinked(SepFlags::from_bits($p.run.formula).unwrap_or_default())
    };
    (host, $p:ident) => {
        ka::Host
    };
}

/// Defines an adaptive entry point from [`AdaptiveParams`]' field list: `batch` (a run
/// per block) or `grid` (one run over the grid), with the objective of kind `[...]`
/// (see [`objective!`]).
macro_rules! adaptive_entry {
    ($(#[$doc:meta])* $name:ident, [$($kind:tt)*], batch; $params:ident<$t:ty> { $($f:ident: $ty:ty,)* }) => {
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name($($f: $ty),*) {
            let p = $params::<$t> { $($f),* };
            let o = objective!($($kind)*, p);
            let mut team = ka::BlockTeam::here();
            // SAFETY: forwarded from this kernel's contract.
            unsafe { ka::adaptive::<$t, _, _>(p, o, &mut team) }
        }
    };
    ($(#[$doc:meta])* $name:ident, [$($kind:tt)*], grid; $params:ident<$t:ty> { $($f:ident: $ty:ty,)* }) => {
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name($($f: $ty),*) {
            let p = $params::<$t> { $($f),* };
            let o = objective!($($kind)*, p);
            let mut team = ka::GridTeam::here(p.sync);
            // SAFETY: forwarded from this kernel's contract.
            unsafe { ka::adaptive::<$t, _, _>(p, o, &mut team) }
        }
    };
}

/// The adaptive kernels of the registry's functions, both precisions (named as
/// [`crate::registry::AdaptiveKey`] names them; the build script checks the names).
macro_rules! adaptive_kernels {
    ($($(#[$doc:meta])* $variant:ident = $num:literal, $key:ident, $name:literal,
        $formula:literal, ($lo:expr, $hi:expr), $argmin:expr, $min:expr, $min_dim:literal;)*) => {
        $(
            crate::adaptive_params!(adaptive_entry!(
                /// A run of an adaptive strategy per block (see the module).
                ///
                /// # Safety
                /// Launched by the host with buffers sized as [`AdaptiveParams`] says.
                ${concat(adaptive_batch_f32_, $key)}, [builtin $variant], batch), f32);
            crate::adaptive_params!(adaptive_entry!(
                /// As the f32 kernel, in double precision.
                ///
                /// # Safety
                /// As the f32 kernel.
                ${concat(adaptive_batch_f64_, $key)}, [builtin $variant], batch), f64);
            crate::adaptive_params!(adaptive_entry!(
                /// One run of an adaptive strategy over the whole grid (see the module).
                ///
                /// # Safety
                /// Launched cooperatively by the host, with buffers sized as
                /// [`AdaptiveParams`] says for one run and the grid's threads, and `sync`
                /// a zeroed word.
                ${concat(adaptive_grid_f32_, $key)}, [builtin $variant], grid), f32);
            crate::adaptive_params!(adaptive_entry!(
                /// As the f32 kernel, in double precision.
                ///
                /// # Safety
                /// As the f32 kernel.
                ${concat(adaptive_grid_f64_, $key)}, [builtin $variant], grid), f64);
        )*
    };
}

crate::builtin_functions!(adaptive_kernels);

crate::adaptive_params!(
    adaptive_entry!(
        /// A run of an adaptive strategy per block on a CEC 2017 function.
        ///
        /// # Safety
        /// Launched by the host with buffers sized as [`AdaptiveParams`] says, the
        /// function's data included.
        adaptive_batch_f32_cec2017,
        [cec],
        batch
    ),
    f32
);
crate::adaptive_params!(
    adaptive_entry!(
        /// As `adaptive_batch_f32_cec2017`, in double precision.
        ///
        /// # Safety
        /// As `adaptive_batch_f32_cec2017`.
        adaptive_batch_f64_cec2017,
        [cec],
        batch
    ),
    f64
);
crate::adaptive_params!(
    adaptive_entry!(
        /// One run of an adaptive strategy (or a classic one) over the whole grid on a
        /// CEC 2017 function.
        ///
        /// # Safety
        /// Launched cooperatively by the host, with buffers sized as [`AdaptiveParams`]
        /// says for one run and the grid's threads, the function's data included, and
        /// `sync` a zeroed word.
        adaptive_grid_f32_cec2017,
        [cec],
        grid
    ),
    f32
);
crate::adaptive_params!(
    adaptive_entry!(
        /// As `adaptive_grid_f32_cec2017`, in double precision.
        ///
        /// # Safety
        /// As `adaptive_grid_f32_cec2017`.
        adaptive_grid_f64_cec2017,
        [cec],
        grid
    ),
    f64
);

/// The adaptive kernels of an objective linked in at run time, both layouts and
/// precisions: `adaptive_{batch,grid}_{f32,f64}_<key>`.
macro_rules! adaptive_linked {
    ($key:ident, $kind:ident, $what:literal) => {
        crate::adaptive_params!(
            adaptive_entry!(
                #[doc = concat!("A run of an adaptive strategy per block on ", $what, " (see the module).")]
                ///
                /// # Safety
                /// Launched by the host with buffers sized as [`AdaptiveParams`] says, its
                /// module linked with one that defines the objective.
                ${concat(adaptive_batch_f32_, $key)},
                [$kind],
                batch
            ),
            f32
        );
        crate::adaptive_params!(
            adaptive_entry!(
                /// As the f32 kernel, in double precision.
                ///
                /// # Safety
                /// As the f32 kernel.
                ${concat(adaptive_batch_f64_, $key)},
                [$kind],
                batch
            ),
            f64
        );
        crate::adaptive_params!(
            adaptive_entry!(
                #[doc = concat!("One run of an adaptive strategy over the whole grid on ", $what, ".")]
                ///
                /// # Safety
                /// Launched cooperatively by the host, with buffers sized as
                /// [`AdaptiveParams`] says for one run and the grid's threads, `sync` a
                /// zeroed word, and its module linked with one that defines the objective.
                ${concat(adaptive_grid_f32_, $key)},
                [$kind],
                grid
            ),
            f32
        );
        crate::adaptive_params!(
            adaptive_entry!(
                /// As the f32 kernel, in double precision.
                ///
                /// # Safety
                /// As the f32 kernel.
                ${concat(adaptive_grid_f64_, $key)},
                [$kind],
                grid
            ),
            f64
        );
    };
}

adaptive_linked!(
    external,
    external,
    "a whole-vector objective linked in at run time (`gpude_objective_T`)"
);
adaptive_linked!(
    separable,
    separable,
    "a separable objective linked in at run time (`gpude_sep_*_T`, its flags in `run.formula`)"
);

crate::adaptive_params!(
    adaptive_entry!(
        /// One phase ([`AdaptiveRun::phase`]) of a run of an adaptive strategy, one
        /// block, whose objective the host evaluates between the launches: the initial
        /// rows, their best, then per generation the trials and the selection (see
        /// `ADAPTIVE_PHASE_*`).
        ///
        /// # Safety
        /// Launched by the host with buffers sized as [`AdaptiveParams`] says for one
        /// run, the phases in their order, the values of the rows of `x` (initial) and
        /// of the first `state[ADAPTIVE_COUNT]` rows of `trials` written into `fit` and
        /// `trial_fit` before the phase after each.
        adaptive_batch_f32_host,
        [host],
        batch
    ),
    f32
);
crate::adaptive_params!(
    adaptive_entry!(
        /// As `adaptive_batch_f32_host`, in double precision.
        ///
        /// # Safety
        /// As `adaptive_batch_f32_host`.
        adaptive_batch_f64_host,
        [host],
        batch
    ),
    f64
);

// The islands (`islands.rs`): the particle swarms and the migration events.

macro_rules! islands_entry {
    ($(#[$doc:meta])* $name:ident, $body:path; $params:ident<$t:ty> { $($f:ident: $ty:ty,)* }) => {
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name($($f: $ty),*) {
            // SAFETY: forwarded from this kernel's contract.
            unsafe { $body($params::<$t> { $($f),* }) }
        }
    };
}

crate::swarm_params!(
    islands_entry!(
        /// One block per swarm; see [`crate::islands::swarm`].
        ///
        /// # Safety
        /// Launched by the host with buffers sized as [`SwarmParams`] says.
        pso_batch_f32,
        crate::islands::swarm
    ),
    f32
);
crate::swarm_params!(
    islands_entry!(
        /// As `pso_batch_f32`, in double precision.
        ///
        /// # Safety
        /// As `pso_batch_f32`.
        pso_batch_f64,
        crate::islands::swarm
    ),
    f64
);
crate::genetic_params!(
    islands_entry!(
        /// One block per island; see [`crate::islands::genetic`].
        ///
        /// # Safety
        /// Launched by the host with buffers sized as [`GeneticParams`] says.
        ga_batch_f32,
        crate::islands::genetic
    ),
    f32
);
crate::genetic_params!(
    islands_entry!(
        /// As `ga_batch_f32`, in double precision.
        ///
        /// # Safety
        /// As `ga_batch_f32`.
        ga_batch_f64,
        crate::islands::genetic
    ),
    f64
);
crate::migrate_params!(
    islands_entry!(
        /// One block per island; see [`crate::islands::migrate`].
        ///
        /// # Safety
        /// Launched by the host with buffers sized as [`MigrateParams`] says.
        migrate_f32,
        crate::islands::migrate
    ),
    f32
);
crate::migrate_params!(
    islands_entry!(
        /// As `migrate_f32`, in double precision.
        ///
        /// # Safety
        /// As `migrate_f32`.
        migrate_f64,
        crate::islands::migrate
    ),
    f64
);

// The ceilings (`ceiling.rs`).

macro_rules! ceiling_entry {
    ($(#[$doc:meta])* $name:ident; $params:ident<$t:ty> { $($f:ident: $ty:ty,)* }) => {
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name($($f: $ty),*) {
            let p = $params::<$t> { $($f),* };
            // SAFETY: reading the special registers of the launch has no precondition.
            let tid = unsafe { _block_idx_x() * _block_dim_x() + _thread_idx_x() };
            let s = crate::ceiling::chains(p.iters, p.seed + <$t as crate::Real>::of(tid as f64));
            // SAFETY: the host sizes `out` for one value per thread of the grid.
            unsafe { *p.out.add(tid as usize) = s };
        }
    };
}

macro_rules! barrier_entry {
    ($(#[$doc:meta])* $name:ident; $params:ident<$t:ty> { $($f:ident: $ty:ty,)* }) => {
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name($($f: $ty),*) {
            let p = $params::<$t> { $($f),* };
            let mut epoch = 0u64;
            let mut k = 0;
            while k < p.iters {
                // SAFETY: every thread of every block passes the same `iters`
                // barriers; the host zeroes `sync` and launches cooperatively.
                unsafe { crate::kernels::grid_sync(p.sync, _grid_dim_x(), &mut epoch) };
                k += 1;
            }
            // SAFETY: the host sizes `out` for one value per block.
            unsafe {
                if _thread_idx_x() == 0 {
                    *p.out.add(_block_idx_x() as usize) = epoch as $t;
                }
            }
        }
    };
}

crate::barrier_params!(
    barrier_entry!(
        /// The grid barrier's cost; see the module documentation.
        ///
        /// # Safety
        /// Launched cooperatively (every block resident) with `sync` a zeroed
        /// global word and `out` one value per block.
        ceiling_barrier_f32
    ),
    f32
);

crate::ceiling_params!(
    ceiling_entry!(
        /// The f32 FMA ceiling; see the module documentation.
        ///
        /// # Safety
        /// `out` holds one value per thread of the grid.
        ceiling_fma_f32
    ),
    f32
);
crate::ceiling_params!(
    ceiling_entry!(
        /// The f64 FMA ceiling; see the module documentation.
        ///
        /// # Safety
        /// `out` holds one value per thread of the grid.
        ceiling_fma_f64
    ),
    f64
);
