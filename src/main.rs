//! The `retrylint` command line: parses arguments, calls the library, prints, and
//! maps outcomes to exit codes (0 clean, 1 findings or broken expectations, 2
//! invalid input or usage).

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
