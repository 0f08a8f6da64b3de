//! Errors ron finds (syntax, types, unknown names, durations), with their positions and hints.

use super::*;

#[test]
fn a_misspelt_fault_kind_renders_exactly_with_a_suggestion() {
    let source = format!("Scenario(\n{}    algorithm: Raft(),\n    faults: [(at: \"1s\", do:\n      Partiton(Isolate(Leader)))],\n)", "\n".repeat(8));
    assert_eq!(
        error_of(&source).to_string(),
        "scenarios/x.ron:12:7: unknown fault kind `Partiton`\n  hint: did you mean `Partition`?"
    );
}

#[test]
fn a_misspelt_field_renders_exactly_with_a_suggestion() {
    let source = "Scenario(\n    algorithm: Raft(elction_timeout: (\"1s\", \"2s\")),\n)";
    assert_eq!(
        error_of(source).to_string(),
        "scenarios/x.ron:2:21: unknown field `elction_timeout` in `Raft` settings\n  \
         hint: did you mean `election_timeout`?"
    );
}

#[test]
fn a_misspelt_ring_variant_renders_exactly_with_a_suggestion() {
    let source = "Scenario(\n    algorithm: Ring(variant: ChangRobert),\n)";
    assert_eq!(
        error_of(source).to_string(),
        "scenarios/x.ron:2:30: unknown ring variant `ChangRobert`\n  \
         hint: did you mean `ChangRoberts`?"
    );
}

#[test]
fn a_bad_duration_points_at_its_string_and_lists_the_units() {
    let source = "Scenario(\n    algorithm: Raft(),\n    duration: \"5 parsecs\",\n)";
    assert_eq!(
        error_of(source).to_string(),
        "scenarios/x.ron:3:15: invalid duration \"5 parsecs\": unexpected character ` `\n  \
         hint: a duration is a number and a unit (h, m, s, ms, us, ns), like \"150ms\", \
         \"1.5s\" or \"1m30s\""
    );
}

