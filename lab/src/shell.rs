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

/// A program's command line (program and arguments) as a user would type it, each word
/// quoted when a shell would need it, and any control character escaped (`\u{1b}`): the line
/// is printed, and must not drive the terminal it is printed to.
pub fn command_line(words: &[String]) -> String {
    let quoted: Vec<String> = words.iter().map(|w| shell_word(w)).collect();
    quoted
        .join(" ")
        .chars()
        .map(|c| {
            if c.is_control() {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{command_line, shell_word};

    #[test]
    fn a_command_line_is_quoted_and_its_control_characters_escaped() {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            command_line(&words(&["python3", "my node.py", "--x"])),
            "python3 'my node.py' --x"
        );
        assert_eq!(
            command_line(&words(&["sh", "-c", "\u{1b}[2Jrm"])),
            "sh -c '\\u{1b}[2Jrm'"
        );
    }

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
