//! Tables: the numbers behind a chart (`DataTable`, written as CSV and JSON) and the tables
//! people read in a report or a terminal (`Table`, already formatted; aligned as text by
//! [`Table::aligned_lines`]).

use serde::ser::{SerializeMap, SerializeSeq, SerializeStruct};
use serde::{Serialize, Serializer};

/// One value in a data table.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// No value (an unresolved failover, a window that never closed): empty in CSV, `null`
    /// in JSON.
    Empty,
    /// A signed integer.
    Int(i64),
    /// An unsigned integer (a count, a time in nanoseconds).
    Uint(u64),
    /// Written with Rust's shortest round-trip formatting, so it reads back exactly.
    Float(f64),
    /// Text: a JSON string, and in CSV quoted when it has to be (RFC 4180).
    Text(String),
}

impl Cell {
    /// The value as CSV text, quoted when it has to be (RFC 4180).
    pub fn to_csv(&self) -> String {
        match self {
            Cell::Empty => String::new(),
            Cell::Int(v) => v.to_string(),
            Cell::Uint(v) => v.to_string(),
            Cell::Float(v) => format_float(*v),
            Cell::Text(s) => csv_quote(s),
        }
    }
}

impl From<u64> for Cell {
    fn from(v: u64) -> Self {
        Cell::Uint(v)
    }
}
impl From<usize> for Cell {
    fn from(v: usize) -> Self {
        Cell::Uint(v as u64)
    }
}
impl From<u32> for Cell {
    fn from(v: u32) -> Self {
        Cell::Uint(u64::from(v))
    }
}
impl From<i64> for Cell {
    fn from(v: i64) -> Self {
        Cell::Int(v)
    }
}
impl From<f64> for Cell {
    fn from(v: f64) -> Self {
        Cell::Float(v)
    }
}
impl From<&str> for Cell {
    fn from(v: &str) -> Self {
        Cell::Text(v.to_string())
    }
}
impl From<String> for Cell {
    fn from(v: String) -> Self {
        Cell::Text(v)
    }
}
impl<T: Into<Cell>> From<Option<T>> for Cell {
    fn from(v: Option<T>) -> Self {
        v.map_or(Cell::Empty, Into::into)
    }
}

impl Serialize for Cell {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Cell::Empty => s.serialize_none(),
            Cell::Int(v) => s.serialize_i64(*v),
            Cell::Uint(v) => s.serialize_u64(*v),
            // JSON has no NaN or infinity; such a value is no number and becomes null.
            Cell::Float(v) if !v.is_finite() => s.serialize_none(),
            // `+ 0.0` turns -0.0 into 0.0: a signed zero is no number a reader expects.
            Cell::Float(v) => s.serialize_f64(*v + 0.0),
            Cell::Text(v) => s.serialize_str(v),
        }
    }
}

/// Formats a float the same way in CSV and (through serde_json) in JSON.
fn format_float(v: f64) -> String {
    if v.is_finite() {
        // serde_json prints `1.0` for 1.0 and the shortest round-trip form otherwise.
        serde_json::to_string(&(v + 0.0)).expect("a finite float serialises")
    } else {
        String::new()
    }
}

fn csv_quote(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) || s.starts_with(' ') || s.ends_with(' ') {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The numbers behind one chart (or any other machine-readable table): named columns and
/// rows of cells. Written as `NAME.csv` and `NAME.json` in an output folder.
#[derive(Clone, Debug, PartialEq)]
pub struct DataTable {
    /// The file stem: `[a-z0-9_-]+`.
    pub name: String,
    /// The column names, in order: the CSV header and the keys of each JSON row.
    pub columns: Vec<String>,
    /// The rows in the order pushed, each with one cell per column.
    pub rows: Vec<Vec<Cell>>,
}

impl DataTable {
    /// An empty table with these columns.
    pub fn new(name: &str, columns: &[&str]) -> Self {
        Self {
            name: name.to_string(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row; it must have one cell per column.
    pub fn push(&mut self, row: Vec<Cell>) {
        assert_eq!(
            row.len(),
            self.columns.len(),
            "table {}: a row of {} cells for {} columns",
            self.name,
            row.len(),
            self.columns.len()
        );
        self.rows.push(row);
    }

    /// The table as CSV: a header line, then one line per row, `\n` line ends.
    pub fn to_csv(&self) -> String {
        let mut out = String::new();
        let header: Vec<String> = self.columns.iter().map(|c| csv_quote(c)).collect();
        out.push_str(&header.join(","));
        out.push('\n');
        for row in &self.rows {
            let cells: Vec<String> = row.iter().map(Cell::to_csv).collect();
            out.push_str(&cells.join(","));
            out.push('\n');
        }
        out
    }

    /// The table as pretty-printed JSON: `{"name", "columns", "rows": [{column: value}]}`,
    /// the keys of each row in column order.
    pub fn to_json(&self) -> String {
        let mut out = serde_json::to_string_pretty(self).expect("a data table serialises");
        out.push('\n');
        out
    }
}

impl Serialize for DataTable {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Rows<'a>(&'a DataTable);
        struct Row<'a>(&'a [String], &'a [Cell]);
        impl Serialize for Rows<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut seq = s.serialize_seq(Some(self.0.rows.len()))?;
                for row in &self.0.rows {
                    seq.serialize_element(&Row(&self.0.columns, row))?;
                }
                seq.end()
            }
        }
        impl Serialize for Row<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut map = s.serialize_map(Some(self.0.len()))?;
                for (column, cell) in self.0.iter().zip(self.1) {
                    map.serialize_entry(column, cell)?;
                }
                map.end()
            }
        }
        let mut st = s.serialize_struct("DataTable", 3)?;
        st.serialize_field("name", &self.name)?;
        st.serialize_field("columns", &self.columns)?;
        st.serialize_field("rows", &Rows(self))?;
        st.end()
    }
}