#[test]
fn ron_errors_point_at_the_offending_token() {
    let cases: &[(&str, &str)] = &[
        ("(algorithm: Raft(), faults: [(at: \"1s\", do: @Partiton(Leader))])", "unknown fault kind `Partiton`"),
        ("(algorithm: Raft(), faults: [(at: \"1s\", do: Crash(@Leadr))])", "unknown target `Leadr`"),
        ("(algorithm: @Paxos())", "unknown algorithm `Paxos`"),
        ("(algorithm: Raft(variant: @Broken))", "unknown raft variant `Broken`"),
        ("(algorithm: Ring(variant: @ChangRobert))", "unknown ring variant `ChangRobert`"),
        ("(algorithm: Ring(order: @Shuffled))", "unknown ring order `Shuffled`"),
        ("(algorithm: Ring(initiators: @Everyone))", "unknown ring initiators `Everyone`"),
        ("(algorithm: Bully(@heartbeats: \"1s\"))", "unknown field `heartbeats` in `Bully` settings"),
        ("(algorithm: Ring(@ack: \"1s\"))", "unknown field `ack` in `Ring` settings"),
        ("(algorithm: Raft(), network: (latency: @Normal(\"1ms\")))", "unknown latency distribution `Normal`"),
        ("(algorithm: Raft(), faults: [(at: \"1s\", do: Partition(@Split))])", "unknown partition shape `Split`"),
        ("(algorithm: Raft(), expect: Violates([@election_safty]))", "unknown invariant `election_safty`"),
        ("(algorithm: Raft(), expect: @Unsafe)", "unknown expectation `Unsafe`"),
        ("(algorithm: Raft(), @seeds: 3)", "unknown field `seeds` in the scenario"),
        ("(algorithm: Raft(), faults: [(at: \"1s\", @dp: Heal)])", "unknown field `dp` in a fault"),
        ("(algorithm: Raft(), network: (links: [(from: 0, to: 1, @lose: 0.1)]))", "unknown field `lose` in a link override"),
        ("(algorithm: Raft(), clocks: (nodes: [(node: 0, @drift: 1)]))", "unknown field `drift` in a clock override"),
        ("(algorithm: Raft(), faults: [(at: \"1s\", do: Partition(OneWay(from: Leader, @too: All)))])", "unknown field `too` in `OneWay`"),
        ("(seed: 1@)", "missing field `algorithm` in the scenario"),
        ("(algorithm: Raft(), faults: [(do: Heal@)])", "missing field `at` in a fault"),
        ("(algorithm: Raft(), @algorithm: Raft())", "field `algorithm` appears twice in the scenario"),
        ("@Scenery(algorithm: Raft())", "expected `Scenario(...)` or `(...)`, found `Scenery(...)`"),
        ("(algorithm: Raft(), duration: @\"1x\")", "invalid duration \"1x\": unknown unit `x`"),
        ("(algorithm: Raft(), duration: @\"-1s\")", "invalid duration \"-1s\": negative duration (only clock jumps take a sign)"),
        ("(algorithm: Raft(), faults: [(at: \"1s\", do: ClockJump(Leader, @\"3\"))])", "invalid duration \"3\": missing unit after `3`"),
        ("(algorithm: Raft(), faults: [(at: \"1s\", do: Pause(Leader@))])", "`Pause` takes 2 values, found 1"),
        ("(algorithm: Raft(election_timeout: (\"1s\"@)))", "this tuple takes 2 values, found 1"),
        ("(algorithm: Raft(), seed: @\"7\")", "expected a whole number"),
        ("(algorithm: Raft(), seed: 7 @8)", "expected a comma"),
        ("(algorithm: Raft(), duration: @60)", "expected a duration string such as \"150ms\", found the unsigned integer `60`"),
        ("(algorithm: Raft(), faults: [(at: \"1s\", do: ClockJump(Leader, @-3))])", "expected a duration string such as \"-3s\", found the signed integer `-3`"),
        ("(algorithm: Raft@)", "expected `(`"),
        ("(algorithm: Raft(), expect: Violates([@\"election_safety\"]))", "expected a name"),
        ("(algorithm: Raft(), seed: @99999999999999999999999)", "number out of range"),
        ("(algorithm: Raft()) @extra", "unexpected text after the end of the scenario"),
        ("(algorithm: Raft(), faults: [@", "unexpected end of file"),
        ("@[]", "expected `Scenario(...)` or `(...)`"),
    ];
    for (marked, message) in cases {
        assert_error_at(marked, message);
    }
}

#[test]
fn unknown_names_far_from_any_valid_one_list_the_valid_ones() {
    let error = error_of("(algorithm: Raft(), expect: Violates([quorum]))");
    assert_eq!(
        error.hint().as_deref(),
        Some("expected one of `election_safety`, `fencing_safety`, `term_monotonic`")
    );
}

#[test]
fn an_empty_file_says_what_a_scenario_looks_like() {
    for source in ["", "  \n", "// only a comment\n"] {
        assert_eq!(
            error_of(source).to_string(),
            "scenarios/x.ron:1:1: the scenario file is empty\n  hint: a scenario file holds one \
             `Scenario(...)`, e.g. `Scenario(algorithm: Raft())`"
        );
    }
}

#[test]
fn a_missing_algorithm_says_how_to_name_one() {
    let error = error_of("Scenario(seed: 1)");
    assert_eq!(
        error.hint().as_deref(),
        Some("every scenario names its algorithm, e.g. `algorithm: Raft()`")
    );
}

#[test]
fn a_bad_clock_jump_shows_the_signed_duration_hint() {
    let error =
        error_of("(algorithm: Raft(), faults: [(at: \"1s\", do: ClockJump(Leader, \"--3s\"))])");
    assert!(
        error
            .to_string()
            .contains("hint: a clock jump or offset is a duration with an optional sign"),
        "{error}"
    );
}

