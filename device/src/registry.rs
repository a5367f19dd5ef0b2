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
    /// One population over the whole GPU, one launch per generation.
    Step,
    /// One population over the whole GPU, one cooperative launch for the run.
    Grid,
    /// One block per population as [`Layout::Batch`], with the population resident in
    /// the block's shared memory for the whole run (`resident.rs`): for populations
    /// whose rows fit, and for the families of [`SHARED_FAMILIES`] only (not in
    /// [`Layout::ALL`]). Its kernels take the batch kernels' parameters.
    BatchShared,
}

/// The families that have a [`Layout::BatchShared`] kernel (per built-in function and
/// precision); the others run the batch layout from global memory.
pub const SHARED_FAMILIES: [Family; 2] = [Family::Classic, Family::Thesis];

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
    pub const ALL: [Layout; 3] = [Layout::Batch, Layout::Step, Layout::Grid];
    fn word(self) -> &'static str {
        match self {
            Layout::Batch | Layout::BatchShared => "batch",
            Layout::Step => "step",
            Layout::Grid => "grid",
        }
    }
    /// What ends the name after the family (the batch kernels' parameters go with
    /// names that start `de_batch_`, so the variant of a layout is a suffix).
    fn suffix(self) -> &'static str {
        match self {
            Layout::BatchShared => "_shared",
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
    /// `de_batch_f32_griewank_thesis_shared`) into `buf` and
    /// returns its length. The one place that names kernels: `kernels.rs` defines the
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
                f(KernelKey {
                    layout: Layout::BatchShared,
                    family,
                    function,
                    precision,
                });
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
pub const EXTERNAL_LAYOUTS: [Layout; 3] = Layout::ALL;

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
            // The thesis-variant family exists for the built-in functions only.
            for family in [Family::Classic, Family::Thesis] {
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
        assert_eq!(count, Function::ALL.len() * 22);
        assert_eq!(names.len(), count);
        assert!(names.contains("de_grid_f64_weierstrass_thesis"));
        assert!(names.contains("de_grid_f64_weierstrass_thesis_variant"));
        assert!(names.contains("de_batch_f32_griewank"));
        assert!(names.contains("de_batch_f32_griewank_thesis_shared"));
        assert!(names.contains("de_batch_f64_sphere_shared"));
        assert!(!names.contains("de_batch_f32_griewank_thesis_variant_shared"));
        // The external family's names are distinct from the built-ins'.
        for_each_external_key(|key| {
            let mut buf = [0u8; KERNEL_NAME_MAX];
            let n = key.write_name(&mut buf);
            assert!(n < KERNEL_NAME_MAX, "{key:?} fills the buffer");
            assert!(names.insert(key.name_into(&mut buf).to_string()), "{key:?}");
        });
        assert!(names.contains("de_batch_f64_external_thesis"));
    }
}
