//! A JUnit XML report of a hunt: one test case per invariant, failed when any seed broke it.

use super::summary::HuntSummary;
use splitbrain_sim::Invariant;
use std::fmt::Write;

/// Renders the summary as JUnit XML (one suite; one case per invariant and unmet expectation).
pub fn render(summary: &HuntSummary, replay_hint: &str) -> String {
    let mut keys: Vec<String> = Invariant::ALL
        .iter()
        .map(|i| i.name().to_string())
        .collect();
    for group in &summary.failures {
        if !keys.contains(&group.key) {
            keys.push(group.key.clone());
        }
    }
    let failures = summary.failures.len();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        "<testsuites name=\"splitbrain hunt\" tests=\"{}\" failures=\"{failures}\">",
        keys.len()
    );
    let _ = writeln!(
        xml,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\">",
        escape(&summary.scenario),
        keys.len()
    );
    let _ = writeln!(
        xml,
        "    <properties><property name=\"seeds_run\" value=\"{}\"/></properties>",
        summary.seeds_run
    );
    for key in keys {
        let name = escape(&key);
        match summary.failures.iter().find(|g| g.key == key) {
            None => {
                let _ = writeln!(
                    xml,
                    "    <testcase classname=\"{}\" name=\"{name}\"/>",
                    escape(&summary.scenario)
                );
            }
            Some(group) => {
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
                let _ = writeln!(
                    xml,
                    "    <testcase classname=\"{}\" name=\"{name}\">",
                    escape(&summary.scenario)
                );
                let _ = writeln!(
                    xml,
                    "      <failure message=\"{}\">{}</failure>",
                    escape(&message),
                    escape(&body)
                );
                let _ = writeln!(xml, "    </testcase>");
            }
        }
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => {}
            c => out.push(c),
        }
    }
    out
}
