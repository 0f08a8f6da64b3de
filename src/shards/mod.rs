//! The files of a hunt: reading the JSON lines of `hunt --jsonl` (written and parsed by
//! `splitbrain_lab::hunt::jsonl`) back and proving they are the whole hunt (`merge`), and the
//! JUnit XML report.

pub mod junit;
pub mod merging;
