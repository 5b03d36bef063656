//! The `engine` binary: see `engine --help`.

fn main() -> std::process::ExitCode {
    engine::cli::main(std::env::args_os().collect())
}
