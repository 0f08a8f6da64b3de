//! `report.html`: one self-contained page. Styles are inline and charts are inline SVG (crisp
//! at any zoom, searchable, a third the size of the PNGs); nothing is fetched. SVG text names
//! DejaVu Sans first, the font the charts were laid out with, then Verdana, which has nearly
//! the same metrics.

use crate::chart::Chart;
use crate::doc::{format_seeds, Block, ReportDoc};
use crate::markdown::seed_count;
use crate::table::{DataTable, Table};

const STYLE: &str = "
body { font-family: 'DejaVu Sans', Verdana, sans-serif; color: #212121; margin: 0; background: #fafafa; }
main { max-width: 1240px; margin: 0 auto; padding: 24px 32px 64px; background: #fff; }
h1 { font-size: 28px; margin: 8px 0 16px; }
h2 { font-size: 22px; margin: 36px 0 12px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
p, li { line-height: 1.5; max-width: 80ch; }
pre { background: #f4f4f4; padding: 10px 14px; overflow-x: auto; border-radius: 4px; }
code, pre { font-family: 'DejaVu Sans Mono', Menlo, Consolas, monospace; font-size: 14px; }
dl.meta { display: grid; grid-template-columns: max-content auto; gap: 4px 16px; }
dl.meta dt { font-weight: bold; }
dl.meta dd { margin: 0; }
nav ol { columns: 2; }
table { border-collapse: collapse; margin: 12px 0 20px; font-size: 14px; }
th, td { border: 1px solid #ddd; padding: 4px 10px; text-align: left; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 16px 0 28px; }
figure svg { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 14px; color: #555; margin-top: 4px; }
";

/// Renders `doc` as a standalone HTML page.
pub(crate) fn render(doc: &ReportDoc, charts: &[&Chart], data: &[DataTable]) -> String {
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str(&format!("<title>{}</title>\n", escape(&doc.title)));
    out.push_str(&format!(
        "<style>{STYLE}</style>\n</head>\n<body>\n<main>\n"
    ));
    out.push_str(&format!("<h1>{}</h1>\n", escape(&doc.title)));

    out.push_str("<dl class=\"meta\">\n");
    out.push_str(&format!(
        "<dt>command</dt><dd><pre>{}</pre></dd>\n",
        escape(&doc.command)
    ));
    out.push_str(&format!(
        "<dt>seeds</dt><dd>{} ({})</dd>\n",
        escape(&format_seeds(&doc.seeds)),
        seed_count(&doc.seeds)
    ));
    for (name, value) in &doc.facts {
        out.push_str(&format!(
            "<dt>{}</dt><dd>{}</dd>\n",
            escape(name),
            escape(value)
        ));
    }
    out.push_str("</dl>\n");

    if doc.sections.len() > 2 {
        out.push_str("<nav><ol>\n");
        for (i, section) in doc.sections.iter().enumerate() {
            out.push_str(&format!(
                "<li><a href=\"#s{}\">{}</a></li>\n",
                i + 1,
                escape(&section.heading)
            ));
        }
        out.push_str("</ol></nav>\n");
    }

    for (i, section) in doc.sections.iter().enumerate() {
        out.push_str(&format!(
            "<section id=\"s{}\">\n<h2>{}</h2>\n",
            i + 1,
            escape(&section.heading)
        ));
        for block in &section.blocks {
            match block {
                Block::Text(text) => out.push_str(&format!("<p>{}</p>\n", escape(text))),
                Block::List(items) => {
                    out.push_str("<ul>\n");
                    for item in items {
                        out.push_str(&format!("<li>{}</li>\n", escape(item)));
                    }
                    out.push_str("</ul>\n");
                }
                Block::Table(table) => out.push_str(&table_html(table)),
                Block::Code(code) => out.push_str(&format!("<pre>{}</pre>\n", escape(code))),
                Block::Chart(name) => {
                    let chart = charts
                        .iter()
                        .find(|c| &c.name == name)
                        .expect("charts were checked to exist");
                    out.push_str(&chart_html(chart));
                }
            }
        }
        out.push_str("</section>\n");
    }

    if !data.is_empty() {
        out.push_str("<section>\n<h2>Data files</h2>\n<ul>\n");
        for table in data {
            out.push_str(&format!(
                "<li><code>{0}</code>: <a href=\"{0}.csv\">CSV</a>, <a href=\"{0}.json\">JSON</a> \
                 ({1} rows)</li>\n",
                escape(&table.name),
                table.rows.len()
            ));
        }
        out.push_str("</ul>\n</section>\n");
    }
    out.push_str("</main>\n</body>\n</html>\n");
    out
}

fn chart_html(chart: &Chart) -> String {
    format!(
        "<figure id=\"{name}\">\n{svg}\n<figcaption>{title}: <a href=\"{name}.png\">PNG</a>, \
         <a href=\"{name}.svg\">SVG</a>, data as <a href=\"{name}.csv\">CSV</a> and \
         <a href=\"{name}.json\">JSON</a></figcaption>\n</figure>\n",
        name = chart.name,
        title = escape(&chart.title),
        svg = inline_svg(&chart.svg, &chart.title)
    )
}

/// The chart's SVG document as an element of the page, labelled for screen readers.
fn inline_svg(svg: &str, title: &str) -> String {
    let svg = svg.trim();
    match svg.strip_prefix("<svg ") {
        Some(rest) => format!(
            "<svg role=\"img\" aria-label=\"{}\" {}",
            escape(title),
            rest
        ),
        None => svg.to_string(),
    }
}

fn table_html(table: &Table) -> String {
    let mut out = String::from("<table>\n<thead><tr>");
    for h in &table.header {
        out.push_str(&format!("<th>{}</th>", escape(h)));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in &table.rows {
        out.push_str("<tr>");
        for cell in row {
            if looks_numeric(cell) {
                out.push_str(&format!("<td class=\"num\">{}</td>", escape(cell)));
            } else {
                out.push_str(&format!("<td>{}</td>", escape(cell)));
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
    out
}

/// A number, maybe with a unit or percent sign (`12`, `-3.5`, `312ms`, `1.2s`, `40%`): right
/// aligned so digits line up.
fn looks_numeric(s: &str) -> bool {
    let s = s.strip_prefix('-').unwrap_or(s);
    s.starts_with(|c: char| c.is_ascii_digit())
        && s.chars()
            .all(|c| c.is_ascii_digit() || ".,%µmunsh".contains(c))
}

/// Escapes text for HTML element content and attribute values.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_special_characters_are_escaped() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    #[test]
    fn numbers_with_units_are_right_aligned_and_words_are_not() {
        assert!(looks_numeric("312ms"));
        assert!(looks_numeric("-1.5"));
        assert!(looks_numeric("40%"));
        assert!(!looks_numeric("raft"));
        assert!(!looks_numeric("n2"));
        assert!(!looks_numeric("2 leaders"));
    }
}
