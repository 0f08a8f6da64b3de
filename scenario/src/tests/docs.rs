//! The examples in `docs/scenario-format.md` are valid.

use super::*;

#[test]
fn every_scenario_example_in_the_format_reference_is_valid() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/scenario-format.md");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return; // No docs in this checkout.
    };
    let blocks: Vec<&str> = text
        .split("```ron\n")
        .skip(1)
        .filter_map(|rest| rest.split("```").next())
        .filter(|block| block.contains("Scenario("))
        .collect();
    assert!(
        blocks.len() >= 2,
        "the reference shows a minimal and a complete example"
    );
    for block in blocks {
        if let Err(error) = parse(block, "docs/scenario-format.md") {
            panic!("{error}\n--- block:\n{block}");
        }
    }
}

#[test]
fn the_complete_example_in_the_reference_is_the_one_tested_here() {
    let scenario = parsed(FULL_EXAMPLE);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/scenario-format.md");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return;
    };
    let complete = text
        .split("```ron\n")
        .filter_map(|rest| rest.split("```").next())
        .find(|block| block.contains("Resign(Leader)"))
        .expect("the complete example");
    assert_eq!(parse(complete, ORIGIN), Ok(scenario));
}
