//! A JUnit XML report of a hunt: one test case per invariant, failed when any seed broke it,
//! and a `completeness` case that says whether every planned seed ran: failed when a signal
//! cut the hunt short, skipped (visible, not failing) when a time budget ended it or `merge
//! --allow-partial` merged an incomplete set.

use super::summary::HuntSummary;
use splitbrain_sim::Invariant;
use std::fmt::Write;

/// Whether every planned seed ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Completeness {
    /// Every planned seed ran.
    Complete,
    /// Deliberately partial (a time budget, `merge --allow-partial`): the note says what ran.
    Partial(String),
    /// Cut short against the user's plan (a signal): a failure.
    Cut(String),
}

/// Renders the summary as JUnit XML (one suite; one case per invariant and unmet expectation,
/// and one for completeness).
pub fn render(summary: &HuntSummary, replay_hint: &str, completeness: &Completeness) -> String {
    let failed = summary.failures.iter().map(|group| {
        let seeds: Vec<String> = group.seeds.iter().map(u64::to_string).collect();
        let message = format!(
            "{} of {} seeds failed; first seed {}",
            group.count, summary.seeds_run, group.first_seed
        );
        let body = format!(
            "{}\nseeds: {}\n{}",
            group.detail,
            seeds.join(" "),
            replay_hint.replace("{seed}", &group.first_seed.to_string())
        );
        (group.key.clone(), message, body)
    });
    let properties = [("seeds_run", summary.seeds_run.to_string())];
    render_cases(
        &summary.scenario,
        &properties,
        failed.collect(),
        completeness,
    )
}

/// Renders a systematic search's verdict as JUnit XML, like [`render`]: one case per
/// invariant, failed by the counterexample's `failures` (`(key, detail)`), whose `steps`
/// and `replay` command go in each failure's body.
pub fn render_search(
    scenario: &str,
    failures: &[(String, String)],
    steps: &[String],
    replay: &str,
    completeness: &Completeness,
) -> String {
    let message = format!(
        "the systematic search's counterexample ({} steps) breaks it",
        steps.len()
    );
    let failed = failures.iter().map(|(key, detail)| {
        let body = format!("{detail}\nsteps:\n  {}\n{replay}", steps.join("\n  "));
        (key.clone(), message.clone(), body)
    });
    render_cases(scenario, &[], failed.collect(), completeness)
}

