//! A look at the text before ron reads it, for characters that look like nothing or like
//! something else: ron's complaint about them points past them or names the wrong thing
//! (a no-break space before a digit is "expected a whole number" at the digit, a soft hyphen
//! inside `algorithm` is "unknown field `alg`", and a file with CR-only line endings that
//! starts with a `//` comment is one comment, so "empty").
//!
//! Refused, each at its own line and column:
//! - anywhere: a carriage return not followed by a line feed (ron ends lines and `//`
//!   comments only at a line feed) and bidirectional controls (they reorder what an editor
//!   shows, so the text read is not the text seen);
//! - outside comments: invisible characters (soft hyphen, zero-width spaces and joiners, a
//!   byte-order mark after the start);
//! - outside strings and comments: control characters, spaces other than the ASCII space and
//!   tab, typographic quotes and dashes.

use super::error::{ErrorKind, ScenarioError};
use super::locate::Position;

/// The first character `source` may not hold where it stands, as an error in `origin`.
pub(crate) fn check(source: &str, origin: &str) -> Result<(), ScenarioError> {
    match first_unusual(source) {
        Some((at, kind)) => Err(ScenarioError::new(origin, Some(at), kind)),
        None => Ok(()),
    }
}

/// Where the scanner is: what a character there means.
#[derive(Clone, Copy, PartialEq)]
enum Context {
    Code,
    LineComment,
    /// Nested block comments, this deep.
    BlockComment(usize),
    /// A `"..."` string (or a `'.'` character, ended by `quote`).
    Quoted {
        quote: char,
        escaped: bool,
    },
    /// A raw string `r#"..."#` with this many `#`.
    Raw(usize),
}

fn first_unusual(source: &str) -> Option<(Position, ErrorKind)> {
    let chars: Vec<char> = source.chars().collect();
    let mut context = Context::Code;
    let (mut line, mut column) = (1, 1);
    let mut index = 0;
    while let Some(&c) = chars.get(index) {
        if let Some(kind) = refused(c, chars.get(index + 1).copied(), context) {
            return Some(((line, column), kind));
        }
        // A token of several characters (`//`, `/*`, `*/`, `r#"`, `"#`) is all ASCII.
        let consumed;
        (context, consumed) = step(&chars, index, context);
        for &c in &chars[index..index + consumed] {
            (line, column) = if c == '\n' {
                (line + 1, 1)
            } else {
                (line, column + 1)
            };
        }
        index += consumed;
    }
    None
}

/// The context after the token at `index`, and how many characters it took (at least 1).
fn step(chars: &[char], index: usize, context: Context) -> (Context, usize) {
    let c = chars[index];
    let next = chars.get(index + 1).copied();
    match context {
        Context::Code => match (c, next) {
            ('/', Some('/')) => (Context::LineComment, 2),
            ('/', Some('*')) => (Context::BlockComment(1), 2),
            ('"', _) => (
                Context::Quoted {
                    quote: '"',
                    escaped: false,
                },
                1,
            ),
            // A character literal `'x'`; a lone `'` elsewhere is ron's to refuse.
            ('\'', _) => (
                Context::Quoted {
                    quote: '\'',
                    escaped: false,
                },
                1,
            ),
            ('r', _) if raw_string_opens(chars, index) => {
                let hashes = chars[index + 1..].iter().take_while(|&&c| c == '#').count();
                (Context::Raw(hashes), hashes + 2)
            }
            _ => (Context::Code, 1),
        },
        Context::LineComment if c == '\n' => (Context::Code, 1),
        Context::LineComment => (Context::LineComment, 1),
        Context::BlockComment(depth) => match (c, next) {
            ('/', Some('*')) => (Context::BlockComment(depth + 1), 2),
            ('*', Some('/')) if depth == 1 => (Context::Code, 2),
            ('*', Some('/')) => (Context::BlockComment(depth - 1), 2),
            _ => (context, 1),
        },
        Context::Quoted { quote, escaped } => match c {
            _ if escaped => (
                Context::Quoted {
                    quote,
                    escaped: false,
                },
                1,
            ),
            '\\' => (
                Context::Quoted {
                    quote,
                    escaped: true,
                },
                1,
            ),
            c if c == quote => (Context::Code, 1),
            _ => (context, 1),
        },
        Context::Raw(hashes) => {
            let closes = c == '"'
                && chars.len() >= index + 1 + hashes
                && chars[index + 1..index + 1 + hashes]
                    .iter()
                    .all(|&c| c == '#');
            if closes {
                (Context::Code, 1 + hashes)
            } else {
                (context, 1)
            }
        }
    }
}

