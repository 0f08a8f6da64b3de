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
            // Every refusal of a text says where and what to do.
            prop_assert!(
                error.location.is_some(),
                "no location: {} in {:?}",
                rendered,
                source
            );
            let hint = error.hint().unwrap_or_default();
            prop_assert!(
                !hint.trim().is_empty(),
                "no hint: {} in {:?}",
                rendered,
                source
            );
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

/// The shipped scenarios, read once.
fn shipped() -> &'static [String] {
    static FILES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    FILES.get_or_init(|| {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .expect("the scenario library")
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|path| path.extension().is_some_and(|e| e == "ron"))
            .collect();
        paths.sort();
        paths
            .iter()
            .map(|path| std::fs::read_to_string(path).expect("a shipped scenario"))
            .collect()
    })
}

/// The text split into tokens a person edits: words, numbers, strings, comments, single
/// punctuation, and the whitespace between them.
fn tokens(source: &str) -> Vec<String> {
    let chars: Vec<char> = source.chars().collect();
    let mut tokens = Vec::new();
    let mut index = 0;
    while index < chars.len() {
        let c = chars[index];
        let word = |c: char| c.is_alphanumeric() || matches!(c, '_' | '.' | '-' | '+');
        let end = if c == '"' {
            let close = chars[index + 1..].iter().position(|&c| c == '"');
            close.map_or(chars.len(), |offset| index + offset + 2)
        } else if c == '/' && chars.get(index + 1) == Some(&'/') {
            let newline = chars[index..].iter().position(|&c| c == '\n');
            newline.map_or(chars.len(), |offset| index + offset)
        } else if word(c) {
            index + chars[index..].iter().take_while(|&&c| word(c)).count()
        } else if c.is_whitespace() {
            index
                + chars[index..]
                    .iter()
                    .take_while(|c| c.is_whitespace())
                    .count()
        } else {
            index + 1
        };
        tokens.push(chars[index..end].iter().collect());
        index = end;
    }
    tokens
}

/// Values of the wrong type or out of range, and names in the wrong place.
const REPLACEMENTS: &[&str] = &[
    "-1",
    "0",
    "1.5",
    "1e400",
    "NaN",
    "18446744073709551616",
    "18446744073709551615",
    "4294967296",
    "1000000000001",
    "10001",
    "\"x\"",
    "\"0s\"",
    "\"-1s\"",
    "\"876601h\"",
    "true",
    "[]",
    "()",
    "Leader",
    "Service",
    "Node(99)",
    "Some(1)",
    "None",
    "Raft()",
    "Etcd()",
];

#[derive(Clone, Debug)]
enum TokenMutation {
    Delete(usize),
    Duplicate(usize),
    Swap(usize, usize),
    Replace(usize, usize),
}

fn token_mutation() -> impl Strategy<Value = TokenMutation> {
    prop_oneof![
        any::<usize>().prop_map(TokenMutation::Delete),
        any::<usize>().prop_map(TokenMutation::Duplicate),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| TokenMutation::Swap(a, b)),
        (any::<usize>(), 0..REPLACEMENTS.len()).prop_map(|(a, r)| TokenMutation::Replace(a, r)),
    ]
}

/// A shipped scenario with some of its non-blank tokens deleted, doubled, swapped or replaced.
fn mutate_tokens(source: &str, mutations: &[TokenMutation]) -> String {
    let mut tokens = tokens(source);
    for mutation in mutations {
        let solid: Vec<usize> = (0..tokens.len())
            .filter(|&i| !tokens[i].trim().is_empty())
            .collect();
        if solid.is_empty() {
            break;
        }
        let pick = |i: usize| solid[i % solid.len()];
        match *mutation {
            TokenMutation::Delete(i) => {
                tokens.remove(pick(i));
            }
            TokenMutation::Duplicate(i) => {
                let at = pick(i);
                tokens.insert(at, tokens[at].clone());
            }
            TokenMutation::Swap(a, b) => tokens.swap(pick(a), pick(b)),
            TokenMutation::Replace(i, r) => tokens[pick(i)] = REPLACEMENTS[r].to_string(),
        }
    }
    tokens.concat()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Bad files made from the library: every refusal has a location and a hint (checked by
    /// [`check`]), whatever was broken.
    #[test]
    fn mutated_shipped_scenarios_are_refused_with_a_location_and_a_hint(
        file in any::<prop::sample::Index>(),
        mutations in proptest::collection::vec(token_mutation(), 1..4),
    ) {
        let source = file.get(shipped());
        check(&mutate_tokens(source, &mutations))?;
    }
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
