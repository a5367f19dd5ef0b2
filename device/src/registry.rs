// The module documentation is on `pub mod registry` in lib.rs: the build script
// `include!`s this file, where inner doc comments are not allowed.

/// Expands `$callback!` with the list of built-in functions, one entry each:
/// `Variant = number, kernel_key, "name", "formula", (lo, hi), argmin, min, min_dim;`
/// (`min_dim`: the smallest dimension the function is defined for; Rosenbrock couples
/// neighbours, and with one component it is 0 everywhere).
#[macro_export]
macro_rules! builtin_functions {
    ($callback:ident) => {
        $callback! {
            /// `Σ x_j²`
            Sphere = 0, sphere, "sphere", "sum x_j^2", (-100.0, 100.0), 0.0, 0.0, 1;
            /// `Σ x_j²/4000 − Π cos(x_j/√j) + 1` (j from 1; evaluated as `x_j · (1/√j)`,
            /// both roundings correct, so the argument is within 1 ulp)
            Griewank = 1, griewank, "griewank",
                "sum x_j^2/4000 - prod cos(x_j/sqrt(j)) + 1", (-600.0, 600.0), 0.0, 0.0, 1;
            /// `Σ_{j<D} (1 − x_j)² + 100 (x_{j+1} − x_j²)²`
            Rosenbrock = 2, rosenbrock, "rosenbrock",
                "sum_{j<D} (1 - x_j)^2 + 100 (x_{j+1} - x_j^2)^2", (-600.0, 600.0), 1.0, 0.0, 2;
            /// `−20 exp(−0.2 √(Σx_j²/D)) − exp(Σ cos(2πx_j)/D) + 20 + e`
            Ackley = 3, ackley, "ackley",
                "-20 exp(-0.2 sqrt(sum x_j^2 / D)) - exp(sum cos(2 pi x_j) / D) + 20 + e",
                (-32.0, 32.0), 0.0, 0.0, 1;
            /// The thesis's f4, the generalized penalized function 2 (minimum at (1, …, 1)):
            /// `0.1 {sin²(3πx_1) + Σ_{j<D} (x_j − 1)² [1 + sin²(3πx_{j+1})]
            /// + (x_D − 1)² [1 + sin²(2πx_D)]} + Σ_j u(x_j, 5, 100, 4)`
            Penalized = 4, penalized, "f4",
                "0.1 {sin^2(3 pi x_1) + sum_{j<D} (x_j - 1)^2 [1 + sin^2(3 pi x_{j+1})] + (x_D - 1)^2 [1 + sin^2(2 pi x_D)]} + sum u(x_j, 5, 100, 4)",
                (-600.0, 600.0), 1.0, 0.0, 1;
            /// `10 D + Σ (x_j² − 10 cos(2πx_j))`
            Rastrigin = 5, rastrigin, "rastrigin", "10 D + sum (x_j^2 - 10 cos(2 pi x_j))",
                (-5.12, 5.12), 0.0, 0.0, 1;
            /// Schwefel's problem 1.2: `Σ_i (Σ_{j≤i} x_j)²`
            Schwefel12 = 6, schwefel12, "schwefel12", "sum_i (sum_{j<=i} x_j)^2",
                (-100.0, 100.0), 0.0, 0.0, 1;
            /// Weierstrass with a = 0.5, b = 3, k_max = 20:
            /// `Σ_j Σ_k a^k cos(2π b^k (x_j + 0.5)) − D Σ_k a^k cos(π b^k)`
            Weierstrass = 7, weierstrass, "weierstrass",
                "sum_j sum_{k=0}^{20} 0.5^k cos(2 pi 3^k (x_j + 0.5)) - D sum_k 0.5^k cos(pi 3^k)",
                (-0.5, 0.5), 0.0, 0.0, 1;
        }
    };
}

