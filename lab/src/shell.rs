//! Command lines as a user types them: the replay commands of reproducers, hunts, compares
//! and sweeps.

/// Quotes a command-line word when a shell would need it.
pub fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=,:+@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::shell_word;

    #[test]
    fn plain_words_stay_and_others_are_quoted_so_that_a_shell_reads_them_back() {
        assert_eq!(
            shell_word("scenarios/raft-nemesis.ron"),
            "scenarios/raft-nemesis.ron"
        );
        assert_eq!(shell_word("stall=2s,5s"), "stall=2s,5s");
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("my file.ron"), "'my file.ron'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
    }
}
