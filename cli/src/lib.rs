//! The `gpude` command line: one module per product subcommand (`run`, `resume`,
//! `batch`, `eval`, `functions`, `info`) with the option parsing they share (`common`),
//! the experiments apart in [`lab`] (`reproduce` and `bench`), and what both use: the
//! statistics ([`stats`]) and the plots ([`plot`]).
//!
//! To add a subcommand, add a variant to [`Command`] holding its argument struct, a
//! module with a `run(args) -> Result<String>` function, and one arm in [`dispatch`].

mod batch;
mod common;
mod eval;
mod functions;
mod info;
mod input;
mod interrupt;
mod islands;
pub mod lab;
mod output;
pub mod plot;
mod plot_runs;
mod resume;
mod run;
pub mod stats;

use clap::{Parser, Subcommand};
use std::fmt;
use std::io::Write;
use std::process::ExitCode;

/// Differential Evolution on NVIDIA GPUs (with a CPU engine when no GPU is there).
#[derive(Debug, Parser)]
#[command(name = "gpude", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Optimise one function (optionally several independent runs).
    Run(Box<run::Args>),
    /// Go on with the runs of a checkpoint file (from `run --checkpoint` or an interrupt).
    Resume(resume::Args),
    /// Evaluate a function at points read from a file or stdin.
    Eval(eval::Args),
    /// List the benchmark functions with their domains and optima.
    Functions(functions::Args),
    /// Show build information and the GPU, if any.
    Info(info::Args),
    /// Run a list of jobs from a JSON or TOML file.
    Batch(batch::Args),
    /// Benchmark the engines (thesis variant, Griewank, D = 128); JSON with --json.
    Bench(lab::bench::Args),
    /// Rerun a published experiment and report it beside the published numbers
    /// (`reproduce thesis`: the thesis's chapter 5).
    Reproduce(lab::reproduce::Args),
}

/// Exit code for bad input: flags, values, files.
pub const EXIT_USAGE: u8 = 2;
/// Exit code for failures while running: CUDA errors, I/O while writing.
pub const EXIT_RUNTIME: u8 = 1;
/// Exit code after SIGINT or SIGTERM stopped a run (its partial result printed).
pub const EXIT_INTERRUPTED: u8 = 130;

/// An error to report as `error: <message>` with an exit code.
#[derive(Debug)]
pub struct CliError {
    pub code: u8,
    pub message: String,
    /// What to print on stdout before the message (the partial result of an
    /// interrupted run).
    pub output: Option<String>,
}

impl CliError {
    /// Bad input (exit code 2).
    pub fn usage(message: impl Into<String>) -> Self {
        CliError {
            code: EXIT_USAGE,
            message: message.into(),
            output: None,
        }
    }

    /// A failure while running (exit code 1).
    pub fn runtime(message: impl Into<String>) -> Self {
        CliError {
            code: EXIT_RUNTIME,
            message: message.into(),
            output: None,
        }
    }

    /// An interrupted run (exit code 130) with its partial result for stdout.
    pub fn interrupted(message: impl Into<String>, output: String) -> Self {
        CliError {
            code: EXIT_INTERRUPTED,
            message: message.into(),
            output: Some(output),
        }
    }

    /// The same error with `context: ` in front of its message.
    pub fn context(mut self, context: impl fmt::Display) -> Self {
        self.message = format!("{context}: {}", self.message);
        self
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<gpude::Error> for CliError {
    fn from(e: gpude::Error) -> Self {
        use gpude::Error as E;
        let code = match &e {
            E::InvalidParameter { .. } | E::UnknownName { .. } | E::Input { .. } => EXIT_USAGE,
            E::CudaUnavailable(_)
            | E::OutOfMemory { .. }
            | E::NonFinite { .. }
            | E::Cuda { .. }
            | E::Driver { .. }
            | E::MissingKernel { .. }
            | E::Objective { .. }
            | E::Io(_) => EXIT_RUNTIME,
        };
        CliError {
            code,
            message: e.to_string(),
            output: None,
        }
    }
}

/// What a subcommand returns: its whole standard output.
pub type Result<T> = std::result::Result<T, CliError>;

/// Parses the command line, runs the subcommand and reports errors.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout with code 0; errors to stderr with code 2.
            let _ = e.print();
            return ExitCode::from(e.exit_code().clamp(0, 255) as u8);
        }
    };
    match dispatch(cli.command) {
        Ok(out) => write_stdout(&out),
        Err(e) => {
            if let Some(out) = &e.output {
                let _ = write_stdout(out);
            }
            eprintln!("error: {}", input::sanitize(&e.message));
            ExitCode::from(e.code)
        }
    }
}

/// Runs one subcommand to completion.
pub fn dispatch(command: Command) -> Result<String> {
    match command {
        Command::Run(a) => run::run(*a),
        Command::Resume(a) => resume::run(a),
        Command::Eval(a) => eval::run(a),
        Command::Functions(a) => functions::run(a),
        Command::Info(a) => info::run(a),
        Command::Batch(a) => batch::run(a),
        Command::Bench(a) => lab::bench::run(a),
        Command::Reproduce(a) => lab::reproduce::run(a),
    }
}

/// Writes the output; a closed pipe (`gpude functions | head -1`) is not an error.
fn write_stdout(out: &str) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: writing the output: {e}");
            ExitCode::from(EXIT_RUNTIME)
        }
    }
}
