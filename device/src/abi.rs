// The module documentation is on `pub mod abi` in lib.rs: the build script `include!`s
// this file, where inner doc comments are not allowed.

/// The run's settings, shared by the batch, step and grid kernels.
///
/// `f` and `cr` are the strategy's F and Cr, `target` the value at which a run stops
/// (NaN for none: no value reaches it). The codes are the `as u32` values of `Strategy`, `Crossover`,
/// `BoundPolicy` and `Formula`; `dim` is D, `np` the population size and `gens` the
/// generation limit. The function is not a field: every kernel is specialised for one.
/// It holds no pointer, so it stays one parameter of the kernels.
///
/// The order is the one the kernels' loose parameters had. ptxas's register allocation
/// depends on it: with the reals first, some f64 kernels took 4 more registers.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Run<T> {
    pub strategy: u32,
    pub crossover: u32,
    pub bounds: u32,
    pub dim: u32,
    pub np: u32,
    pub gens: u32,
    pub f: T,
    pub cr: T,
    pub target: T,
    /// The `Formula` of a built-in function; for the separable family
    /// (`kernels_separable.rs`), which has no formula, the objective's `SepFlags` bits
    /// (`crate::separable::SepFlags::bits`).
    pub formula: u32,
    /// A [`ThesisVariant`](crate::variant::ThesisVariant)'s bits: read by the
    /// thesis-variant family only, 0 (the default) for every other kernel.
    pub variant: u32,
}

/// The settings of an adaptive run (jDE, JADE, SHADE, L-SHADE, jSO), as the CPU engine
/// and the adaptive kernels read them (see `crate::adaptive_gen`), or of a classic run
/// (thesis, rand/1/bin, …) on a CEC 2017 function in the adaptive kernels: then `f`,
/// `cr`, `crossover` (a `Crossover` code) and `variant` (a thesis variant's bits) are
/// its settings, `max_evaluations` is Np·(gens + 1) and the adaptive fields are unused.
///
/// `strategy`, `bounds` and `formula` are the `as u32` codes of `Strategy`,
/// `BoundPolicy` and `Formula`; `function` is the built-in function's code, or the CEC
/// 2017 function's number for the CEC kernels. `np` is the initial population size,
/// `min_pop` the final one (L-SHADE, jSO; `np` otherwise), `memory_size` H,
/// `gens` the generation limit and `target` the value at which a run stops (NaN for
/// none: no value is ≤ NaN; a run's best value is compared in f64, as the CPU engine
/// compares it). The
/// reals stay `f64` in both precisions: the engines convert them where they are used.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveRun {
    pub max_evaluations: u64,
    pub archive_rate: f64,
    pub p_best: f64,
    pub learning_rate: f64,
    pub tau1: f64,
    pub tau2: f64,
    pub f: f64,
    pub cr: f64,
    pub strategy: u32,
    pub bounds: u32,
    pub formula: u32,
    pub function: u32,
    pub dim: u32,
    pub np: u32,
    pub min_pop: u32,
    pub memory_size: u32,
    pub gens: u32,
    pub crossover: u32,
    pub variant: u32,
    /// What the launch does (`ADAPTIVE_PHASE_*`): the whole run, or one phase of a run
    /// whose values the host computes (the host-callback kernels `adaptive_batch_*_host`).
    pub phase: u32,
    pub target: f64,
}

/// One field of a parameter struct: its name, offset and size on this target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub offset: usize,
    pub size: usize,
}

/// The real types the kernels exist for.
pub trait ParamReal: Copy {
    /// The precision's word in kernel names.
    const WORD: &'static str;
}
impl ParamReal for f32 {
    const WORD: &'static str = "f32";
}
impl ParamReal for f64 {
    const WORD: &'static str = "f64";
}

