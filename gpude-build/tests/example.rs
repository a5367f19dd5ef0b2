//! Compiles the repository's example objective crate to PTX through gpude-build, as a
//! user's build script would, and checks the module defines both forms.

use std::path::PathBuf;

#[test]
fn the_example_objective_compiles_to_ptx() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let target = std::env::temp_dir().join(format!("gpude-build-example-{}", std::process::id()));
    let ptx = gpude_build::Objective::new(root.join("examples/objective-rust"))
        .target_dir(&target)
        .compile()
        .unwrap_or_else(|e| panic!("{e}"));
    let text = std::fs::read_to_string(&ptx).unwrap();
    for s in [
        "gpude_objective_f32",
        "gpude_objective_f64",
        "gpude_sep_a_f32",
        "gpude_sep_finish_f64",
        "gpude_sep_flags_f32",
    ] {
        assert!(text.contains(s), "{s} missing from {}", ptx.display());
    }
    assert!(text.contains(".target sm_70"), "the default architecture");
    let _ = std::fs::remove_dir_all(&target);
}
