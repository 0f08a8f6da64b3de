//! The files of a hunt: one JSON line per seed (`hunt --jsonl`), reading them back and
//! proving they are the whole hunt (`merge`), and the JUnit XML report.

pub mod jsonl;
pub mod junit;
pub mod merging;