#[test]
fn a_file_that_cannot_be_read_is_an_error_without_a_location() {
    let error = load(Path::new("/nonexistent/dir/missing.ron")).unwrap_err();
    assert_eq!(error.origin, "/nonexistent/dir/missing.ron");
    assert_eq!(error.location, None);
    assert!(matches!(*error.kind, ErrorKind::Read { .. }));
    assert!(
        error
            .to_string()
            .starts_with("/nonexistent/dir/missing.ron: cannot read the scenario: no such file"),
        "{error}"
    );
}

#[test]
fn a_file_on_disk_loads_and_is_named_after_its_stem() {
    let dir = std::env::temp_dir().join(format!("splitbrain-scenario-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("from-disk.ron");
    std::fs::write(&path, "(algorithm: Raft())").expect("write");
    let loaded = load(&path);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(loaded.expect("valid").name, "from-disk");
}

#[test]
fn an_unclosed_block_comment_is_reported_where_it_opens() {
    let cases: &[&str] = &[
        "@/* hello",
        "// a line comment\n  @/* a /* nested */ comment that never ends",
        "Scenario(algorithm: Raft()) @/* trailing",
        "Scenario(name: \"/* in a string */\", algorithm: @/* x /* y */ Raft())",
    ];
    for marked in cases {
        assert_error_at(marked, "unclosed block comment");
        let (source, _) = unmark(marked);
        assert_eq!(
            error_of(&source).hint().as_deref(),
            Some(
                "this `/*` has no matching `*/`; block comments nest, so every `/*` inside it \
                 needs its own `*/`"
            )
        );
    }
}

#[test]
fn a_percentage_is_reported_with_the_fraction_to_write_instead() {
    let (source, location) = unmark("(algorithm: Raft(), network: (loss: @12.5%))");
    let error = error_of(&source);
    assert_eq!(error.location, Some(location));
    assert_eq!(
        error.to_string(),
        format!(
            "scenarios/x.ron:{}:{}: `12.5%` is not a number\n  hint: RON has no percentages; a \
             probability is a fraction between 0 and 1: write `0.125` for 12.5%",
            location.0, location.1
        )
    );
    assert_error_at(
        "(algorithm: Raft(), network: (loss: @1%))",
        "`1%` is not a number",
    );
    let long = format!(
        "(algorithm: Raft(), network: (loss: {}%))",
        "1".repeat(1_000_000)
    );
    let error = error_of(&long);
    assert_eq!(
        error.message(),
        format!("`{}…%` is not a number", "1".repeat(40))
    );
    assert!(error.to_string().len() < 300, "{error}");
}

#[test]
fn a_control_character_is_named_instead_of_what_ron_expected_there() {
    assert_error_at(
        "Scenario(algorithm: Raft(),@\u{0})",
        "unexpected control character U+0000",
    );
    assert_error_at("@\u{7}", "unexpected control character U+0007");
}

#[test]
fn a_huge_unknown_name_is_echoed_cut_short_with_the_list_of_valid_names() {
    let name = "A".repeat(1_000_000);
    let source = format!("(algorithm: Raft(), faults: [(at: \"1s\", do: {name}(Leader))])");
    let error = error_of(&source);
    assert_eq!(
        error.message(),
        format!("unknown fault kind `{}…`", "A".repeat(40))
    );
    assert!(
        error
            .hint()
            .is_some_and(|hint| hint.starts_with("expected one of `Crash`")),
        "{error}"
    );
    let field = format!("(algorithm: Raft({}: 1))", "é".repeat(100_000));
    assert_eq!(
        error_of(&field).message(),
        format!("unknown field `{}…` in `Raft` settings", "é".repeat(40))
    );
}

#[test]
fn a_huge_bad_duration_is_echoed_cut_short() {
    let source = format!(
        "(algorithm: Raft(), duration: \"{}x\")",
        "1".repeat(1_000_000)
    );
    assert_eq!(
        error_of(&source).message(),
        format!("invalid duration \"{}…\": unknown unit `x`", "1".repeat(40))
    );
}

#[test]
fn text_that_is_not_a_scenario_is_an_error_not_a_crash() {
    let deep = |open: &str| {
        format!(
            "Scenario(algorithm: Raft(), faults: {})",
            open.repeat(100_000)
        )
    };
    let cases = [
        "[".repeat(100_000),
        "(".repeat(100_000),
        deep("["),
        deep("("),
        format!("(algorithm: Raft(), name: \"{}\"", "x".repeat(1_000_000)),
    ];
    for source in &cases {
        let error = error_of(source);
        assert!(error.location.is_some(), "{error}");
    }
}

#[test]
fn invisible_and_look_alike_characters_are_named_at_their_place_with_a_hint() {
    let cases = [
        // ron read this as one comment line: "empty".
        (
            "// a comment@\rScenario(algorithm: Raft())\r",
            "a carriage return (U+000D) without a line feed after it",
        ),
        // ron said "expected a whole number" at the 3.
        (
            "Scenario(nodes:@\u{A0}3, algorithm: Raft())",
            "unexpected character U+00A0 NO-BREAK SPACE",
        ),
        // ron said "unknown field `alg`".
        (
            "Scenario(nodes: 3, alg@\u{AD}orithm: Raft())",
            "unexpected character U+00AD SOFT HYPHEN",
        ),
        (
            "Scenario(algorithm: Raft(),@\u{200B} seed: 1)",
            "unexpected character U+200B ZERO WIDTH SPACE",
        ),
        (
            "Scenario(algorithm: Raft(), name: \"a@\u{200D}b\")",
            "unexpected character U+200D ZERO WIDTH JOINER",
        ),
        (
            "Scenario(algorithm:@\u{FEFF} Raft())",
            "unexpected character U+FEFF ZERO WIDTH NO-BREAK SPACE (byte-order mark)",
        ),
        (
            "// @\u{202E}txet desrever\nScenario(algorithm: Raft())",
            "unexpected character U+202E RIGHT-TO-LEFT OVERRIDE",
        ),
        (
            "Scenario(algorithm: Raft(), name: @\u{201C}x\u{201D})",
            "unexpected character U+201C LEFT DOUBLE QUOTATION MARK",
        ),
        (
            "Scenario(algorithm: Raft(), clocks: (nodes: [(node: 0, drift_ppm: @\u{2212}5)]))",
            "unexpected character U+2212 MINUS SIGN",
        ),
        (
            "Scenario(\r\n  algorithm: Raft(),@\u{3000}\r\n)",
            "unexpected character U+3000 IDEOGRAPHIC SPACE",
        ),
    ];
    for (marked, message) in cases {
        assert_error_at(marked, message);
        let (source, _) = unmark(marked);
        let hint = error_of(&source).hint().unwrap_or_default();
        assert!(!hint.is_empty(), "{source:?}");
    }
}

#[test]
fn unusual_characters_stay_allowed_where_they_are_only_text() {
    // In comments (but for bidi controls and a lone CR), and spaces, quotes and dashes in
    // strings; CRLF line endings are ordinary.
    for source in [
        "// caf\u{E9}\u{A0}\u{AD}\u{200B} \u{201C}quoted\u{201D} \u{2013}\nScenario(algorithm: Raft())",
        "/* \u{A0}\u{FEFF} */ Scenario(algorithm: Raft())",
        "Scenario(\r\n    name: \"r\u{E9}sum\u{E9}\u{A0}\u{2013} \u{201C}x\u{201D}\",\r\n    algorithm: Raft(),\r\n)\r\n",
        "Scenario(name: r#\"a \" \u{A0} b\"#, algorithm: Raft())",
    ] {
        parsed(source);
    }
}
