//! The scenario library in `scenarios/` loads and round-trips.

use super::*;

#[test]
fn every_scenario_in_the_library_loads_and_round_trips() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return; // No library in this checkout.
    };
    let mut paths: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "ron"))
        .collect();
    paths.sort();
    for path in paths {
        let scenario = load(&path).unwrap_or_else(|error| panic!("{error}"));
        let text = to_ron(&scenario);
        assert_eq!(
            parse(&text, "copy.ron"),
            Ok(scenario),
            "{}:\n{text}",
            path.display()
        );
    }
}
