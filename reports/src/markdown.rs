//! `report.md`: the report as Markdown, charts as their PNGs beside it.

use crate::chart::Chart;
use crate::doc::{format_seeds, Block, ReportDoc};
use crate::table::{DataTable, Table};

/// Renders `doc` as Markdown. `charts` must hold every chart the sections name (checked by
/// the caller); `data` are the extra tables, listed at the end.
pub(crate) fn render(doc: &ReportDoc, charts: &[&Chart], data: &[DataTable]) -> String {
    let mut out = String::new();
    out.push_str(&format!("# {}\n\n", escape(&doc.title)));
    out.push_str("Produced by:\n\n");
    out.push_str(&code_block(&doc.command, "sh"));
    out.push_str(&format!(
        "- **seeds** ({}): {}\n",
        seed_count(&doc.seeds),
        format_seeds(&doc.seeds)
    ));
    for (name, value) in &doc.facts {
        out.push_str(&format!("- **{}**: {}\n", escape(name), escape(value)));
    }
    out.push('\n');

    for section in &doc.sections {
        out.push_str(&format!("## {}\n\n", escape(&section.heading)));
        for block in &section.blocks {
            match block {
                Block::Text(text) => {
                    out.push_str(&escape(text));
                    out.push_str("\n\n");
                }
                Block::List(items) => {
                    for item in items {
                        out.push_str(&format!("- {}\n", escape(item)));
                    }
                    out.push('\n');
                }
                Block::Table(table) => out.push_str(&table_md(table)),
                Block::Code(code) => out.push_str(&code_block(code, "")),
                Block::Chart(name) => {
                    let chart = charts
                        .iter()
                        .find(|c| &c.name == name)
                        .expect("charts were checked to exist");
                    out.push_str(&chart_md(chart));
                }
            }
        }
    }

    if !data.is_empty() {
        out.push_str("## Data files\n\n");
        for table in data {
            out.push_str(&format!(
                "- `{0}`: [CSV]({0}.csv), [JSON]({0}.json) ({1} rows)\n",
                table.name,
                table.rows.len()
            ));
        }
        out.push('\n');
    }
    // One trailing newline, not two.
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

pub(crate) fn seed_count(seeds: &[u64]) -> String {
    let mut unique = seeds.to_vec();
    unique.sort_unstable();
    unique.dedup();
    match unique.len() {
        1 => "1 seed".to_string(),
        n => format!("{n} seeds"),
    }
}

fn chart_md(chart: &Chart) -> String {
    format!(
        "![{title}]({name}.png)\n\n*{title}*: [SVG]({name}.svg), data as [CSV]({name}.csv) and \
         [JSON]({name}.json)\n\n",
        title = escape(&chart.title),
        name = chart.name
    )
}

fn table_md(table: &Table) -> String {
    let cell = |s: &str| escape(s).replace('|', "\\|").replace('\n', " ");
    let mut out = String::new();
    let header: Vec<String> = table.header.iter().map(|h| cell(h)).collect();
    out.push_str(&format!("| {} |\n", header.join(" | ")));
    let rule: Vec<&str> = table.header.iter().map(|_| "---").collect();
    out.push_str(&format!("| {} |\n", rule.join(" | ")));
    for row in &table.rows {
        let cells: Vec<String> = row.iter().map(|c| cell(c)).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out.push('\n');
    out
}

/// A fenced code block whose fence is longer than any run of backticks inside.
fn code_block(code: &str, language: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in code.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    format!(
        "{fence}{language}\n{}\n{fence}\n\n",
        code.trim_end_matches('\n')
    )
}

/// Escapes the characters Markdown would read as markup, so text shows as written.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_characters_are_escaped() {
        assert_eq!(
            escape("election_safety *held*"),
            "election\\_safety \\*held\\*"
        );
    }

    #[test]
    fn a_code_fence_outlasts_the_backticks_inside() {
        assert_eq!(code_block("a ``` b", "sh"), "````sh\na ``` b\n````\n\n");
    }

    #[test]
    fn pipes_in_table_cells_do_not_split_columns() {
        let mut t = Table::new(&["a"]);
        t.push(vec!["x|y".to_string()]);
        assert!(table_md(&t).contains("| x\\|y |"));
    }
}