/// Whether a raw string `r"`, `r#"`, ... opens at `index` (not inside an identifier).
fn raw_string_opens(chars: &[char], index: usize) -> bool {
    let in_word = index > 0 && (chars[index - 1].is_alphanumeric() || chars[index - 1] == '_');
    let hashes = chars[index + 1..].iter().take_while(|&&c| c == '#').count();
    !in_word && chars.get(index + 1 + hashes) == Some(&'"')
}

/// Why `c` may not stand in `context`, if it may not. `next` tells a lone carriage return.
fn refused(c: char, next: Option<char>, context: Context) -> Option<ErrorKind> {
    if c == '\r' && next != Some('\n') {
        return Some(ErrorKind::LoneCarriageReturn);
    }
    let class = class_of(c)?;
    let in_comment = matches!(context, Context::LineComment | Context::BlockComment(_));
    let in_string = matches!(context, Context::Quoted { .. } | Context::Raw(_));
    let refuse = match class {
        CharClass::Bidi => true,
        CharClass::Invisible => !in_comment,
        CharClass::Control | CharClass::Space | CharClass::Quote | CharClass::Dash => {
            !in_comment && !in_string
        }
    };
    if !refuse {
        return None;
    }
    Some(match class {
        CharClass::Control => ErrorKind::ControlCharacter { code: c.into() },
        _ => ErrorKind::UnusualCharacter {
            code: c.into(),
            name: char_name(c),
            class,
        },
    })
}

/// What kind of trouble a character is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CharClass {
    /// Reorders the text an editor shows.
    Bidi,
    /// Shows as nothing.
    Invisible,
    /// A control character other than tab, line feed and carriage return.
    Control,
    /// Shows as a space, but is not the ASCII space or tab.
    Space,
    /// A typographic quote, where RON takes `"`.
    Quote,
    /// A typographic dash or minus, where RON takes `-`.
    Dash,
}

fn class_of(c: char) -> Option<CharClass> {
    let class = match c {
        '\t' | '\n' | '\r' => return None,
        '\u{61C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' => {
            CharClass::Bidi
        }
        '\u{AD}'
        | '\u{34F}'
        | '\u{180E}'
        | '\u{200B}'..='\u{200D}'
        | '\u{2060}'..='\u{2064}'
        | '\u{FEFF}' => CharClass::Invisible,
        // NEXT LINE is a C1 control too, but shows (and is meant) as a line break.
        '\u{85}'
        | '\u{A0}'
        | '\u{1680}'
        | '\u{2000}'..='\u{200A}'
        | '\u{2028}'
        | '\u{2029}'
        | '\u{202F}'
        | '\u{205F}'
        | '\u{3000}' => CharClass::Space,
        c if c.is_control() => CharClass::Control,
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{201C}' | '\u{201D}'
        | '\u{201E}' | '\u{201F}' | '\u{AB}' | '\u{BB}' | '\u{2032}' | '\u{2033}' => {
            CharClass::Quote
        }
        '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{FE63}' | '\u{FF0D}' => CharClass::Dash,
        _ => return None,
    };
    Some(class)
}