/// How a kernel lays a run out on the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// One block per population, every generation in one launch.
    Batch,
    /// The batch layout under a control block (`device/src/control.rs`): its own entry
    /// points (`…_ctl`), so that the plain ones carry no control code.
    BatchControlled,
    /// One population over the whole GPU, one launch per generation.
    Step,
    /// One population over the whole GPU, one cooperative launch for the run.
    Grid,
    /// One block per population as [`Layout::Batch`], with the population resident in
    /// the block's shared memory for the whole run (`resident.rs`): for populations
    /// whose rows fit, and for the families of [`SHARED_FAMILIES`] only (not in
    /// [`Layout::ALL`]). Its kernels take the batch kernels' parameters.
    BatchShared,
    /// [`Layout::BatchShared`] under a control block: its own entry points
    /// (`…_shared_ctl`), so that the plain ones carry no control code.
    BatchSharedControlled,
    /// One block per population as [`Layout::Batch`], each pass's rows staged in shared
    /// memory with `cp.async` one pass ahead (`pipelined.rs`): for rows of one round
    /// (D ≤ 128), sm_80 or later, and for the families of [`PIPELINED_FAMILIES`] only
    /// (not in [`Layout::ALL`]). Its kernels take the batch kernels' parameters.
    BatchPipelined,
    /// [`Layout::BatchPipelined`] under a control block: its own entry points
    /// (`…_pipelined_ctl`), so that the plain ones carry no control code.
    BatchPipelinedControlled,
}

/// The families that have a [`Layout::BatchShared`] kernel (per built-in function and
/// precision); the others run the batch layout from global memory.
pub const SHARED_FAMILIES: [Family; 2] = [Family::Classic, Family::Thesis];

/// The families that have a [`Layout::BatchPipelined`] kernel (per built-in function
/// and precision).
pub const PIPELINED_FAMILIES: [Family; 2] = [Family::Classic, Family::Thesis];

/// How the names of the [`Layout::BatchPipelined`] kernels end.
pub const PIPELINED_SUFFIX: &str = "_pipelined";

/// How the names of the [`Layout::BatchPipelinedControlled`] kernels end.
pub const PIPELINED_CTL_SUFFIX: &str = "_pipelined_ctl";

/// Is the kernel of this name a pipelined one (plain or controlled), whose module needs
/// [`PIPELINED_CC`]?
pub fn is_pipelined(name: &str) -> bool {
    name.ends_with(PIPELINED_SUFFIX) || name.ends_with(PIPELINED_CTL_SUFFIX)
}

/// The least architecture of the [`Layout::BatchPipelined`] kernels (`cp.async`), as the
/// compute capability's number (major · 10 + minor): the build script writes their
/// modules' `.target` as `sm_` and this number when the build's architecture is older.
pub const PIPELINED_CC: u32 = 80;

/// Which strategies a kernel serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// Every classic strategy, crossover and bound policy, chosen at run time.
    Classic,
    /// The thesis's variant with init-only bounds, fixed at compile time.
    Thesis,
    /// The thesis's variant with init-only bounds and a
    /// [`ThesisVariant`](crate::variant::ThesisVariant) chosen at run time: apart from
    /// the thesis family, so that its alternatives cost the default's kernels nothing.
    ThesisVariant,
}

/// The arithmetic of a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelPrecision {
    F32,
    F64,
}

/// One kernel entry point: layout × family × function × precision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KernelKey {
    pub layout: Layout,
    pub family: Family,
    /// The function's kernel key (its entry in [`builtin_functions!`]).
    pub function: &'static str,
    pub precision: KernelPrecision,
}

impl Layout {
    pub const ALL: [Layout; 4] = [
        Layout::Batch,
        Layout::BatchControlled,
        Layout::Step,
        Layout::Grid,
    ];
    fn word(self) -> &'static str {
        match self {
            Layout::Batch
            | Layout::BatchControlled
            | Layout::BatchShared
            | Layout::BatchSharedControlled
            | Layout::BatchPipelined
            | Layout::BatchPipelinedControlled => "batch",
            Layout::Step => "step",
            Layout::Grid => "grid",
        }
    }
    /// What ends the name after the family (the batch kernels' parameters go with
    /// names that start `de_batch_`, so the variant of a layout is a suffix).
    fn suffix(self) -> &'static str {
        match self {
            Layout::BatchControlled => "_ctl",
            Layout::BatchShared => "_shared",
            Layout::BatchSharedControlled => "_shared_ctl",
            Layout::BatchPipelined => PIPELINED_SUFFIX,
            Layout::BatchPipelinedControlled => PIPELINED_CTL_SUFFIX,
            _ => "",
        }
    }
}

impl Family {
    pub const ALL: [Family; 3] = [Family::Classic, Family::Thesis, Family::ThesisVariant];
    fn suffix(self) -> &'static str {
        match self {
            Family::Classic => "",
            Family::Thesis => "_thesis",
            Family::ThesisVariant => "_thesis_variant",
        }
    }
}

