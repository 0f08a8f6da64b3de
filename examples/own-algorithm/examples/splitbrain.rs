//! The `splitbrain` command with this crate's algorithm registered, so that everything the
//! command does (run, hunt, charts, shard and merge) works on `OwnLease` scenarios and on
//! the reproducers the tests write:
//!
//! ```sh
//! cargo run --example splitbrain -- run target/splitbrain/own-lease-check-then-act-seed1-fencing_safety.ron
//! cargo run --example splitbrain -- hunt scenarios/own-lease-nemesis.ron --seeds 10000
//! ```

fn main() -> std::process::ExitCode {
    splitbrain::cli::main_with(|| {
        splitbrain_algorithms::register::<own_algorithm::OwnLease>()?;
        Ok(())
    })
}
