//! The integration tests of `splitbrain-reports`, in one test binary (one link instead of one
//! per file). Run one module with `cargo test -p splitbrain-reports --test reports charts::`.

mod common;

mod charts;
mod report_folder;
