//! `gpude functions`: the benchmark functions.

use super::Result;
use super::common::{self, num};
use gpude::FUNCTIONS;
use serde::Serialize;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print the list as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct Entry {
    name: &'static str,
    formula: &'static str,
    /// The usual initial domain, the same in every component.
    domain: [f64; 2],
    /// The minimiser's components (all equal).
    argmin: f64,
    /// The minimum value.
    min: f64,
}

pub fn run(args: Args) -> Result<String> {
    if args.json {
        let list: Vec<Entry> = FUNCTIONS
            .iter()
            .map(|i| Entry {
                name: i.name,
                formula: i.formula,
                domain: [i.domain.0, i.domain.1],
                argmin: i.argmin,
                min: i.min,
            })
            .collect();
        return common::to_json(&list);
    }
    let mut rows = vec![
        ["name", "domain", "x*", "f(x*)", "f(x)"]
            .map(String::from)
            .to_vec(),
    ];
    for i in &FUNCTIONS {
        rows.push(vec![
            i.name.to_string(),
            format!("[{}, {}]^D", num(i.domain.0), num(i.domain.1)),
            format!("({}, …)", num(i.argmin)),
            num(i.min),
            i.formula.to_string(),
        ]);
    }
    let mut out = common::table(&rows, &[0, 1, 2, 4]);
    out.push_str(
        "\nCEC 2017 (--function cec2017-f1 … cec2017-f30, D = 10, 30, 50 or 100, most also 2 and 20 \
         (the dimensions after each name); domain [-100, 100]^D; f(x*) = 100·n; data from \
         $GPUDE_CEC2017_DATA (the zip, or a folder of its files) or ../shared/reference/cec2017/):\n",
    );
    for id in gpude::cec2017::FunctionId::all() {
        let dims: Vec<String> = id.dimensions().iter().map(|d| d.to_string()).collect();
        out.push_str(&format!(
            "  {:<13} {:<22} {}{}\n",
            id.name(),
            format!("D = {}", dims.join(",")),
            id.title(),
            if id.in_competition() {
                ""
            } else {
                " (not in the competition)"
            }
        ));
    }
    out.push_str(
        "\nYour own objective (CPU and GPU, the same bits): --expr 'sum(x^2 - 10*cos(2*pi*x)) + 10*D' \
         with --lower and --upper (and --min F when the minimum is known).\n  \
         Numbers, D, pi, e; + - * / ^ and comparisons; sin cos tan exp log sqrt abs sinpi cospi \
         expm1 log1p pow min max select;\n  \
         sum(t) and prod(t) over j = 0 … D-1 with x (= x[j]), x[j-1], x[j+1] and j inside; \
         cumsum(t) inside a sum.\n\
         The built-ins written as expressions:\n",
    );
    for i in &FUNCTIONS {
        // Weierstrass's runs to a thousand characters: its start shows the pattern.
        let e = gpude::expr::builtins::expression(i.function);
        let shown = if e.chars().count() > 110 {
            format!("{} …", e.chars().take(108).collect::<String>())
        } else {
            e
        };
        out.push_str(&format!("  {:<12} {shown}\n", i.name));
    }
    out.push_str(
        "Or compiled to PTX (GPU only; run, batch and eval): --objective-ptx FILE, a module defining \
         gpude_objective_f32 and/or gpude_objective_f64 (see examples/objective-rust).\n",
    );
    Ok(out)
}
