//! The JUnit XML report of a hunt or a merge. (The JSON lines of `hunt --jsonl` and their
//! merging are `splitbrain_lab::hunt::jsonl` and `splitbrain_lab::hunt::merge`.)

pub mod junit;