impl KernelPrecision {
    pub const ALL: [KernelPrecision; 2] = [KernelPrecision::F32, KernelPrecision::F64];
    fn word(self) -> &'static str {
        match self {
            KernelPrecision::F32 => "f32",
            KernelPrecision::F64 => "f64",
        }
    }
}

/// The longest kernel name [`KernelKey::write_name`] produces.
pub const KERNEL_NAME_MAX: usize = 48;

impl KernelKey {
    /// Writes the entry point's name (`de_batch_f32_griewank_thesis`,
    /// `de_batch_f32_griewank_thesis_ctl` under control,
    /// `de_batch_f32_griewank_thesis_shared`, `…_pipelined`) into `buf` and
    /// returns its length. The one place that names kernels: `entries.rs` defines the
    /// entry points under these names, checked by the build script.
    pub fn write_name(&self, buf: &mut [u8; KERNEL_NAME_MAX]) -> usize {
        let parts = [
            "de_",
            self.layout.word(),
            "_",
            self.precision.word(),
            "_",
            self.function,
            self.family.suffix(),
            self.layout.suffix(),
        ];
        let mut n = 0;
        for p in parts {
            for &b in p.as_bytes() {
                if n < KERNEL_NAME_MAX {
                    buf[n] = b;
                    n += 1;
                }
            }
        }
        n
    }

    /// The entry point's name as text.
    pub fn name_into<'a>(&self, buf: &'a mut [u8; KERNEL_NAME_MAX]) -> &'a str {
        let n = self.write_name(buf);
        // Every part is ASCII.
        core::str::from_utf8(&buf[..n]).unwrap_or("")
    }

    /// Does the kernel call an objective linked in at run time ([`EXTERNAL`],
    /// [`SEPARABLE`])?
    pub fn is_linked(&self) -> bool {
        self.function == EXTERNAL || self.function == SEPARABLE
    }

    /// The most registers a thread of this kernel may use (`.maxnreg`, given to the
    /// driver's compiler), the cap measured fastest for its layout on an H100 (swept over
    /// 64, 72, 80, 96 and 128; docs/PERFORMANCE.md, version 12); `None`: no cap. Below
    /// the cap that lets a block have 1 024 threads (64), ptxas spills; above it, fewer
    /// warps hide the latency.
    /// - whole-GPU kernels ([`Layout::Grid`]), both precisions: 128 (Np = 8 192: 11.2 µs
    ///   per generation against 13.9 at 64, and 18.4 against 23.5 uncapped in f64);
    /// - resident batch kernels ([`Layout::BatchShared`]) in single precision: 80;
    /// - pipelined batch kernels ([`Layout::BatchPipelined`]), both precisions: 96
    ///   (132 × 2048 Griewank: 152.6 µs per generation against 163.6 at 64 and 159.7 at
    ///   72; version 17);
    /// - the other batch kernels: 72 (f64: 708 µs against 976 uncapped), but 64 for the
    ///   single-precision kernels of linked objectives, which 72 slowed;
    /// - the step kernels: 64 in single precision; none in double precision (which
    ///   spills under a low cap).
    pub fn register_cap(&self) -> Option<u32> {
        let f32 = self.precision == KernelPrecision::F32;
        match self.layout {
            Layout::Grid => Some(128),
            Layout::BatchShared | Layout::BatchSharedControlled => {
                if f32 {
                    Some(80)
                } else {
                    None
                }
            }
            Layout::BatchPipelined | Layout::BatchPipelinedControlled => Some(96),
            Layout::Batch | Layout::BatchControlled => {
                Some(if f32 && self.is_linked() { 64 } else { 72 })
            }
            Layout::Step => {
                if f32 {
                    Some(64)
                } else {
                    None
                }
            }
        }
    }
}

