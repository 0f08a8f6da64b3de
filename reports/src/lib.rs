//! splitbrain-reports: charts and reports from run results (issue 6). Reads result types only;
//! knows no algorithm. Nothing is implemented here yet.