/// The suite: a case per invariant (and per other failed key), failed where `failed` (key,
/// message, body) says, and the completeness case.
fn render_cases(
    scenario: &str,
    properties: &[(&str, String)],
    failed: Vec<(String, String, String)>,
    completeness: &Completeness,
) -> String {
    let mut keys: Vec<String> = Invariant::ALL
        .iter()
        .map(|i| i.name().to_string())
        .collect();
    for (key, _, _) in &failed {
        if !keys.contains(key) {
            keys.push(key.clone());
        }
    }
    let failures = failed.len() + usize::from(matches!(completeness, Completeness::Cut(_)));
    let tests = keys.len() + 1;
    let classname = escape(scenario);
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        "<testsuites name=\"splitbrain hunt\" tests=\"{tests}\" failures=\"{failures}\">"
    );
    let _ = writeln!(
        xml,
        "  <testsuite name=\"{classname}\" tests=\"{tests}\" failures=\"{failures}\">"
    );
    let mut shown: Vec<String> = properties
        .iter()
        .map(|(name, value)| format!("<property name=\"{name}\" value=\"{}\"/>", escape(value)))
        .collect();
    shown.push(format!(
        "<property name=\"complete\" value=\"{}\"/>",
        *completeness == Completeness::Complete
    ));
    let _ = writeln!(xml, "    <properties>{}</properties>", shown.concat());
    for key in keys {
        let name = escape(&key);
        match failed.iter().find(|(k, _, _)| *k == key) {
            None => {
                let _ = writeln!(
                    xml,
                    "    <testcase classname=\"{classname}\" name=\"{name}\"/>"
                );
            }
            Some((_, message, body)) => {
                let _ = writeln!(
                    xml,
                    "    <testcase classname=\"{classname}\" name=\"{name}\">"
                );
                let _ = writeln!(
                    xml,
                    "      <failure message=\"{}\">{}</failure>",
                    escape(message),
                    escape(body)
                );
                let _ = writeln!(xml, "    </testcase>");
            }
        }
    }
    match completeness {
        Completeness::Complete => {
            let _ = writeln!(
                xml,
                "    <testcase classname=\"{classname}\" name=\"completeness\"/>"
            );
        }
        Completeness::Partial(note) => {
            let _ = writeln!(
                xml,
                "    <testcase classname=\"{classname}\" name=\"completeness\"><skipped message=\"{}\"/></testcase>",
                escape(note)
            );
        }
        Completeness::Cut(note) => {
            let _ = writeln!(
                xml,
                "    <testcase classname=\"{classname}\" name=\"completeness\"><failure message=\"{}\"/></testcase>",
                escape(note)
            );
        }
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

/// Escapes `text` for an XML attribute or element. Characters XML 1.0 does not allow at all
/// (control characters other than tab, line feed and carriage return; U+FFFE and U+FFFF) are
/// written visibly as `\u{...}`, so the file parses and the name still shows what was there.
/// A carriage return is written as a character reference, which parsers keep (a literal one
/// would become a line feed).
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\r' => out.push_str("&#13;"),
            c if !xml_allows(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// Whether XML 1.0 allows `c` in a document (its `Char` production; Rust strings hold no
/// surrogates).
fn xml_allows(c: char) -> bool {
    !matches!(c, '\u{0}'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characters_xml_forbids_are_written_visibly_and_the_rest_kept() {
        assert_eq!(
            escape("a\u{fffe}b\u{ffff}c\u{1}d\u{1b}"),
            "a\\u{fffe}b\\u{ffff}c\\u{1}d\\u{1b}"
        );
        assert_eq!(escape("x\ty\nz\r"), "x\ty\nz&#13;");
        assert_eq!(escape("<&>\"'"), "&lt;&amp;&gt;&quot;&apos;");
        assert_eq!(escape("é\u{fffd}\u{10000}"), "é\u{fffd}\u{10000}");
    }

    #[test]
    fn every_field_with_characters_xml_forbids_still_parses() {
        let odd = "n\u{fffe}a\u{ffff}m\u{0}e\u{1f}\r";
        let mut builder = crate::hunt::summary::SummaryBuilder::new(odd);
        builder.add(&crate::hunt::record::SeedRecord {
            seed: 7,
            outcome: "safety_mismatch".to_string(),
            failures: vec![crate::hunt::record::Failure {
                key: format!("key{odd}"),
                at_ns: None,
                nodes: Vec::new(),
                detail: format!("detail{odd}"),
            }],
            events: 1,
            coverage: Default::default(),
            nemesis: None,
            unobserved: Vec::new(),
            reference_failed: Vec::new(),
            downtime: Default::default(),
        });
        let summary = builder.finish();
        for completeness in [
            Completeness::Complete,
            Completeness::Partial(format!("note{odd}")),
            Completeness::Cut(format!("note{odd}")),
        ] {
            let xml = render(&summary, &format!("replay{odd} {{seed}}"), &completeness);
            let doc = roxmltree::Document::parse(&xml).expect("the report parses");
            let suite = doc
                .descendants()
                .find(|n| n.has_tag_name("testsuite"))
                .expect("a suite");
            assert_eq!(
                suite.attribute("name"),
                Some("n\\u{fffe}a\\u{ffff}m\\u{0}e\\u{1f}\r")
            );
            let failure = doc
                .descendants()
                .find(|n| n.has_tag_name("failure"))
                .expect("a failure");
            let text = failure.text().unwrap();
            assert!(
                text.starts_with("detailn\\u{fffe}a\\u{ffff}m\\u{0}e\\u{1f}\r\n"),
                "{text:?}"
            );
        }
    }
}