/// Calls `f` with every kernel key of the built-in functions.
pub fn for_each_kernel_key(mut f: impl FnMut(KernelKey)) {
    macro_rules! keys {
        ($($(#[$doc:meta])* $variant:ident = $num:literal, $key:ident, $name:literal,
            $formula:literal, ($lo:expr, $hi:expr), $argmin:expr, $min:expr, $min_dim:literal;)*) => {
            [$(stringify!($key)),*]
        };
    }
    for function in builtin_functions!(keys) {
        for precision in KernelPrecision::ALL {
            for layout in Layout::ALL {
                for family in Family::ALL {
                    f(KernelKey {
                        layout,
                        family,
                        function,
                        precision,
                    });
                }
            }
            for family in SHARED_FAMILIES {
                for layout in [Layout::BatchShared, Layout::BatchSharedControlled] {
                    f(KernelKey {
                        layout,
                        family,
                        function,
                        precision,
                    });
                }
            }
            for family in PIPELINED_FAMILIES {
                for layout in [Layout::BatchPipelined, Layout::BatchPipelinedControlled] {
                    f(KernelKey {
                        layout,
                        family,
                        function,
                        precision,
                    });
                }
            }
        }
    }
}

/// The kernel key's `function` of the external-objective family (`external.rs`): DE
/// kernels whose objective is a function they declare but do not define, linked in at
/// run time by the driver's JIT linker (an expression's generated PTX, or a user's).
pub const EXTERNAL: &str = "external";

/// The name of the PTX module holding the expression maths (`crate::expr_maths`'s
/// exported functions), in the build's table of modules beside the kernels.
pub const EXPR_MATHS_MODULE: &str = "gpude_expr_maths";

/// The layouts the external family has kernels for.
pub const EXTERNAL_LAYOUTS: [Layout; 4] = Layout::ALL;

/// The symbol the external family's kernels call for the objective, with the signature
/// `.func (.param .bN r) sym(.param .b64 x, .param .b32 d)`: `x` a generic pointer to
/// the `d` components of one point (N = 32 or 64, the precision).
pub const fn objective_symbol(p: KernelPrecision) -> &'static str {
    match p {
        KernelPrecision::F32 => "gpude_objective_f32",
        KernelPrecision::F64 => "gpude_objective_f64",
    }
}

/// Calls `f` with every kernel key of the external family.
pub fn for_each_external_key(mut f: impl FnMut(KernelKey)) {
    for precision in KernelPrecision::ALL {
        for layout in EXTERNAL_LAYOUTS {
            for family in Family::ALL {
                f(KernelKey {
                    layout,
                    family,
                    function: EXTERNAL,
                    precision,
                });
            }
        }
    }
}

/// The kernel key's `function` of the separable family (`kernels_separable.rs`): the
/// built-in kernels' code path with a user's separable objective
/// ([`crate::separable`]), whose symbols are linked in at run time as the external
/// family's objective is. Its layouts and families are the external family's.
pub const SEPARABLE: &str = "separable";

/// The symbols a separable kernel calls in precision `p`: the a-terms, the b-terms and
/// the finish (see [`crate::separable`] for their signatures).
pub const fn separable_symbols(p: KernelPrecision) -> [&'static str; 3] {
    match p {
        KernelPrecision::F32 => ["gpude_sep_a_f32", "gpude_sep_b_f32", "gpude_sep_finish_f32"],
        KernelPrecision::F64 => ["gpude_sep_a_f64", "gpude_sep_b_f64", "gpude_sep_finish_f64"],
    }
}

/// The global in which a module states its separable form's flags in precision `p`
/// ([`crate::separable::SepFlags::bits`]).
pub const fn separable_flags_symbol(p: KernelPrecision) -> &'static str {
    match p {
        KernelPrecision::F32 => "gpude_sep_flags_f32",
        KernelPrecision::F64 => "gpude_sep_flags_f64",
    }
}

/// Calls `f` with every kernel key of the separable family.
pub fn for_each_separable_key(mut f: impl FnMut(KernelKey)) {
    for precision in KernelPrecision::ALL {
        for layout in EXTERNAL_LAYOUTS {
            for family in Family::ALL {
                f(KernelKey {
                    layout,
                    family,
                    function: SEPARABLE,
                    precision,
                });
            }
        }
    }
}

/// The kernel key's `function` of the host-callback family (`callback.rs`): step-layout
/// kernels that build the population's rows and trials and select, while the host
/// evaluates the rows between the launches (an objective that runs on the CPU).
pub const HOST: &str = "host";

/// What a launch of a host-callback kernel does: the kernel's `init` parameter
/// ([`StepParams`](crate::abi::StepParams)). A generation is [`HOST_TRIALS`] (the trials
/// into `pop_b`), the host's evaluation (their values into `fit[np..2·np]`), then
/// [`HOST_SELECT`]; the initialisation is [`HOST_INIT_ROWS`] (the rows into `pop_a`), the
/// host's evaluation (into `fit[0..np]`), then [`HOST_INIT_SELECT`].
pub const HOST_SELECT: u32 = 0;
/// See [`HOST_SELECT`]: the best of the initial population, whose values the host wrote.
pub const HOST_INIT_SELECT: u32 = 1;
/// See [`HOST_SELECT`]: the initial rows into `pop_a`.
pub const HOST_INIT_ROWS: u32 = 2;
/// See [`HOST_SELECT`]: the next generation's trials into `pop_b`.
pub const HOST_TRIALS: u32 = 3;

