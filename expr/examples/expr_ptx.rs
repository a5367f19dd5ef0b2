//! Prints the PTX that the CUDA engine links for an expression:
//! `cargo run -p gpude-expr --example expr_ptx -- EXPRESSION [f32|f64] [D]`
//! (with D, the module generated for that dimension, as the engine links it for a job).

use gpude_expr::{Expr, Precision};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(src) = args.first() else {
        eprintln!("usage: expr_ptx EXPRESSION [f32|f64] [D]");
        return ExitCode::FAILURE;
    };
    let e = match Expr::parse(src) {
        Ok(e) => e,
        Err(err) => {
            eprintln!("expression: {err}");
            return ExitCode::FAILURE;
        }
    };
    let p = match args.get(1).map(String::as_str) {
        None | Some("f32") => Precision::F32,
        Some("f64") => Precision::F64,
        Some(other) => {
            eprintln!("precision {other:?}: use f32 or f64");
            return ExitCode::FAILURE;
        }
    };
    let ptx = match args.get(2) {
        None => e.ptx(p),
        Some(d) => match d.parse::<u32>() {
            Ok(d) if d >= e.min_dim() => e.ptx_for_dim(p, d),
            _ => {
                eprintln!(
                    "dimension {d:?}: use a whole number of at least {}",
                    e.min_dim()
                );
                return ExitCode::FAILURE;
            }
        },
    };
    print!("{ptx}");
    ExitCode::SUCCESS
}
