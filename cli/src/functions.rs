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
    Ok(common::table(&rows, &[0, 1, 2, 4]))
}