/// A table for people: a header and rows of already formatted text.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Table {
    /// The column headings.
    pub header: Vec<String>,
    /// The rows in the order pushed, each with one formatted cell per header column.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with this header.
    pub fn new(header: &[&str]) -> Self {
        Self {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row; it must have one cell per header column.
    pub fn push(&mut self, row: Vec<String>) {
        assert_eq!(row.len(), self.header.len(), "a row must match the header");
        self.rows.push(row);
    }

    /// The same table with only the columns named in `keep` (by header, in the table's order):
    /// a terminal's view of a table a report shows whole. Names the table lacks are ignored.
    ///
    /// ```
    /// use splitbrain_reports::Table;
    /// let mut t = Table::new(&["design", "p50", "p99"]);
    /// t.push(vec!["raft".into(), "1s".into(), "2s".into()]);
    /// let narrow = t.columns(&["design", "p99"]);
    /// assert_eq!(narrow.header, ["design", "p99"]);
    /// assert_eq!(narrow.rows, [["raft", "2s"]]);
    /// ```
    pub fn columns(&self, keep: &[&str]) -> Table {
        let kept: Vec<usize> = (0..self.header.len())
            .filter(|&i| keep.contains(&self.header[i].as_str()))
            .collect();
        let pick = |cells: &Vec<String>| kept.iter().map(|&i| cells[i].clone()).collect();
        Table {
            header: pick(&self.header),
            rows: self.rows.iter().map(pick).collect(),
        }
    }

    /// The table as aligned text for a terminal: the header line, then a line per row. Every
    /// column is left-aligned to its widest cell, counted in characters (not bytes), with two
    /// spaces between columns and no trailing spaces.
    pub fn aligned_lines(&self) -> Vec<String> {
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count());
            }
        }
        std::iter::once(&self.header)
            .chain(&self.rows)
            .map(|cells| {
                let padded: Vec<String> = cells
                    .iter()
                    .zip(&widths)
                    .map(|(cell, width)| format!("{cell:<width$}"))
                    .collect();
                padded.join("  ").trim_end().to_string()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_only_what_needs_quoting() {
        let mut t = DataTable::new("t", &["name", "value"]);
        t.push(vec!["crash n2, leader".into(), 5u64.into()]);
        t.push(vec!["say \"hi\"".into(), Cell::Empty]);
        t.push(vec!["plain".into(), 0.25.into()]);
        assert_eq!(
            t.to_csv(),
            "name,value\n\"crash n2, leader\",5\n\"say \"\"hi\"\"\",\nplain,0.25\n"
        );
    }

    #[test]
    fn json_rows_keep_the_column_order() {
        let mut t = DataTable::new("t", &["zeta", "alpha"]);
        t.push(vec![1u64.into(), Cell::Empty]);
        let json = t.to_json();
        let z = json.find("\"zeta\": 1").unwrap();
        let a = json.find("\"alpha\": null").unwrap();
        assert!(z < a, "{json}");
    }

    #[test]
    fn a_negative_zero_is_written_as_zero_and_no_number_as_empty() {
        let mut t = DataTable::new("t", &["a", "b", "c"]);
        t.push(vec![(-0.0).into(), f64::NAN.into(), f64::INFINITY.into()]);
        assert_eq!(t.to_csv(), "a,b,c\n0.0,,\n");
        let json = t.to_json();
        assert!(json.contains("\"a\": 0.0"), "{json}");
        assert!(!json.contains("-0"), "{json}");
        assert!(json.contains("\"b\": null"), "{json}");
        assert!(json.contains("\"c\": null"), "{json}");
    }

    fn people_table(rows: &[[&str; 3]]) -> Table {
        let mut t = Table::new(&["at", "what", "n"]);
        for row in rows {
            t.push(row.iter().map(|c| c.to_string()).collect());
        }
        t
    }

    #[test]
    fn aligned_columns_are_as_wide_as_their_widest_cell_two_spaces_apart() {
        let t = people_table(&[["1.5s", "crash n2", "3"], ["12s", "heal", "10"]]);
        assert_eq!(
            t.aligned_lines(),
            [
                "at    what      n",
                "1.5s  crash n2  3",
                "12s   heal      10",
            ]
        );
    }

    #[test]
    fn aligned_lines_have_no_trailing_spaces_even_when_the_last_cells_are_empty() {
        let t = people_table(&[["1s", "a much longer cell", ""], ["2s", "", ""]]);
        let lines = t.aligned_lines();
        assert_eq!(lines[1], "1s  a much longer cell");
        assert_eq!(lines[2], "2s");
        assert!(lines.iter().all(|l| !l.ends_with(' ')), "{lines:?}");
    }

    #[test]
    fn aligned_widths_count_characters_not_bytes() {
        // "µs" and "→" are two and one characters but three bytes each.
        let t = people_table(&[["5µs", "a → b", "1"], ["10ms", "abcdef", "2"]]);
        assert_eq!(
            t.aligned_lines(),
            ["at    what    n", "5µs   a → b   1", "10ms  abcdef  2",]
        );
    }

    #[test]
    fn a_table_without_rows_is_its_header() {
        assert_eq!(people_table(&[]).aligned_lines(), ["at  what  n"]);
    }

    #[test]
    fn floats_read_back_exactly_from_csv() {
        for v in [0.1, 1.0 / 3.0, 12.5, 1e-9, 123456789.125] {
            let text = Cell::Float(v).to_csv();
            assert_eq!(text.parse::<f64>().unwrap(), v);
        }
    }
}