/// A struct whose fields are a kernel's parameters, in order.
///
/// # Safety
/// The type is `#[repr(C)]` and `Copy`; every field is an integer, a real, a raw pointer
/// or [`Run`] (every bit pattern is a valid value); [`KernelParams::FIELDS`] lists every
/// field once, in declaration order, with its offset and size.
pub unsafe trait KernelParams: Copy {
    /// Every kernel that takes these parameters has a name that starts with `FAMILY`
    /// followed by `PRECISION`.
    const FAMILY: &'static str;
    const PRECISION: &'static str;
    /// The fields, one kernel parameter each.
    const FIELDS: &'static [Field];
}

/// Declares a parameter struct from its one field list: the struct (generic over the
/// real type `T`) and its [`KernelParams`] for `f32` and `f64`.
macro_rules! declare_params {
    ($(#[$doc:meta])* $name:ident, $fields:ident, $family:literal) => {
        $fields!(declare_params_struct!($(#[$doc])* $name), T);
        $fields!(declare_params_impl!($family), T);
    };
}

macro_rules! declare_params_struct {
    ($(#[$doc:meta])* $name:ident; $_n:ident<$t:ty> { $($f:ident: $ty:ty,)* }) => {
        $(#[$doc])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct $name<T> {
            $(pub $f: $ty,)*
        }
    };
}

macro_rules! declare_params_impl {
    ($family:literal; $name:ident<$t:ty> { $($f:ident: $ty:ty,)* }) => {
        // SAFETY: `#[repr(C)]`, `Copy`, fields of the allowed kinds; `FIELDS` is generated
        // from the same list as the struct.
        unsafe impl<T: ParamReal> KernelParams for $name<T> {
            const FAMILY: &'static str = $family;
            const PRECISION: &'static str = T::WORD;
            const FIELDS: &'static [Field] = &[$(Field {
                name: stringify!($f),
                offset: core::mem::offset_of!($name<$t>, $f),
                size: core::mem::size_of::<$ty>(),
            },)*];
        }
    };
}

/// The fields of [`BatchParams`] with real type `$t`, handed to `$callback!` after
/// `$args` (the one list the struct, its field table and the kernels' signatures come
/// from).
#[macro_export]
macro_rules! batch_params {
    ($callback:ident!($($args:tt)*), $t:ty) => {
        $callback! { $($args)*; BatchParams<$t> {
            run: Run<$t>,
            seeds: *const u64,
            streams: *const u32,
            lo: *const $t,
            hi: *const $t,
            pop_a: *mut $t,
            pop_b: *mut $t,
            flags: *mut u32,
            fit: *mut $t,
            trial_fit: *mut $t,
            scratch_f: *mut $t,
            scratch_i: *mut u32,
            best_x: *mut $t,
            best_f: *mut $t,
            best_idx: *mut u32,
            gens_done: *mut u32,
            hist: *mut $t,
            ctl: *mut u64,
            report: u32,
        } }
    };
}

/// The fields of [`StepParams`] (see [`batch_params!`](crate::batch_params)).
#[macro_export]
macro_rules! step_params {
    ($callback:ident!($($args:tt)*), $t:ty) => {
        $callback! { $($args)*; StepParams<$t> {
            run: Run<$t>,
            init: u32,
            pstream: u32,
            seed: u64,
            lo: *const $t,
            hi: *const $t,
            pop_a: *mut $t,
            pop_b: *mut $t,
            flags: *mut u32,
            fit: *mut $t,
            part_f: *mut $t,
            part_i: *mut u32,
            scratch_f: *mut $t,
            scratch_i: *mut u32,
            state: *mut u32,
            best_f: *mut $t,
            hist: *mut $t,
        } }
    };
}

/// The fields of [`GridParams`] (see [`batch_params!`](crate::batch_params)).
#[macro_export]
macro_rules! grid_params {
    ($callback:ident!($($args:tt)*), $t:ty) => {
        $callback! { $($args)*; GridParams<$t> {
            run: Run<$t>,
            seed: u64,
            pstream: u32,
            lo: *const $t,
            hi: *const $t,
            pop_a: *mut $t,
            pop_b: *mut $t,
            flags: *mut u32,
            fit: *mut $t,
            part_f: *mut $t,
            part_i: *mut u32,
            sync: *mut u64,
            state: *mut u32,
            best_f: *mut $t,
            hist: *mut $t,
            ctl: *mut u64,
            report: u32,
        } }
    };
}

/// The fields of [`EvalParams`] (see [`batch_params!`](crate::batch_params)).
#[macro_export]
macro_rules! eval_params {
    ($callback:ident!($($args:tt)*), $t:ty) => {
        $callback! { $($args)*; EvalParams<$t> {
            function: u32,
            formula: u32,
            dim: u32,
            n: u32,
            x: *const $t,
            out: *mut $t,
        } }
    };
}

declare_params! {
    /// The batch kernels (`de_batch_*`): one block per population, all generations in
    /// one launch; `P` populations of `np` rows of `stride(dim)` values, `P` = the grid
    /// size.
    ///
    /// Inputs: `seeds`, `streams` (one per population), `lo`, `hi` (one padded row
    /// each). Working buffers: `pop_a`, `pop_b` (P·np rows), `flags`, `fit`, `trial_fit`
    /// (P·np), `scratch_f`, `scratch_i` (32·P). Outputs: `best_x` (P rows), `best_f`,
    /// `best_idx`, and `hist` ((gens + 1)·P values, or null for no history).
    /// `gens_done` (P) is both: each population's generations done when the launch
    /// starts (0: a fresh run, initialised by the kernel; more: a population the
    /// buffers hold, rows as `flags` say, values in `fit`) and when it ends.
    ///
    /// Control: `ctl` is null (no control) or a mapped control block of P slots, and
    /// `report` says how often the kernel reports there and whether it waits for the
    /// host (see [`crate::control`]).
    BatchParams, batch_params, "de_batch_"
}

/// The fields of [`AdaptiveParams`] (see [`batch_params!`](crate::batch_params)).
#[macro_export]
macro_rules! adaptive_params {
    ($callback:ident!($($args:tt)*), $t:ty) => {
        $callback! { $($args)*; AdaptiveParams<$t> {
            run: AdaptiveRun,
            seeds: *const u64,
            streams: *const u32,
            lo: *const $t,
            hi: *const $t,
            shift: *const $t,
            rotation: *const $t,
            shuffle: *const u32,
            x: *mut $t,
            fit: *mut $t,
            trials: *mut $t,
            trial_fit: *mut $t,
            trial_param: *mut $t,
            trial_word: *mut u32,
            archive: *mut $t,
            memory: *mut $t,
            jde: *mut $t,
            ranks: *mut u32,
            ranking: *mut u32,
            scratch: *mut $t,
            state: *mut u32,
            evaluations: *mut u64,
            best_f: *mut $t,
            hist: *mut $t,
            sync: *mut u64,
        } }
    };
}

declare_params! {
    /// The adaptive kernels of both layouts: `adaptive_batch_*`, one block per run of an
    /// adaptive strategy, every generation in one launch, `P` runs = the grid size; and
    /// `adaptive_grid_*` ([`ADAPTIVE_GRID_FAMILY`]), one run (`P` = 1) over the whole grid
    /// in one cooperative launch. Each run has `np` (the initial size) rows of `dim`
    /// values (no padding).
    ///
    /// Inputs: `seeds`, `streams` (P), `lo`, `hi` (dim each); for the CEC 2017 kernels
    /// the function's data in the layout of `cec2017::Data` (`shift`, `rotation`,
    /// `shuffle`, null for the built-ins). Working buffers, per run: `x`, `trials`
    /// (np·dim), `fit`, `trial_fit`, `trial_word` (np), `ranking` ([`adaptive_ranking_words`]), `ranks` (the larger
    /// of np and the archive's largest capacity: a generation's archive slots' owners),
    /// `trial_param` (2·np: F, Cr), `archive` (its largest capacity, at least one row),
    /// `memory` (2·H: μ_F then μ_Cr), `jde` (2·np: jDE's F then Cr) and per thread
    /// `scratch` (`cec2017::scratch_len(dim)` values, P·blockDim of them). Outputs:
    /// `state` (`ADAPTIVE_STATE_WORDS` per run), `evaluations`, `best_f` (P) and `hist`
    /// ((gens + 1)·P values, or null for no history); `x` and `fit` hold the final
    /// population (its first `state[ADAPTIVE_SIZE]` rows). `sync` is the grid barrier's
    /// counter of the grid kernels (one zeroed word); the batch kernels do not read it
    /// (null). In the grid layout `scratch` holds a value set per thread of the grid
    /// (gridDim·blockDim of them).
    AdaptiveParams, adaptive_params, "adaptive_batch_"
}

/// The name prefix of the adaptive grid kernels, which take [`AdaptiveParams`] as the
/// batch kernels do.
pub const ADAPTIVE_GRID_FAMILY: &str = "adaptive_grid_";

/// Words of an adaptive run's state: the population size, the archive's length, the
/// memory's next entry, the generations done, the best individual's index, and the
/// size the population is reduced to after the generation in progress.
pub const ADAPTIVE_SIZE: usize = 0;
pub const ADAPTIVE_ARCHIVE: usize = 1;
pub const ADAPTIVE_MEMORY_K: usize = 2;
pub const ADAPTIVE_GENS: usize = 3;
pub const ADAPTIVE_BEST: usize = 4;
pub const ADAPTIVE_NEXT: usize = 5;
/// Whether the run is over (1) or goes on (0), and how many trials the next generation
/// makes (the population size, or the budget left when smaller): written with the best
/// after the initial population and after each generation (the host-callback kernels'
/// host reads them between launches).
pub const ADAPTIVE_DONE: usize = 6;
pub const ADAPTIVE_COUNT: usize = 7;
/// The kernels' search for the best individual: the least order key of the values
/// (a u64 in words 8 and 9) and the least index holding it (word 10); the p-best
/// ranking's threshold individual (word 11). The count is even, so that every run's
/// key is 8-byte aligned.
pub const ADAPTIVE_BEST_KEY: usize = 8;
pub const ADAPTIVE_BEST_INDEX: usize = 10;
pub const ADAPTIVE_TAU: usize = 11;
pub const ADAPTIVE_STATE_WORDS: usize = 12;

/// The words of a run's `ranking` buffer at initial size `np`: the p-best ranking (np
/// words), which the selection reuses for the records of its chunks of 32 trials and
/// the levels of their tree (`adaptive::Successes`, at most 24 words each, fewer than
/// `chunks + chunks / 31 + 4` of them); even, so that every run's part is 8-byte
/// aligned.
pub const fn adaptive_ranking_words(np: u32) -> usize {
    let np = np as usize;
    let chunks = np.div_ceil(32);
    let records = 24 * (chunks + chunks.div_ceil(31) + 4);
    let w = if np > records { np } else { records };
    w + (w & 1)
}

/// What a launch of an adaptive kernel does ([`AdaptiveRun::phase`]): the whole run
/// (every kernel but the host-callback ones)…
pub const ADAPTIVE_PHASE_RUN: u32 = 0;
/// …or one phase of a run whose objective the host evaluates between the launches
/// (`adaptive_batch_*_host`): the initial rows into `x` (the host then writes their
/// values into `fit`),
pub const ADAPTIVE_PHASE_INIT_ROWS: u32 = 1;
/// the best of the initial population,
pub const ADAPTIVE_PHASE_INIT_BEST: u32 = 2;
/// the next generation's `state[ADAPTIVE_COUNT]` trials into `trials` (the host then
/// writes their values into `trial_fit`),
pub const ADAPTIVE_PHASE_TRIALS: u32 = 3;
/// the selection, the adaptation, the reduction and the best of that generation.
pub const ADAPTIVE_PHASE_SELECT: u32 = 4;
/// The rest of runs whose state the buffers hold (after `state[ADAPTIVE_GENS]`
/// generations: the population, archive, memory, jDE's parameters and the evaluations),
/// to the launch's `gens` (an island's stretch between two migration events): the best
/// is found again from the values, then the generations run as in
/// [`ADAPTIVE_PHASE_RUN`] (not the host-callback kernels).
pub const ADAPTIVE_PHASE_RESUME: u32 = 5;

declare_params! {
    /// The step kernels (`de_step_*`): one generation of a population spread over the
    /// whole grid per launch, or its initialisation when `init` is not 0.
    ///
    /// `lo`, `hi` (one padded row each), `pop_a`, `pop_b` (np rows), `flags` (2·np: one
    /// plane per generation parity), `fit` (np), the blocks' partial bests `part_f`,
    /// `part_i` (gridDim), `scratch_f`, `scratch_i` (32·gridDim), `state`
    /// (`STATE_WORDS` words), `best_f` (1) and `hist` (gens + 1 values, or null).
    StepParams, step_params, "de_step_"
}

declare_params! {
    /// The grid kernels (`de_grid_*`): a whole run of a grid-wide population in one
    /// cooperative launch. The buffers are those of [`StepParams`] but the scratch (a
    /// block reduces in shared memory), with two planes of partial bests (2·gridDim) and
    /// `sync` ([`GRID_SYNC_WORDS`] zeroed words: the grid
    /// barrier's counter, then the best slots). The state's generation word holds the
    /// generations done when the launch starts (0: a fresh run; more: a population in
    /// the buffers, rows as that generation's flags plane says, values in `fit`). `ctl`
    /// and `report` are the control block (one slot) and its reporting, as in
    /// [`BatchParams`].
    GridParams, grid_params, "de_grid_"
}

/// The words of a grid kernel's `sync` buffer, zeroed before each launch: the grid
/// barrier's counter, then three slots for single precision's generation bests, each on
/// a 128-byte line of its own (the counter's line is polled by every block). Each block
/// adds the complement of its best's key (`de::best_key`) to the slot of generation g
/// (word `GRID_SLOT_STRIDE · (1 + g mod 3)`) with an atomic maximum before the barrier,
/// so that after it the slot holds the complement of the grid's best: one read per block
/// (thread 0's, passed on in shared memory), where the blocks' partials took a read each
/// and a block reduction. A slot is cleared once every block has read it and before
/// generation g + 3 writes it.
pub const GRID_SYNC_WORDS: usize = 4 * GRID_SLOT_STRIDE;
/// The words between two slots of [`GRID_SYNC_WORDS`]: one 128-byte line.
pub const GRID_SLOT_STRIDE: usize = 16;

/// The fields of [`CeilingParams`] (see [`batch_params!`](crate::batch_params)).
#[macro_export]
macro_rules! ceiling_params {
    ($callback:ident!($($args:tt)*), $t:ty) => {
        $callback! { $($args)*; CeilingParams<$t> {
            iters: u32,
            seed: $t,
            out: *mut $t,
        } }
    };
}

/// The fields of [`BarrierParams`] (see [`batch_params!`](crate::batch_params)).
#[macro_export]
macro_rules! barrier_params {
    ($callback:ident!($($args:tt)*), $t:ty) => {
        $callback! { $($args)*; BarrierParams<$t> {
            iters: u32,
            sync: *mut u64,
            out: *mut $t,
        } }
    };
}

declare_params! {
    /// The grid-barrier ceiling kernel (`ceiling_barrier_f32`, measured by `gpude bench
    /// --ceilings`): every thread of a cooperative launch passes `iters` grid barriers,
    /// the whole-GPU kernels' own, on the first word of `sync` (zeroed, as the grid
    /// kernels' [`GRID_SYNC_WORDS`]); thread 0 of each block writes how many it passed
    /// to `out` (one value per block).
    BarrierParams, barrier_params, "ceiling_barrier_"
}

declare_params! {
    /// The arithmetic-ceiling kernels (`ceiling_fma_f32`, `ceiling_fma_f64`, measured by
    /// `gpude bench --ceilings`): every thread runs [`crate::ceiling::CHAINS`]
    /// independent chains of `iters` fused multiply-adds from `seed` and writes their
    /// sum to `out` (one value per thread of the grid).
    CeilingParams, ceiling_params, "ceiling_fma_"
}

declare_params! {
    /// The evaluation kernels (`evaluate_f32`, `evaluate_f64`): `n` rows of
    /// `stride(dim)` values in `x`, their values into `out` (`n`); `function` and
    /// `formula` are the `as u32` codes of `Function` and `Formula`.
    EvalParams, eval_params, "evaluate_"
}

/// The fields of [`SwarmParams`] (see [`batch_params!`](crate::batch_params)).
#[macro_export]
macro_rules! swarm_params {
    ($callback:ident!($($args:tt)*), $t:ty) => {
        $callback! { $($args)*; SwarmParams<$t> {
            function: u32,
            formula: u32,
            bounds: u32,
            dim: u32,
            np: u32,
            gens: u32,
            target: $t,
            inertia: $t,
            c1: $t,
            c2: $t,
            seeds: *const u64,
            streams: *const u32,
            lo: *const $t,
            hi: *const $t,
            x: *mut $t,
            v: *mut $t,
            pbest: *mut $t,
            pfit: *mut $t,
            gbest: *mut $t,
            scratch_f: *mut $t,
            scratch_i: *mut u32,
            gens_done: *mut u32,
            best_f: *mut $t,
        } }
    };
}

declare_params! {
    /// The particle-swarm kernels (`pso_batch_f32`, `pso_batch_f64`): one block per
    /// swarm, its generations from `gens_done` (0: the initialisation first) up to
    /// `gens`, or until its best reaches `target`, in one launch, with the rules of
    /// [`crate::pso`]. `P` swarms (the grid size) of `np` particles with rows of
    /// `stride(dim)` values: positions `x`, velocities `v`, personal bests `pbest`
    /// (P·np rows) and their values `pfit` (P·np); `gbest` (P rows) is each generation's
    /// snapshot of the swarm's best, `scratch_f`/`scratch_i` (32·P) the reductions'.
    /// `gens_done` (P): each swarm's generations done, in and out; `u32::MAX` leaves a
    /// swarm as it is. `best_f` (P): each swarm's best value at the end. `function`, `formula` and `bounds` are the `as u32` codes of
    /// `Function`, `Formula` and `BoundPolicy`.
    SwarmParams, swarm_params, "pso_batch_"
}

/// The fields of [`GeneticParams`] (see [`batch_params!`](crate::batch_params)).
#[macro_export]
macro_rules! genetic_params {
    ($callback:ident!($($args:tt)*), $t:ty) => {
        $callback! { $($args)*; GeneticParams<$t> {
            function: u32,
            formula: u32,
            bounds: u32,
            dim: u32,
            np: u32,
            gens: u32,
            target: $t,
            crossover: $t,
            mutation: $t,
            alpha: $t,
            range: $t,
            seeds: *const u64,
            streams: *const u32,
            lo: *const $t,
            hi: *const $t,
            x: *mut $t,
            y: *mut $t,
            fit: *mut $t,
            yfit: *mut $t,
            scratch_f: *mut $t,
            scratch_i: *mut u32,
            gens_done: *mut u32,
            best_f: *mut $t,
        } }
    };
}

declare_params! {
    /// The genetic-algorithm kernels (`ga_batch_f32`, `ga_batch_f64`): one block per
    /// island, its generations from `gens_done` (0: the initialisation first) up to
    /// `gens`, or until its best reaches `target`, in one launch, with the rules of
    /// [`crate::ga`]. `P` islands (the grid size) of `np` individuals with rows of
    /// `stride(dim)` values in `x` and values in `fit`; `y`, `yfit` (as large) hold a
    /// generation's offspring, `scratch_f`/`scratch_i` (32·P) the reductions'.
    /// `gens_done` and `best_f` (P) as for [`SwarmParams`].
    GeneticParams, genetic_params, "ga_batch_"
}

/// The fields of [`MigrateParams`] (see [`batch_params!`](crate::batch_params)).
#[macro_export]
macro_rules! migrate_params {
    ($callback:ident!($($args:tt)*), $t:ty) => {
        $callback! { $($args)*; MigrateParams<$t> {
            phase: u32,
            islands: u32,
            first: u32,
            np: u32,
            dim: u32,
            g: u32,
            migrants: u32,
            topology: u32,
            emigrants: u32,
            replace: u32,
            row_stride: u32,
            size_stride: u32,
            seeds: *const u64,
            streams: *const u32,
            sizes: *const u32,
            rows_a: *mut $t,
            rows_b: *mut $t,
            flags: *const u32,
            also: *mut $t,
            fit: *mut $t,
            gens_done: *const u32,
            out_rows: *mut $t,
            out_fit: *mut $t,
            pick: *mut u32,
            ring: *mut u32,
            rec_f: *mut $t,
            rec_x: *mut $t,
            scratch_f: *mut $t,
            scratch_i: *mut u32,
        } }
    };
}

declare_params! {
    /// The migration kernels (`migrate_f32`, `migrate_f64`): one event of
    /// [`crate::migration`] after generation `g` over archipelagos of `islands` islands
    /// (block `q` is island `(first + q) mod islands` of archipelago
    /// `(first + q) / islands`: a launch may hold a contiguous part of the islands, the
    /// rest on other GPUs; `out_rows`, `out_fit` and `ring` are indexed by `first + q`
    /// and hold every island's, every other buffer by `q`), in two
    /// launches: `phase` 0 updates each island's record (`rec_f`, `rec_x`: one per
    /// island; with random replacement only) with its best, copies its `migrants` emigrants out (`out_rows`, `out_fit`:
    /// `migrants` per island) and, for a random ring, island 0 draws its archipelago's
    /// ring into `ring` (`islands` per archipelago); `phase` 1 picks each island's targets
    /// (`pick`: `migrants · islands` per island), copies its sources' emigrants over them
    /// and (with random replacement) updates the record with the new best; `phase` 2 only updates the records (at
    /// the end of a run), for every island. The members are `np` rows of
    /// `stride(dim)` values per island in `rows_a`, or where `flags` (not null) says
    /// (`rows_b` for flag 1), and their values `fit`; a replaced row is also written to
    /// `also` when it is not null (a swarm's positions). In phases 0 and 1, islands whose
    /// `gens_done` is `u32::MAX` are left alone. `scratch_f`/`scratch_i`: 32 per island.
    /// A row is `row_stride` values apart (0: `stride(dim)`), in the members, the
    /// emigrants and the records alike; when `sizes` is not null, island `q` has
    /// `sizes[q · size_stride]` members now (the first of its `np` rows: an adaptive
    /// population that shrinks), else `np`.
    MigrateParams, migrate_params, "migrate_"
}

/// Calls `f` with the kernel-name prefix (family, precision) and the fields of every
/// parameter struct (as this target lays them out): the build script compares them with
/// the `.param` declarations of every entry point in the PTX.
pub fn for_each_params(mut f: impl FnMut([&'static str; 2], &'static [Field])) {
    fn one<P: KernelParams>(f: &mut impl FnMut([&'static str; 2], &'static [Field])) {
        f([P::FAMILY, P::PRECISION], P::FIELDS);
    }
    one::<BatchParams<f32>>(&mut f);
    one::<BatchParams<f64>>(&mut f);
    one::<StepParams<f32>>(&mut f);
    one::<StepParams<f64>>(&mut f);
    one::<GridParams<f32>>(&mut f);
    one::<GridParams<f64>>(&mut f);
    one::<EvalParams<f32>>(&mut f);
    one::<EvalParams<f64>>(&mut f);
    one::<CeilingParams<f32>>(&mut f);
    one::<CeilingParams<f64>>(&mut f);
    one::<BarrierParams<f32>>(&mut f);
    one::<AdaptiveParams<f32>>(&mut f);
    one::<AdaptiveParams<f64>>(&mut f);
    one::<SwarmParams<f32>>(&mut f);
    one::<SwarmParams<f64>>(&mut f);
    one::<GeneticParams<f32>>(&mut f);
    one::<GeneticParams<f64>>(&mut f);
    one::<MigrateParams<f32>>(&mut f);
    one::<MigrateParams<f64>>(&mut f);
    // The adaptive grid kernels share the batch kernels' parameters.
    f(
        [ADAPTIVE_GRID_FAMILY, f32::WORD],
        AdaptiveParams::<f32>::FIELDS,
    );
    f(
        [ADAPTIVE_GRID_FAMILY, f64::WORD],
        AdaptiveParams::<f64>::FIELDS,
    );
}

// Device pointers are 64-bit on nvptx64; the host must agree.
const _: () = assert!(core::mem::size_of::<*mut u8>() == 8);

#[cfg(test)]
mod tests {
    use super::*;

    /// The field tables generated from the lists cover each struct exactly: fields in
    /// order, none overlapping, each aligned to its size (or to 4 for `Run<f32>`), the
    /// last ending where the struct ends (up to its alignment).
    fn check<P: KernelParams>(first: &str, last: &str) {
        let fields = P::FIELDS;
        assert_eq!(fields.first().map(|f| f.name), Some(first));
        assert_eq!(fields.last().map(|f| f.name), Some(last));
        let mut end = 0;
        for f in fields {
            assert!(f.offset >= end, "{} overlaps the field before it", f.name);
            assert!(f.size > 0);
            let align = if f.name == "run" {
                core::mem::align_of::<P>().min(f.size)
            } else {
                f.size
            };
            assert_eq!(f.offset % align.min(8), 0, "{} is misaligned", f.name);
            end = f.offset + f.size;
        }
        let size = core::mem::size_of::<P>();
        assert_eq!(end.next_multiple_of(core::mem::align_of::<P>()), size);
    }

    #[test]
    fn field_tables_cover_the_structs() {
        check::<BatchParams<f32>>("run", "report");
        check::<BatchParams<f64>>("run", "report");
        check::<StepParams<f32>>("run", "hist");
        check::<StepParams<f64>>("run", "hist");
        check::<GridParams<f32>>("run", "report");
        check::<GridParams<f64>>("run", "report");
        check::<EvalParams<f32>>("function", "out");
        check::<EvalParams<f64>>("function", "out");
        check::<CeilingParams<f32>>("iters", "out");
        check::<CeilingParams<f64>>("iters", "out");
        check::<AdaptiveParams<f32>>("run", "sync");
        check::<AdaptiveParams<f64>>("run", "sync");
        check::<SwarmParams<f32>>("function", "best_f");
        check::<SwarmParams<f64>>("function", "best_f");
        check::<GeneticParams<f32>>("function", "best_f");
        check::<GeneticParams<f64>>("function", "best_f");
        check::<MigrateParams<f32>>("phase", "scratch_i");
        check::<MigrateParams<f64>>("phase", "scratch_i");
        assert_eq!(BatchParams::<f32>::FIELDS.len(), 19);
        assert_eq!(core::mem::size_of::<Run<f32>>(), 44);
        assert_eq!(core::mem::size_of::<Run<f64>>(), 56);
    }

    #[test]
    fn kernel_names_follow_the_registry() {
        let mut names = Vec::new();
        for_each_params(|[family, precision], _| names.push(format!("{family}{precision}")));
        assert_eq!(names.len(), 21);
        let key = crate::registry::KernelKey {
            layout: crate::registry::Layout::Grid,
            family: crate::registry::Family::Thesis,
            function: "griewank",
            precision: crate::registry::KernelPrecision::F64,
        };
        let mut buf = [0u8; crate::registry::KERNEL_NAME_MAX];
        let name = key.name_into(&mut buf);
        let owners: Vec<_> = names
            .iter()
            .filter(|p| name.starts_with(p.as_str()))
            .collect();
        assert_eq!(owners, ["de_grid_f64"]);
        // The adaptive grid kernels have their own prefix, with the batch kernels' fields.
        let key = crate::registry::AdaptiveKey {
            layout: crate::registry::Layout::Grid,
            function: crate::registry::CEC2017,
            precision: crate::registry::KernelPrecision::F32,
        };
        let name = key.name_into(&mut buf);
        let owners: Vec<_> = names
            .iter()
            .filter(|p| name.starts_with(p.as_str()))
            .collect();
        assert_eq!(owners, ["adaptive_grid_f32"]);
    }
}
