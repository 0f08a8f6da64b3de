//! The `splitbrain` command. Everything lives in the library; see `splitbrain --help`.

fn main() -> std::process::ExitCode {
    splitbrain::cli::main()
}