/// Calls `f` with every kernel key of the host-callback family: the step layout, every
/// family and precision.
pub fn for_each_host_key(mut f: impl FnMut(KernelKey)) {
    for precision in KernelPrecision::ALL {
        for family in Family::ALL {
            f(KernelKey {
                layout: Layout::Step,
                family,
                function: HOST,
                precision,
            });
        }
    }
}

/// The `function` of the adaptive kernel that evaluates the CEC 2017 functions (the
/// function's number is a run-time setting, its data device buffers).
pub const CEC2017: &str = "cec2017";

/// The layouts of the adaptive kernels: [`Layout::Batch`] (one block per run, every
/// generation in one launch) and [`Layout::Grid`] (one run over the whole grid, one
/// cooperative launch).
pub const ADAPTIVE_LAYOUTS: [Layout; 2] = [Layout::Batch, Layout::Grid];

/// One adaptive kernel (jDE, JADE, SHADE, L-SHADE and jSO, and the classic strategies on
/// CEC 2017 functions, chosen at run time) in one of [`ADAPTIVE_LAYOUTS`]
/// (`kernels_adaptive.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AdaptiveKey {
    /// [`Layout::Batch`] or [`Layout::Grid`].
    pub layout: Layout,
    /// A built-in function's kernel key, [`CEC2017`], [`EXTERNAL`] or [`SEPARABLE`]
    /// (an objective linked in at run time), or [`HOST`] (evaluated by the host between
    /// the phases of a run; [`Layout::Batch`] only).
    pub function: &'static str,
    pub precision: KernelPrecision,
}

impl AdaptiveKey {
    /// Writes the entry point's name (`adaptive_batch_f64_cec2017`,
    /// `adaptive_grid_f32_sphere`) into `buf` and returns its length.
    pub fn write_name(&self, buf: &mut [u8; KERNEL_NAME_MAX]) -> usize {
        let parts = [
            "adaptive_",
            self.layout.word(),
            "_",
            self.precision.word(),
            "_",
            self.function,
        ];
        let mut n = 0;
        for p in parts {
            for &b in p.as_bytes() {
                if n < KERNEL_NAME_MAX {
                    buf[n] = b;
                    n += 1;
                }
            }
        }
        n
    }

    /// The entry point's name as text.
    pub fn name_into<'a>(&self, buf: &'a mut [u8; KERNEL_NAME_MAX]) -> &'a str {
        let n = self.write_name(buf);
        core::str::from_utf8(&buf[..n]).unwrap_or("")
    }

    /// The most registers a thread of this kernel may use: none (the adaptive kernels
    /// were not measured under a cap).
    pub fn register_cap(&self) -> Option<u32> {
        None
    }
}

