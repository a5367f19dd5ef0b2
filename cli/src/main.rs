//! The `gpude` command line.

fn main() -> std::process::ExitCode {
    gpude_cli::main()
}
