//! No input makes the loader panic.

use super::*;
use proptest::prelude::*;

/// Text fragments that are likely to reach deep into the loader when spliced in.
const FRAGMENTS: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "'",
    "//",
    "/*",
    "*/",
    "#",
    "r#",
    "\n",
    "-",
    "+",
    ".",
    "0",
    "99999999999999999999999",
    "NaN",
    "inf",
    "-1",
    "1e400",
    "Leader",
    "Node(99)",
    "AllCrashed",
    "Service",
    "liveness",
    "heal_after: \"0s\"",
    "\"0s\"",
    "\"-3s\"",
    "\"1.5ns\"",
    "Some(",
    "None",
    "é",
    "\u{feff}",
    "\\",
    "Partiton",
    "Groups([[0,0]])",
    "#![enable(unwrap_newtypes)]",
];

#[derive(Clone, Debug)]
enum Mutation {
    Delete { at: usize, len: usize },
    Insert { at: usize, fragment: usize },
    Duplicate { at: usize, len: usize, to: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1usize..40).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (any::<usize>(), 0..FRAGMENTS.len())
            .prop_map(|(at, fragment)| Mutation::Insert { at, fragment }),
        (any::<usize>(), 1usize..60, any::<usize>())
            .prop_map(|(at, len, to)| Mutation::Duplicate { at, len, to }),
    ]
}

fn mutate(source: &str, mutations: &[Mutation]) -> String {
    let mut chars: Vec<char> = source.chars().collect();
    for mutation in mutations {
        let n = chars.len().max(1);
        match *mutation {
            Mutation::Delete { at, len } => {
                let start = at % n;
                let end = (start + len).min(chars.len());
                if start < end {
                    chars.drain(start..end);
                }
            }
            Mutation::Insert { at, fragment } => {
                let at = (at % (chars.len() + 1)).min(chars.len());
                let text: Vec<char> = FRAGMENTS[fragment].chars().collect();
                chars.splice(at..at, text);
            }
            Mutation::Duplicate { at, len, to } => {
                let start = at % n;
                let end = (start + len).min(chars.len());
                let slice: Vec<char> = chars
                    .get(start..end)
                    .map(<[char]>::to_vec)
                    .unwrap_or_default();
                let to = to % (chars.len() + 1);
                chars.splice(to..to, slice);
            }
        }
    }
    chars.into_iter().collect()
}

/// Parsing never panics; errors render and point inside the text; successes round-trip.
fn check(source: &str) -> Result<(), TestCaseError> {
    match parse(source, ORIGIN) {
        Ok(scenario) => {
            let text = to_ron(&scenario);
            prop_assert_eq!(parse(&text, ORIGIN), Ok(scenario), "{}", text);
        }
        Err(error) => {
            let rendered = error.to_string();
            prop_assert!(rendered.starts_with(ORIGIN));
            if let Some((line, column)) = error.location {
                let lines: Vec<&str> = source.split('\n').collect();
                prop_assert!(
                    line >= 1 && line <= lines.len(),
                    "{} in {:?}",
                    rendered,
                    source
                );
                prop_assert!(
                    column >= 1 && column <= lines[line - 1].chars().count() + 1,
                    "{} in {:?}",
                    rendered,
                    source
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_text_never_panics(source in any::<String>()) {
        check(&source)?;
    }

    #[test]
    fn ron_shaped_text_never_panics(source in "[()\\[\\],:a-zA-Z0-9_\" .#!/*-]{0,120}") {
        check(&source)?;
    }

    #[test]
    fn mutated_valid_files_never_panic(mutations in proptest::collection::vec(mutation(), 1..6)) {
        check(&mutate(FULL_EXAMPLE, &mutations))?;
    }
}
