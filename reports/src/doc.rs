//! The model of a report: what `report.md` and `report.html` say, in order.

use crate::table::Table;

/// A report for one output folder: its title, how it was made, and its sections.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReportDoc {
    /// The report's heading, also the HTML page's `<title>`.
    pub title: String,
    /// The exact command that produced the folder, as a user would type it again.
    pub command: String,
    /// The seeds of the runs behind the numbers, in the order they were run (any order is
    /// fine: they are shown sorted, runs of consecutive seeds as ranges).
    pub seeds: Vec<u64>,
    /// Short facts shown under the title (scenario file, version...): `(name, value)`.
    pub facts: Vec<(String, String)>,
    /// The sections, in the order they are shown.
    pub sections: Vec<Section>,
}

/// A headed part of the report.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Section {
    /// The section's heading (a second-level heading, listed in the HTML contents when
    /// there are more than two sections).
    pub heading: String,
    /// What the section shows, in order.
    pub blocks: Vec<Block>,
}

/// One piece of a section.
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    /// A paragraph of plain text (escaped, never interpreted as markup).
    Text(String),
    /// A bulleted list of plain-text items.
    List(Vec<String>),
    /// A table for people.
    Table(Table),
    /// A chart, by its name: shown as its PNG with its caption and links to its SVG, CSV
    /// and JSON.
    Chart(String),
    /// Preformatted text (a command, a scenario excerpt).
    Code(String),
}

impl Section {
    /// A section with this heading and nothing in it yet.
    pub fn new(heading: impl Into<String>) -> Self {
        Self {
            heading: heading.into(),
            blocks: Vec::new(),
        }
    }

    /// Appends a paragraph of plain text ([`Block::Text`]).
    pub fn text(mut self, text: impl Into<String>) -> Self {
        self.blocks.push(Block::Text(text.into()));
        self
    }

    /// A paragraph when there is something to say; nothing otherwise.
    pub fn text_if(self, text: Option<String>) -> Self {
        match text {
            Some(text) => self.text(text),
            None => self,
        }
    }

    /// Appends a bulleted list of plain-text items ([`Block::List`]).
    pub fn list(mut self, items: Vec<String>) -> Self {
        self.blocks.push(Block::List(items));
        self
    }

    /// Appends a table for people ([`Block::Table`]).
    pub fn table(mut self, table: Table) -> Self {
        self.blocks.push(Block::Table(table));
        self
    }

    /// Appends the chart named `name` ([`Block::Chart`]); [`crate::write_report`] refuses a
    /// name that is not among its charts ([`crate::ReportError::UnknownChart`]).
    pub fn chart(mut self, name: impl Into<String>) -> Self {
        self.blocks.push(Block::Chart(name.into()));
        self
    }

    /// Appends preformatted text ([`Block::Code`]).
    pub fn code(mut self, code: impl Into<String>) -> Self {
        self.blocks.push(Block::Code(code.into()));
        self
    }
}

/// Seeds for people: sorted, deduplicated, consecutive runs as `a..=b`:
/// `[3, 1, 2, 7]` gives `1..=3, 7`.
pub fn format_seeds(seeds: &[u64]) -> String {
    let mut sorted = seeds.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(match end - start {
            0 => start.to_string(),
            1 => format!("{start}, {end}"),
            _ => format!("{start}..={end}"),
        });
        i += 1;
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_are_shown_as_ranges() {
        assert_eq!(format_seeds(&[3, 1, 2, 7, 9, 10]), "1..=3, 7, 9, 10");
        assert_eq!(format_seeds(&[]), "");
        assert_eq!(format_seeds(&[u64::MAX, 5, 5]), format!("5, {}", u64::MAX));
    }
}