/// The Unicode name of a character [`class_of`] knows (control characters have none).
fn char_name(c: char) -> &'static str {
    match c {
        '\u{61C}' => "ARABIC LETTER MARK",
        '\u{200E}' => "LEFT-TO-RIGHT MARK",
        '\u{200F}' => "RIGHT-TO-LEFT MARK",
        '\u{202A}' => "LEFT-TO-RIGHT EMBEDDING",
        '\u{202B}' => "RIGHT-TO-LEFT EMBEDDING",
        '\u{202C}' => "POP DIRECTIONAL FORMATTING",
        '\u{202D}' => "LEFT-TO-RIGHT OVERRIDE",
        '\u{202E}' => "RIGHT-TO-LEFT OVERRIDE",
        '\u{2066}' => "LEFT-TO-RIGHT ISOLATE",
        '\u{2067}' => "RIGHT-TO-LEFT ISOLATE",
        '\u{2068}' => "FIRST STRONG ISOLATE",
        '\u{2069}' => "POP DIRECTIONAL ISOLATE",
        '\u{AD}' => "SOFT HYPHEN",
        '\u{34F}' => "COMBINING GRAPHEME JOINER",
        '\u{180E}' => "MONGOLIAN VOWEL SEPARATOR",
        '\u{200B}' => "ZERO WIDTH SPACE",
        '\u{200C}' => "ZERO WIDTH NON-JOINER",
        '\u{200D}' => "ZERO WIDTH JOINER",
        '\u{2060}' => "WORD JOINER",
        '\u{2061}' => "FUNCTION APPLICATION",
        '\u{2062}' => "INVISIBLE TIMES",
        '\u{2063}' => "INVISIBLE SEPARATOR",
        '\u{2064}' => "INVISIBLE PLUS",
        '\u{FEFF}' => "ZERO WIDTH NO-BREAK SPACE (byte-order mark)",
        '\u{85}' => "NEXT LINE",
        '\u{A0}' => "NO-BREAK SPACE",
        '\u{1680}' => "OGHAM SPACE MARK",
        '\u{2000}' => "EN QUAD",
        '\u{2001}' => "EM QUAD",
        '\u{2002}' => "EN SPACE",
        '\u{2003}' => "EM SPACE",
        '\u{2004}' => "THREE-PER-EM SPACE",
        '\u{2005}' => "FOUR-PER-EM SPACE",
        '\u{2006}' => "SIX-PER-EM SPACE",
        '\u{2007}' => "FIGURE SPACE",
        '\u{2008}' => "PUNCTUATION SPACE",
        '\u{2009}' => "THIN SPACE",
        '\u{200A}' => "HAIR SPACE",
        '\u{2028}' => "LINE SEPARATOR",
        '\u{2029}' => "PARAGRAPH SEPARATOR",
        '\u{202F}' => "NARROW NO-BREAK SPACE",
        '\u{205F}' => "MEDIUM MATHEMATICAL SPACE",
        '\u{3000}' => "IDEOGRAPHIC SPACE",
        '\u{2018}' => "LEFT SINGLE QUOTATION MARK",
        '\u{2019}' => "RIGHT SINGLE QUOTATION MARK",
        '\u{201A}' => "SINGLE LOW-9 QUOTATION MARK",
        '\u{201B}' => "SINGLE HIGH-REVERSED-9 QUOTATION MARK",
        '\u{201C}' => "LEFT DOUBLE QUOTATION MARK",
        '\u{201D}' => "RIGHT DOUBLE QUOTATION MARK",
        '\u{201E}' => "DOUBLE LOW-9 QUOTATION MARK",
        '\u{201F}' => "DOUBLE HIGH-REVERSED-9 QUOTATION MARK",
        '\u{AB}' => "LEFT-POINTING DOUBLE ANGLE QUOTATION MARK",
        '\u{BB}' => "RIGHT-POINTING DOUBLE ANGLE QUOTATION MARK",
        '\u{2032}' => "PRIME",
        '\u{2033}' => "DOUBLE PRIME",
        '\u{2010}' => "HYPHEN",
        '\u{2011}' => "NON-BREAKING HYPHEN",
        '\u{2012}' => "FIGURE DASH",
        '\u{2013}' => "EN DASH",
        '\u{2014}' => "EM DASH",
        '\u{2015}' => "HORIZONTAL BAR",
        '\u{2212}' => "MINUS SIGN",
        '\u{FE63}' => "SMALL HYPHEN-MINUS",
        '\u{FF0D}' => "FULLWIDTH HYPHEN-MINUS",
        _ => "",
    }
}

impl CharClass {
    /// What to do about a character of this class.
    pub(crate) fn hint(self) -> &'static str {
        match self {
            CharClass::Bidi => {
                "bidirectional controls reorder what an editor shows, so the text read is not \
                 the text seen: delete it (`cat -A` or an editor's \"show invisibles\" reveals it)"
            }
            CharClass::Invisible => {
                "it shows as nothing but splits the word or number it is in (often pasted from \
                 a web page or a word processor): delete it and retype the text around it"
            }
            CharClass::Control => {
                "RON is plain text: remove the character (a NUL byte or other binary data \
                 suggests this is not a text file)"
            }
            CharClass::Space => {
                "it looks like a space but RON does not read it as one (often pasted from a web \
                 page or a word processor): replace it with an ordinary space"
            }
            CharClass::Quote => {
                "RON strings are in straight double quotes: write \"150ms\", not \u{201C}150ms\u{201D} \
                 (a word processor's smart quotes)"
            }
            CharClass::Dash => {
                "write a minus sign or a hyphen as the ASCII `-` (U+002D HYPHEN-MINUS)"
            }
        }
    }
}
