//! The experiments: `gpude reproduce` (the thesis's chapter 5, Castro Liera et al. 2012
//! and the CEC 2017 competition rerun beside their published numbers) and `gpude bench`
//! (the engines' speed on fixed cases). They use the library as any program would; the
//! product subcommands (`run`, `resume`, `batch`, `eval`, `functions`, `info`) do not
//! depend on them.
//!
//! `reproduce` hands each experiment to its folder (`thesis`, `castro2012`,
//! `cec2017_reproduction`), which holds its published numbers, its runs, its report and
//! its flags (`command`); `bench` measures the cases of `bench_cases` (and with `--gpus`
//! those of `bench_gpus`, on one GPU and on several). The experiments'
//! plots are drawn by the product's `plot` (as `run --plot` draws) and their Markdown tables
//! by `markdown`.

pub(crate) mod bench;
pub mod bench_cases;
pub mod bench_gpus;
pub mod castro2012;
pub mod cec2017_reproduction;
pub mod markdown;
pub(crate) mod reproduce;
pub mod thesis;

/// The command line as typed, quoted for a POSIX shell where needed.
pub(crate) fn command_line() -> String {
    std::env::args()
        .map(|a| {
            let plain = !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
            if plain {
                a
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
