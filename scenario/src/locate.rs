//! Where a value sits in the RON source. Serde forgets positions once a file is read, so the
//! validation errors name the offending value by path (`faults[2].heal_after`,
//! `algorithm.election_timeout`, `faults[0].do[0]` for the first argument of a fault) and this
//! module finds that path's line and column in the text.
//!
//! It is a forgiving tokenizer and a small recursive-descent reader of RON's value grammar.
//! It never panics; on anything it does not understand it gives up, and errors then carry no
//! location. Lines and columns are 1-based; columns count characters, as ron's do.

use std::collections::BTreeMap;

/// 1-based line and column.
pub(crate) type Position = (usize, usize);

/// Deeper than anything a scenario can hold; ron stops at 128 levels itself.
const MAX_DEPTH: usize = 256;

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Open(char),
    Close(char),
    Comma,
    Colon,
    Hash,
    Bang,
    Ident(String),
    Literal,
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    at: Position,
}

/// Why the tokenizer stopped before the end of the text.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Unreadable {
    /// A block comment that opens here never closes.
    UnclosedComment(Position),
    /// Anything else it does not understand.
    Other,
}

/// The position of every value in `source`, by path; `None` if the text is not readable RON.
pub(crate) fn value_positions(source: &str) -> Option<BTreeMap<String, Position>> {
    let tokens = tokenize(source).ok()?;
    let mut reader = Reader {
        tokens: &tokens,
        next: 0,
        positions: BTreeMap::new(),
    };
    reader.attributes()?;
    reader.value(String::new(), 0)?;
    Some(reader.positions)
}

/// The position of the value at `path`, or of its nearest enclosing value that is written out
/// (a defaulted field has no text of its own).
pub(crate) fn find(positions: &BTreeMap<String, Position>, path: &str) -> Option<Position> {
    let mut path = path;
    loop {
        if let Some(position) = positions.get(path) {
            return Some(*position);
        }
        if path.is_empty() {
            return None;
        }
        path = parent(path);
    }
}

/// The parent of a path: `faults[2].do[0]` -> `faults[2].do` -> `faults[2]` -> `faults`.
fn parent(path: &str) -> &str {
    match path.rfind(['.', '[']) {
        Some(cut) => &path[..cut],
        None => "",
    }
}

/// The position just after the last character of `source`.
pub(crate) fn end_position(source: &str) -> Position {
    let line = 1 + source.chars().filter(|&c| c == '\n').count();
    let column = 1 + source.chars().rev().take_while(|&c| c != '\n').count();
    (line, column)
}

/// The char index of a 1-based line and column, if it is inside the text or at its end.
fn index_of(chars: &[char], at: Position) -> Option<usize> {
    let (line, column) = at;
    let mut current = (1, 1);
    for (index, &c) in chars.iter().enumerate() {
        if current == (line, column) {
            return Some(index);
        }
        current = if c == '\n' {
            (current.0 + 1, 1)
        } else {
            (current.0, current.1 + 1)
        };
    }
    (current == (line, column)).then_some(chars.len())
}

fn position_of(chars: &[char], index: usize) -> Position {
    chars.iter().take(index).fold((1, 1), |(line, column), &c| {
        if c == '\n' {
            (line + 1, 1)
        } else {
            (line, column + 1)
        }
    })
}

/// Moves from `at` past whitespace and comments to the next token; `None` if none follows.
/// ron reports some errors at the whitespace before the token it could not use.
pub(crate) fn skip_trivia_from(source: &str, at: Position) -> Option<Position> {
    let chars: Vec<char> = source.chars().collect();
    let mut index = index_of(&chars, at)?;
    loop {
        match (chars.get(index), chars.get(index + 1)) {
            (Some(c), _) if c.is_whitespace() => index += 1,
            (Some('/'), Some('/')) => {
                while chars.get(index).is_some_and(|&c| c != '\n') {
                    index += 1;
                }
            }
            (Some('/'), Some('*')) => index = skip_block_comment(&chars, index)?,
            (Some(_), _) => return Some(position_of(&chars, index)),
            (None, _) => return None,
        }
    }
}

