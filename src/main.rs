//! The `engine` binary: see `engine --help`.

fn main() {
    std::process::exit(engine::cli::main(std::env::args_os().collect()));
}