/// Calls `f` with every adaptive kernel's key: each built-in function, CEC 2017 and the
/// linked objectives ([`EXTERNAL`], [`SEPARABLE`]) in both precisions and both layouts,
/// and [`HOST`] in both precisions in the batch layout.
pub fn for_each_adaptive_key(mut f: impl FnMut(AdaptiveKey)) {
    macro_rules! keys {
        ($($(#[$doc:meta])* $variant:ident = $num:literal, $key:ident, $name:literal,
            $formula:literal, ($lo:expr, $hi:expr), $argmin:expr, $min:expr, $min_dim:literal;)*) => {
            [$(stringify!($key)),*]
        };
    }
    for layout in ADAPTIVE_LAYOUTS {
        for function in builtin_functions!(keys) {
            for precision in KernelPrecision::ALL {
                f(AdaptiveKey {
                    layout,
                    function,
                    precision,
                });
            }
        }
        for function in [CEC2017, EXTERNAL, SEPARABLE] {
            for precision in KernelPrecision::ALL {
                f(AdaptiveKey {
                    layout,
                    function,
                    precision,
                });
            }
        }
    }
    for precision in KernelPrecision::ALL {
        f(AdaptiveKey {
            layout: Layout::Batch,
            function: HOST,
            precision,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Function;

    #[test]
    fn function_numbers_are_their_positions() {
        for (k, f) in Function::ALL.iter().enumerate() {
            assert_eq!(*f as usize, k);
            assert_eq!(Function::from_u32(k as u32), Some(*f));
        }
    }

    #[test]
    fn every_kernel_name_is_distinct_and_fits() {
        let mut names = std::collections::BTreeSet::new();
        let mut count = 0;
        for_each_kernel_key(|key| {
            let mut buf = [0u8; KERNEL_NAME_MAX];
            let n = key.write_name(&mut buf);
            assert!(n < KERNEL_NAME_MAX, "{key:?} fills the buffer");
            names.insert(key.name_into(&mut buf).to_string());
            count += 1;
        });
        // Four layouts (batch, batch under control, step, grid) × three families × two
        // precisions, and the shared-memory and the pipelined batch kernels, plain and
        // under control, of two families each.
        assert_eq!(count, Function::ALL.len() * 40);
        assert_eq!(names.len(), count);
        assert!(names.contains("de_grid_f64_weierstrass_thesis"));
        assert!(names.contains("de_grid_f64_weierstrass_thesis_variant"));
        assert!(names.contains("de_batch_f32_griewank"));
        assert!(names.contains("de_batch_f32_griewank_ctl"));
        assert!(names.contains("de_batch_f64_sphere_thesis_variant_ctl"));
        assert!(names.contains("de_batch_f32_griewank_thesis_shared"));
        assert!(names.contains("de_batch_f64_sphere_shared"));
        assert!(names.contains("de_batch_f64_sphere_shared_ctl"));
        assert!(names.contains("de_batch_f32_griewank_thesis_pipelined_ctl"));
        assert!(!names.contains("de_batch_f32_griewank_thesis_variant_shared"));
        assert!(names.contains("de_batch_f32_griewank_thesis_pipelined"));
        assert!(names.contains("de_batch_f64_weierstrass_pipelined"));
        assert!(!names.contains("de_batch_f32_griewank_thesis_variant_pipelined"));
        // The external family's names are distinct from the built-ins'.
        for_each_external_key(|key| {
            let mut buf = [0u8; KERNEL_NAME_MAX];
            let n = key.write_name(&mut buf);
            assert!(n < KERNEL_NAME_MAX, "{key:?} fills the buffer");
            assert!(names.insert(key.name_into(&mut buf).to_string()), "{key:?}");
        });
        assert!(names.contains("de_batch_f64_external_thesis"));
        assert!(names.contains("de_batch_f64_external_thesis_ctl"));
        assert!(names.contains("de_step_f32_external_thesis_variant"));
        // So are the separable family's: the external family's layouts and families.
        let mut separable = 0;
        for_each_separable_key(|key| {
            let mut buf = [0u8; KERNEL_NAME_MAX];
            let n = key.write_name(&mut buf);
            assert!(n < KERNEL_NAME_MAX, "{key:?} fills the buffer");
            assert!(names.insert(key.name_into(&mut buf).to_string()), "{key:?}");
            separable += 1;
        });
        assert_eq!(separable, 24);
        assert!(names.contains("de_grid_f64_separable_thesis_variant"));
        assert!(names.contains("de_grid_f32_separable"));
        assert!(names.contains("de_batch_f64_separable_thesis_ctl"));
        // So are the host-callback family's.
        let mut host = 0;
        for_each_host_key(|key| {
            let mut buf = [0u8; KERNEL_NAME_MAX];
            assert!(names.insert(key.name_into(&mut buf).to_string()), "{key:?}");
            host += 1;
        });
        assert_eq!(host, 6);
        assert!(names.contains("de_step_f32_host_thesis_variant"));
        let mut adaptive = 0;
        for_each_adaptive_key(|key| {
            let mut buf = [0u8; KERNEL_NAME_MAX];
            let n = key.write_name(&mut buf);
            assert!(n < KERNEL_NAME_MAX, "{key:?} fills the buffer");
            assert!(names.insert(key.name_into(&mut buf).to_string()), "{key:?}");
            adaptive += 1;
        });
        assert_eq!(adaptive, 2 * 2 * (Function::ALL.len() + 3) + 2);
        assert!(names.contains("adaptive_batch_f32_cec2017"));
        assert!(names.contains("adaptive_grid_f64_separable"));
        assert!(names.contains("adaptive_batch_f32_host"));
        assert!(!names.contains("adaptive_grid_f32_host"));
        assert!(names.contains("adaptive_batch_f64_rosenbrock"));
        assert!(names.contains("adaptive_grid_f32_cec2017"));
        assert!(names.contains("adaptive_grid_f64_rosenbrock"));
    }
}