/// ron reports a bad signed number at its first digit; step back to include its sign.
pub(crate) fn include_sign(source: &str, at: Position) -> Position {
    let chars: Vec<char> = source.chars().collect();
    match index_of(&chars, at) {
        Some(index)
            if index > 0
                && chars.get(index).is_some_and(char::is_ascii_digit)
                && matches!(chars[index - 1], '-' | '+') =>
        {
            position_of(&chars, index - 1)
        }
        _ => at,
    }
}

/// ron reports an error inside a string at its first character; step back to its opening
/// quote (and a raw string's `r#` or a byte string's `b`).
pub(crate) fn string_start(source: &str, at: Position) -> Position {
    let chars: Vec<char> = source.chars().collect();
    let Some(mut index) = index_of(&chars, at) else {
        return at;
    };
    if index == 0 || chars[index - 1] != '"' {
        return at;
    }
    index -= 1;
    while index > 0 && chars[index - 1] == '#' {
        index -= 1;
    }
    if index > 0 && chars[index - 1] == 'r' {
        index -= 1;
    }
    if index > 0 && chars[index - 1] == 'b' {
        index -= 1;
    }
    position_of(&chars, index)
}

/// The index just after a (nested) block comment starting at `start`; `None` if unclosed.
fn skip_block_comment(chars: &[char], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut index = start;
    loop {
        match (chars.get(index)?, chars.get(index + 1)) {
            ('/', Some('*')) => {
                depth += 1;
                index += 2;
            }
            ('*', Some('/')) => {
                depth -= 1;
                index += 2;
                if depth == 0 {
                    return Some(index);
                }
            }
            _ => index += 1,
        }
    }
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Where the block comment that never closes opens, when the text has one (outside strings)
/// and nothing before it stops the tokenizer.
pub(crate) fn unclosed_comment(source: &str) -> Option<Position> {
    match tokenize(source) {
        Err(Unreadable::UnclosedComment(at)) => Some(at),
        _ => None,
    }
}

/// The character at `at`, if `at` is inside the text.
pub(crate) fn char_at(source: &str, at: Position) -> Option<char> {
    let chars: Vec<char> = source.chars().collect();
    chars.get(index_of(&chars, at)?).copied()
}

/// The number written just before a `%` at `at`, with its position: `loss: 1%` gives `1`.
pub(crate) fn number_before_percent(source: &str, at: Position) -> Option<(Position, String)> {
    let chars: Vec<char> = source.chars().collect();
    let index = index_of(&chars, at)?;
    if chars.get(index) != Some(&'%') {
        return None;
    }
    let start = (0..index)
        .rev()
        .take_while(|&i| chars[i].is_ascii_digit() || chars[i] == '.')
        .last()?;
    let number: String = chars[start..index].iter().collect();
    number
        .contains(|c: char| c.is_ascii_digit())
        .then(|| (position_of(&chars, start), number))
}

fn tokenize(source: &str) -> Result<Vec<Token>, Unreadable> {
    let chars: Vec<char> = source.chars().collect();
    let mut tokens = Vec::new();
    let mut index = 0;
    let (mut line, mut column) = (1, 1);
    // Advances `index` to `to`, keeping line and column in step.
    let advance = |index: &mut usize, to: usize, line: &mut usize, column: &mut usize| {
        for &c in &chars[*index..to] {
            if c == '\n' {
                *line += 1;
                *column = 1;
            } else {
                *column += 1;
            }
        }
        *index = to;
    };
    while let Some(&c) = chars.get(index) {
        let next = chars.get(index + 1).copied();
        let at = (line, column);
        let (tok, end) = match c {
            c if c.is_whitespace() => (None, index + 1),
            '/' if next == Some('/') => {
                let mut end = index;
                while chars.get(end).is_some_and(|&c| c != '\n') {
                    end += 1;
                }
                (None, end)
            }
            '/' if next == Some('*') => (
                None,
                skip_block_comment(&chars, index).ok_or(Unreadable::UnclosedComment(at))?,
            ),
            '(' | '[' | '{' => (Some(Tok::Open(c)), index + 1),
            ')' | ']' | '}' => (Some(Tok::Close(c)), index + 1),
            ',' => (Some(Tok::Comma), index + 1),
            ':' => (Some(Tok::Colon), index + 1),
            '#' => (Some(Tok::Hash), index + 1),
            '!' => (Some(Tok::Bang), index + 1),
            '"' => (
                Some(Tok::Literal),
                unclosed(skip_quoted(&chars, index, '"'))?,
            ),
            '\'' => (
                Some(Tok::Literal),
                unclosed(skip_quoted(&chars, index, '\''))?,
            ),
            'b' if matches!(next, Some('"' | '\'')) => (
                Some(Tok::Literal),
                unclosed(skip_quoted(&chars, index + 1, next.unwrap_or('"')))?,
            ),
            'b' if next == Some('r') && raw_string_at(&chars, index + 1) => (
                Some(Tok::Literal),
                unclosed(skip_raw_string(&chars, index + 1))?,
            ),
            'r' if raw_string_at(&chars, index) => (
                Some(Tok::Literal),
                unclosed(skip_raw_string(&chars, index))?,
            ),
            'r' if next == Some('#') && chars.get(index + 2).is_some_and(|&c| is_ident_char(c)) => {
                // A raw identifier `r#name`.
                let end = scan(&chars, index + 2, is_ident_char);
                let name: String = chars[index + 2..end].iter().collect();
                (Some(Tok::Ident(name)), end)
            }
            c if is_ident_start(c) => {
                let end = scan(&chars, index, is_ident_char);
                let name: String = chars[index..end].iter().collect();
                (Some(Tok::Ident(name)), end)
            }
            c if c.is_ascii_digit() || matches!(c, '+' | '-' | '.') => {
                (Some(Tok::Literal), skip_number(&chars, index))
            }
            _ => return Err(Unreadable::Other),
        };
        if let Some(tok) = tok {
            tokens.push(Token { tok, at });
        }
        // Every branch consumes at least one character, so the loop ends.
        let to = end.max(index + 1).min(chars.len());
        advance(&mut index, to, &mut line, &mut column);
    }
    Ok(tokens)
}

/// A literal that runs to the end of the text.
fn unclosed(end: Option<usize>) -> Result<usize, Unreadable> {
    end.ok_or(Unreadable::Other)
}

fn scan(chars: &[char], from: usize, keep: impl Fn(char) -> bool) -> usize {
    let mut end = from;
    while chars.get(end).is_some_and(|&c| keep(c)) {
        end += 1;
    }
    end
}

/// The index after a quoted literal opening at `start`, honouring backslash escapes.
fn skip_quoted(chars: &[char], start: usize, quote: char) -> Option<usize> {
    let mut index = start + 1;
    loop {
        match chars.get(index)? {
            '\\' => index += 2,
            &c if c == quote => return Some(index + 1),
            _ => index += 1,
        }
    }
}

/// Whether `r"` or `r#...#"` starts at `start`.
fn raw_string_at(chars: &[char], start: usize) -> bool {
    chars.get(start) == Some(&'r') && chars.get(scan(chars, start + 1, |c| c == '#')) == Some(&'"')
}

/// The index after a raw string `r#"..."#` that starts at `start` (the `r`).
fn skip_raw_string(chars: &[char], start: usize) -> Option<usize> {
    let quote = scan(chars, start + 1, |c| c == '#');
    let hashes = quote - start - 1;
    let mut index = quote + 1;
    loop {
        if *chars.get(index)? == '"'
            && (1..=hashes).all(|offset| chars.get(index + offset) == Some(&'#'))
        {
            return Some(index + 1 + hashes);
        }
        index += 1;
    }
}

/// The index after a number (`12`, `-0.5`, `1e-3`, `0x1F`, `+inf`); generous on purpose.
fn skip_number(chars: &[char], start: usize) -> usize {
    let mut index = start + 1;
    while let Some(&c) = chars.get(index) {
        let exponent_sign = matches!(c, '+' | '-') && matches!(chars[index - 1], 'e' | 'E');
        if is_ident_char(c) || c == '.' || exponent_sign {
            index += 1;
        } else {
            break;
        }
    }
    index
}

struct Reader<'t> {
    tokens: &'t [Token],
    next: usize,
    positions: BTreeMap<String, Position>,
}

