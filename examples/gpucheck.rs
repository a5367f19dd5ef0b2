//! Runs the benchmark cases and prints JSON lines and a table (used before the CLI's
//! `bench` existed; kept as a minimal library example).
fn main() -> gpude::Result<()> {
    let quick = std::env::args().any(|a| a == "--quick");
    let engine = gpude::cuda_engine(0, 4).ok();
    let mut recs = Vec::new();
    for c in gpude::bench::standard_cases(engine.is_some(), quick) {
        let r = gpude::bench::measure(&c, engine.as_ref(), 3)?;
        println!("{}", serde_json::to_string(&r).expect("json"));
        recs.push(r);
    }
    print!("{}", gpude::bench::table(&recs));
    Ok(())
}
