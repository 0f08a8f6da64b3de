//! `sweep --designs a,b`: a scenario with `designs` runs only the designs named.

use splitbrain_scenario::{self as scenario, Scenario};
use thiserror::Error;

/// A `--designs` list the scenario cannot run.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum DesignsError {
    /// The scenario lists no designs to choose from.
    #[error("--designs {given}: this scenario lists no `designs`\n  hint: drop --designs to run its algorithm, {algorithm}")]
    NoDesigns {
        /// The list as given, comma-separated.
        given: String,
        /// The scenario's algorithm.
        algorithm: &'static str,
    },
    /// A name that is none of the scenario's designs.
    #[error("no design named {name:?}\n  hint: {}", unknown_hint(name, designs))]
    Unknown {
        /// The name as given.
        name: String,
        /// The scenario's designs, in its order.
        designs: Vec<String>,
    },
    /// A design named twice.
    #[error("design {name:?} is given twice in --designs\n  hint: give each design once")]
    Repeated {
        /// The name.
        name: String,
    },
}

fn unknown_hint(name: &str, designs: &[String]) -> String {
    let names: Vec<&str> = designs.iter().map(String::as_str).collect();
    let list = format!("its designs are {}", names.join(", "));
    match scenario::suggest(name, &names) {
        Some(best) => format!("did you mean `{best}`? {list}"),
        None => list,
    }
}

/// `scenario` with only the designs `names`, in that order; an error naming the designs it
/// has when one is not among them.
pub fn only_designs(scenario: &Scenario, names: &[String]) -> Result<Scenario, DesignsError> {
    if scenario.designs.is_empty() {
        return Err(DesignsError::NoDesigns {
            given: names.join(","),
            algorithm: scenario.algorithm.name(),
        });
    }
    let mut chosen = Vec::new();
    for (i, name) in names.iter().enumerate() {
        if names[..i].contains(name) {
            return Err(DesignsError::Repeated { name: name.clone() });
        }
        let Some(design) = scenario.designs.iter().find(|d| &d.name == name) else {
            return Err(DesignsError::Unknown {
                name: name.clone(),
                designs: scenario.designs.iter().map(|d| d.name.clone()).collect(),
            });
        };
        chosen.push(design.clone());
    }
    let mut s = scenario.clone();
    s.designs = chosen;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DESIGNS: &str = r#"Scenario(
        algorithm: Raft(),
        duration: "10s",
        designs: [
            (name: "fast", algorithm: Raft(heartbeat: "50ms")),
            (name: "slow", algorithm: Raft(heartbeat: "100ms")),
            (name: "bully", algorithm: Bully()),
        ],
    )"#;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn only_the_named_designs_run_in_the_order_given() {
        let scenario = scenario::parse(DESIGNS, "designs.ron").unwrap();
        let s = only_designs(&scenario, &names(&["bully", "fast"])).unwrap();
        let kept: Vec<&str> = s.designs.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(kept, ["bully", "fast"]);
    }

    #[test]
    fn an_unknown_or_repeated_design_is_an_error_listing_the_designs() {
        let scenario = scenario::parse(DESIGNS, "designs.ron").unwrap();
        let error = only_designs(&scenario, &names(&["fats"]))
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "no design named \"fats\"\n  hint: did you mean `fast`? its designs are fast, slow, bully"
        );
        let error = only_designs(&scenario, &names(&["slow", "slow"])).unwrap_err();
        assert!(matches!(error, DesignsError::Repeated { .. }), "{error}");
        let plain = scenario::parse(r#"Scenario(algorithm: Raft(), duration: "10s")"#, "p.ron");
        let error = only_designs(&plain.unwrap(), &names(&["fast"]))
            .unwrap_err()
            .to_string();
        assert!(error.contains("lists no `designs`"), "{error}");
    }
}