impl Reader<'_> {
    fn peek(&self, ahead: usize) -> Option<&Tok> {
        self.tokens.get(self.next + ahead).map(|token| &token.tok)
    }

    fn eat(&mut self, tok: &Tok) -> bool {
        let matched = self.peek(0) == Some(tok);
        if matched {
            self.next += 1;
        }
        matched
    }

    /// Skips `#![enable(...)]` attributes before the value.
    fn attributes(&mut self) -> Option<()> {
        while self.eat(&Tok::Hash) {
            if !self.eat(&Tok::Bang) || !self.eat(&Tok::Open('[')) {
                return None;
            }
            let mut depth = 1usize;
            while depth > 0 {
                match self.peek(0)? {
                    Tok::Open(_) => depth += 1,
                    Tok::Close(_) => depth -= 1,
                    _ => {}
                }
                self.next += 1;
            }
        }
        Some(())
    }

    fn value(&mut self, path: String, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        let token = self.tokens.get(self.next)?;
        self.next += 1;
        let tok = token.tok.clone();
        self.positions.entry(path.clone()).or_insert(token.at);
        match tok {
            Tok::Literal => Some(()),
            Tok::Ident(_) if self.eat(&Tok::Open('(')) => self.parenthesised(&path, depth),
            Tok::Ident(_) => Some(()),
            Tok::Open('(') => self.parenthesised(&path, depth),
            Tok::Open('[') => self.list(&path, depth),
            Tok::Open('{') => self.map(&path, depth),
            _ => None,
        }
    }

    /// The inside of `(...)`: struct fields `name: value` or positional tuple elements.
    fn parenthesised(&mut self, path: &str, depth: usize) -> Option<()> {
        let mut index = 0;
        loop {
            if self.eat(&Tok::Close(')')) {
                return Some(());
            }
            let child = match (self.peek(0), self.peek(1)) {
                (Some(Tok::Ident(name)), Some(Tok::Colon)) => {
                    let child = if path.is_empty() {
                        name.clone()
                    } else {
                        format!("{path}.{name}")
                    };
                    self.next += 2;
                    child
                }
                _ => {
                    index += 1;
                    format!("{path}[{}]", index - 1)
                }
            };
            self.value(child, depth + 1)?;
            if !self.eat(&Tok::Comma) {
                return self.eat(&Tok::Close(')')).then_some(());
            }
        }
    }

    fn list(&mut self, path: &str, depth: usize) -> Option<()> {
        let mut index = 0;
        loop {
            if self.eat(&Tok::Close(']')) {
                return Some(());
            }
            self.value(format!("{path}[{index}]"), depth + 1)?;
            index += 1;
            if !self.eat(&Tok::Comma) {
                return self.eat(&Tok::Close(']')).then_some(());
            }
        }
    }

    /// `{ key: value }`: no scenario field is a map, so entries get throwaway paths.
    fn map(&mut self, path: &str, depth: usize) -> Option<()> {
        let mut index = 0;
        loop {
            if self.eat(&Tok::Close('}')) {
                return Some(());
            }
            self.value(format!("{path}{{key {index}}}"), depth + 1)?;
            if !self.eat(&Tok::Colon) {
                return None;
            }
            self.value(format!("{path}{{{index}}}"), depth + 1)?;
            index += 1;
            if !self.eat(&Tok::Comma) {
                return self.eat(&Tok::Close('}')).then_some(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = r##"#![enable(implicit_some)]
Scenario( // the name is optional
    name: "a \"quoted\" name",
    algorithm: Raft(election_timeout: ("150ms", "300ms"), r#heartbeat: r#"50ms"#),
    /* a /* nested */ comment */ faults: [
        (at: "10s", do: Crash(Node(2)), heal_after: "2s"),
        (at: "12s", do: Partition(OneWay(from: Leader, to: All))),
    ],
    network: (loss: -0.5e-3, links: []),
    extra: { 1: 'x' },
)"##;

    #[test]
    fn every_value_is_found_by_its_path() {
        let positions = value_positions(SOURCE).expect("readable");
        let at = |path: &str| positions.get(path).copied();
        assert_eq!(at(""), Some((2, 1)));
        assert_eq!(at("name"), Some((3, 11)));
        assert_eq!(at("algorithm"), Some((4, 16)));
        assert_eq!(at("algorithm.election_timeout"), Some((4, 39)));
        assert_eq!(at("algorithm.election_timeout[1]"), Some((4, 49)));
        assert_eq!(at("algorithm.heartbeat"), Some((4, 72)));
        assert_eq!(at("faults"), Some((5, 42)));
        assert_eq!(at("faults[0].at"), Some((6, 14)));
        assert_eq!(at("faults[0].do"), Some((6, 25)));
        assert_eq!(at("faults[0].do[0]"), Some((6, 31)));
        assert_eq!(at("faults[0].do[0][0]"), Some((6, 36)));
        assert_eq!(at("faults[0].heal_after"), Some((6, 53)));
        assert_eq!(at("faults[1].do[0].from"), Some((7, 48)));
        assert_eq!(at("faults[1].do[0].to"), Some((7, 60)));
        assert_eq!(at("network.loss"), Some((9, 21)));
        assert_eq!(at("network.links"), Some((9, 37)));
    }

    #[test]
    fn a_path_that_is_not_written_out_falls_back_to_its_parent() {
        let positions = value_positions(SOURCE).expect("readable");
        assert_eq!(find(&positions, "algorithm.log_lengths"), Some((4, 16)));
        assert_eq!(find(&positions, "faults[1].heal_after"), Some((7, 9)));
        assert_eq!(find(&positions, "clocks.nodes[3].node"), Some((2, 1)));
        assert_eq!(parent("faults[2].do[0]"), "faults[2].do");
        assert_eq!(parent("faults[2]"), "faults");
        assert_eq!(parent("faults"), "");
    }

    #[test]
    fn unreadable_text_gives_up_instead_of_guessing() {
        for source in [
            "(a: \"unclosed",
            "(a: /* unclosed",
            "(a: 1",
            "(a: 1))",
            "(a: @)",
            "#!(x)",
        ] {
            let positions = value_positions(source);
            assert!(
                positions.is_none() || source == "(a: 1))",
                "{source}: {positions:?}"
            );
        }
    }

    #[test]
    fn trivia_is_skipped_to_reach_the_next_token() {
        let source = "(a:  // c\n  /* d */ 5)";
        assert_eq!(skip_trivia_from(source, (1, 4)), Some((2, 11)));
        assert_eq!(skip_trivia_from(source, (1, 1)), Some((1, 1)));
        assert_eq!(skip_trivia_from("(a:   ", (1, 4)), None);
        assert_eq!(skip_trivia_from("(a)", (9, 9)), None);
    }

    #[test]
    fn positions_inside_a_string_step_back_to_its_opening_quote() {
        assert_eq!(string_start("(a: \"5q\")", (1, 6)), (1, 5));
        assert_eq!(string_start("(a: r#\"5q\"#)", (1, 8)), (1, 5));
        assert_eq!(string_start("(a: 5)", (1, 5)), (1, 5));
        assert_eq!(end_position("(\n  a"), (2, 4));
    }

    #[test]
    fn positions_on_a_signed_number_step_back_to_its_sign() {
        assert_eq!(include_sign("(a: -3)", (1, 6)), (1, 5));
        assert_eq!(include_sign("(a: 3)", (1, 5)), (1, 5));
        assert_eq!(include_sign("(a: x-3)", (1, 4)), (1, 4));
    }
}
