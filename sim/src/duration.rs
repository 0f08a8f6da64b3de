//! Durations in scenario files: strings such as `"150ms"`, `"1.5s"` or `"1m30s"`, read exactly
//! into nanoseconds (no floating point, no rounding) and written back the same way.
//!
//! Grammar: one or more components `<digits>[.<digits>]<unit>`, units strictly from largest to
//! smallest (`h`, `m`, `s`, `ms`, `us` or `µs`, `ns`), no spaces. A fraction must come out to a
//! whole number of nanoseconds. Signed durations (clock jumps) take one leading `-` or `+`.

use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde::{Serialize, Serializer};
use std::fmt;
use thiserror::Error;

use crate::time::{NANOS_PER_MICRO, NANOS_PER_MILLI, NANOS_PER_SEC};

const NANOS_PER_MIN: u64 = 60 * NANOS_PER_SEC;
const NANOS_PER_HOUR: u64 = 60 * NANOS_PER_MIN;

/// The units, largest first, with their rank (`us` and `µs` are one unit).
const UNITS: [(&str, u64, u8); 7] = [
    ("h", NANOS_PER_HOUR, 0),
    ("m", NANOS_PER_MIN, 1),
    ("s", NANOS_PER_SEC, 2),
    ("ms", NANOS_PER_MILLI, 3),
    ("us", NANOS_PER_MICRO, 4),
    ("µs", NANOS_PER_MICRO, 4),
    ("ns", 1, 5),
];

/// The hint printed under a duration error.
pub const DURATION_HINT: &str =
    "a duration is a number and a unit (h, m, s, ms, us, ns), like \"150ms\", \"1.5s\" or \"1m30s\"";

/// The hint printed under a signed duration error (clock jumps).
pub const SIGNED_DURATION_HINT: &str =
    "a clock jump or offset is a duration with an optional sign, like \"-3s\", \"+250ms\" or \"1m30s\"";

/// Why a duration string was rejected.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum DurationError {
    /// The string is empty (`""`).
    #[error("empty duration")]
    Empty,
    /// A number ends the string without a unit (`"150"`).
    #[error("missing unit after `{number}`")]
    MissingUnit {
        /// The number as written.
        number: String,
    },
    /// A unit that is none of `h`, `m`, `s`, `ms`, `us`, `µs`, `ns` (`"3sec"`).
    #[error("unknown unit `{unit}`")]
    UnknownUnit {
        /// The unit as written.
        unit: String,
    },
    /// A unit without a number before it (`"ms"`).
    #[error("missing number before `{unit}`")]
    MissingNumber {
        /// The unit as written.
        unit: String,
    },
    /// A number with an empty part or two points (`".5s"`, `"1.s"`, `"1.2.3s"`).
    #[error("malformed number `{number}`")]
    MalformedNumber {
        /// The number as written.
        number: String,
    },
    /// A character that is neither a digit, a point nor a letter (`"1s 500ms"`).
    #[error("unexpected character `{found}`")]
    UnexpectedChar {
        /// The character.
        found: char,
    },
    /// A `-` on a duration that cannot be negative.
    #[error("negative duration (only clock jumps take a sign)")]
    Negative,
    /// A `+` on a duration that takes no sign.
    #[error("a `+` sign is only allowed in clock jumps")]
    UnexpectedSign,
    /// A unit no smaller than the one before it (`"500ms1s"`, `"1s1s"`).
    #[error("unit `{unit}` comes after `{previous}`: units go from largest to smallest")]
    UnitsOutOfOrder {
        /// The unit out of order.
        unit: String,
        /// The unit before it.
        previous: String,
    },
    /// A fraction finer than a nanosecond (`"1.5ns"`).
    #[error("`{component}` is not a whole number of nanoseconds")]
    NotWholeNanoseconds {
        /// The component (number and unit) as written.
        component: String,
    },
    /// More nanoseconds than the target type holds.
    #[error("duration too long (the longest is {max})")]
    Overflow {
        /// The longest duration, written as a duration string.
        max: String,
    },
}

/// Parses an unsigned duration into nanoseconds: `"150ms"`, `"2s"`, `"1m30s"`, `"1.5s"`, `"0s"`.
pub fn parse_duration(text: &str) -> Result<u64, DurationError> {
    match text.chars().next() {
        Some('-') => return Err(DurationError::Negative),
        Some('+') => return Err(DurationError::UnexpectedSign),
        _ => {}
    }
    let magnitude = parse_magnitude(text)?;
    u64::try_from(magnitude).map_err(|_| DurationError::Overflow {
        max: format_duration_ron(u64::MAX),
    })
}

/// Parses a signed duration into nanoseconds (clock jumps): `"-3s"`, `"+2s"`, `"500ms"`.
pub fn parse_signed_duration(text: &str) -> Result<i64, DurationError> {
    let (negative, rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let magnitude = parse_magnitude(rest)?;
    let overflow = || DurationError::Overflow {
        max: format_signed_duration_ron(i64::MAX),
    };
    if negative {
        // i64::MIN has no positive counterpart, so negate in i128.
        i64::try_from(-(magnitude as i128)).map_err(|_| overflow())
    } else {
        i64::try_from(magnitude).map_err(|_| overflow())
    }
}

/// Reads the unsigned components; the result may exceed `u64` (callers range-check it).
fn parse_magnitude(text: &str) -> Result<u128, DurationError> {
    if text.is_empty() {
        return Err(DurationError::Empty);
    }
    let chars: Vec<char> = text.chars().collect();
    let mut total: u128 = 0;
    let mut previous: Option<(u8, String)> = None;
    let mut at = 0;
    while at < chars.len() {
        let number_start = at;
        while at < chars.len() && (chars[at].is_ascii_digit() || chars[at] == '.') {
            at += 1;
        }
        let number: String = chars[number_start..at].iter().collect();
        let unit_start = at;
        while at < chars.len() && chars[at].is_alphabetic() {
            at += 1;
        }
        let unit: String = chars[unit_start..at].iter().collect();
        if number.is_empty() && unit.is_empty() {
            return Err(DurationError::UnexpectedChar { found: chars[at] });
        }
        if number.is_empty() {
            return Err(DurationError::MissingNumber { unit });
        }
        if unit.is_empty() {
            return match chars.get(at) {
                Some(&found) => Err(DurationError::UnexpectedChar { found }),
                None => Err(DurationError::MissingUnit { number }),
            };
        }
        let Some(&(_, unit_ns, rank)) = UNITS.iter().find(|(name, _, _)| *name == unit) else {
            return Err(DurationError::UnknownUnit { unit });
        };
        if let Some((previous_rank, previous)) = &previous
            && rank <= *previous_rank
        {
            return Err(DurationError::UnitsOutOfOrder {
                unit,
                previous: previous.clone(),
            });
        }
        let nanos = component_nanos(&number, &unit, unit_ns)?;
        previous = Some((rank, unit));
        total = total.checked_add(nanos).ok_or_else(overflow_error)?;
    }
    Ok(total)
}

fn overflow_error() -> DurationError {
    DurationError::Overflow {
        max: format_duration_ron(u64::MAX),
    }
}

/// One `<digits>[.<digits>]` times its unit, exactly.
fn component_nanos(number: &str, unit: &str, unit_ns: u64) -> Result<u128, DurationError> {
    let malformed = || DurationError::MalformedNumber {
        number: number.to_string(),
    };
    let (whole, fraction) = match number.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (number, None),
    };
    if whole.is_empty() || fraction.is_some_and(|f| f.is_empty() || f.contains('.')) {
        return Err(malformed());
    }
    let mut nanos: u128 = 0;
    for digit in whole.bytes() {
        nanos = nanos
            .checked_mul(10)
            .and_then(|n| n.checked_add(u128::from(digit - b'0')))
            .ok_or_else(overflow_error)?;
    }
    nanos = nanos
        .checked_mul(u128::from(unit_ns))
        .ok_or_else(overflow_error)?;
    let fraction = fraction.unwrap_or("").trim_end_matches('0');
    if fraction.is_empty() {
        return Ok(nanos);
    }
    // A unit is at most 2^13 * 3^2 * 5^11 ns, so a fraction with more than 13 significant
    // digits can never be whole nanoseconds; 24 digits keep the arithmetic inside u128.
    let not_whole = || DurationError::NotWholeNanoseconds {
        component: format!("{number}{unit}"),
    };
    if fraction.len() > 24 {
        return Err(not_whole());
    }
    let numerator: u128 = fraction
        .bytes()
        .fold(0u128, |acc, digit| acc * 10 + u128::from(digit - b'0'));
    let denominator = 10u128.pow(fraction.len() as u32);
    let scaled = numerator * u128::from(unit_ns);
    if !scaled.is_multiple_of(denominator) {
        return Err(not_whole());
    }
    nanos
        .checked_add(scaled / denominator)
        .ok_or_else(overflow_error)
}

/// Writes nanoseconds as a duration string that [`parse_duration`] reads back exactly:
/// `0s`, `150ms`, `1.5s`, `1m30s`, `2h`, `1m0.5s` is written `1m500ms`.
pub fn format_duration_ron(ns: u64) -> String {
    if ns == 0 {
        return "0s".to_string();
    }
    let mut out = String::new();
    let hours = ns / NANOS_PER_HOUR;
    let minutes = (ns % NANOS_PER_HOUR) / NANOS_PER_MIN;
    let rest = ns % NANOS_PER_MIN;
    if hours > 0 {
        out.push_str(&format!("{hours}h"));
    }
    if minutes > 0 {
        out.push_str(&format!("{minutes}m"));
    }
    if rest > 0 {
        // Below a minute: the largest unit that fits, with an exact decimal fraction.
        let (unit, unit_ns) = [
            ("s", NANOS_PER_SEC),
            ("ms", NANOS_PER_MILLI),
            ("us", NANOS_PER_MICRO),
            ("ns", 1),
        ]
        .into_iter()
        .find(|(_, unit_ns)| rest >= *unit_ns)
        .unwrap_or(("ns", 1));
        out.push_str(&exact_decimal(rest, unit_ns));
        out.push_str(unit);
    }
    out
}

/// Writes a signed duration: a leading `-` when negative, none otherwise.
pub fn format_signed_duration_ron(ns: i64) -> String {
    if ns < 0 {
        format!("-{}", format_duration_ron(ns.unsigned_abs()))
    } else {
        format_duration_ron(ns.unsigned_abs())
    }
}

/// `value / unit` as an exact decimal without trailing zeros (`unit` is a power of ten).
fn exact_decimal(value: u64, unit: u64) -> String {
    let whole = value / unit;
    let fraction = value % unit;
    if fraction == 0 {
        return whole.to_string();
    }
    let width = unit.ilog10() as usize;
    let digits = format!("{fraction:0width$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

/// What a duration field expects, in type errors.
pub const DURATION_EXPECTED: &str = "a duration string such as \"150ms\"";
/// What a signed duration field expects, in type errors.
pub const SIGNED_DURATION_EXPECTED: &str = "a duration string such as \"-3s\"";

/// Prefixes of the serde custom messages that carry a bad duration's text to the error
/// converter, which re-parses it into a structured [`DurationError`].
pub const DURATION_MARKER: &str = "\u{0}splitbrain-duration\u{0}";
/// The prefix of the serde custom message that carries a bad signed duration's text.
pub const SIGNED_DURATION_MARKER: &str = "\u{0}splitbrain-signed-duration\u{0}";

/// An unsigned duration read from a RON string, in nanoseconds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DurationText(pub u64);

/// Written back as the exact string it reads from (`"150ms"`).
impl Serialize for DurationText {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&format_duration_ron(self.0))
    }
}

/// A signed duration read from a RON string, in nanoseconds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SignedDurationText(pub i64);

/// Written back as the exact string it reads from (`"-3s"`).
impl Serialize for SignedDurationText {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&format_signed_duration_ron(self.0))
    }
}

struct DurationVisitor;

impl Visitor<'_> for DurationVisitor {
    type Value = DurationText;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(DURATION_EXPECTED)
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<DurationText, E> {
        // Parsed here so that ron reports the error at the string's position.
        parse_duration(text)
            .map(DurationText)
            .map_err(|_| E::custom(format!("{DURATION_MARKER}{text}")))
    }
}

impl<'de> Deserialize<'de> for DurationText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // `any`, not `str`: a number such as `5` then reaches the visitor, and the error says
        // that a duration string was expected rather than just "a string".
        deserializer.deserialize_any(DurationVisitor)
    }
}

struct SignedDurationVisitor;

impl Visitor<'_> for SignedDurationVisitor {
    type Value = SignedDurationText;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(SIGNED_DURATION_EXPECTED)
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<SignedDurationText, E> {
        parse_signed_duration(text)
            .map(SignedDurationText)
            .map_err(|_| E::custom(format!("{SIGNED_DURATION_MARKER}{text}")))
    }
}

impl<'de> Deserialize<'de> for SignedDurationText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(SignedDurationVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const S: u64 = NANOS_PER_SEC;
    const MS: u64 = NANOS_PER_MILLI;

    #[test]
    fn durations_in_every_unit_parse_to_exact_nanoseconds() {
        let table: [(&str, u64); 16] = [
            ("0s", 0),
            ("0ns", 0),
            ("10ns", 10),
            ("500us", 500_000),
            ("500µs", 500_000),
            ("150ms", 150 * MS),
            ("2s", 2 * S),
            ("1.5s", 1_500 * MS),
            ("1.50s", 1_500 * MS),
            ("0.000000001s", 1),
            ("1m30s", 90 * S),
            ("1m", 60 * S),
            ("2h", 7_200 * S),
            ("1h2m3s4ms5us6ns", 3_723 * S + 4 * MS + 5_000 + 6),
            ("1.5ms", 1_500_000),
            ("0.25h", 900 * S),
        ];
        for (text, expected) in table {
            assert_eq!(parse_duration(text), Ok(expected), "{text}");
        }
    }

    #[test]
    fn malformed_durations_are_rejected_with_a_reason() {
        let table: [(&str, DurationError); 14] = [
            ("", DurationError::Empty),
            ("5", DurationError::MissingUnit { number: "5".into() }),
            ("5 parsecs", DurationError::UnexpectedChar { found: ' ' }),
            (
                "5parsecs",
                DurationError::UnknownUnit {
                    unit: "parsecs".into(),
                },
            ),
            ("-1s", DurationError::Negative),
            ("+1s", DurationError::UnexpectedSign),
            ("s", DurationError::MissingNumber { unit: "s".into() }),
            (
                ".5s",
                DurationError::MalformedNumber {
                    number: ".5".into(),
                },
            ),
            (
                "5.s",
                DurationError::MalformedNumber {
                    number: "5.".into(),
                },
            ),
            (
                "1.2.3s",
                DurationError::MalformedNumber {
                    number: "1.2.3".into(),
                },
            ),
            (
                "1.5ns",
                DurationError::NotWholeNanoseconds {
                    component: "1.5ns".into(),
                },
            ),
            (
                "30s1m",
                DurationError::UnitsOutOfOrder {
                    unit: "m".into(),
                    previous: "s".into(),
                },
            ),
            (
                "1s1s",
                DurationError::UnitsOutOfOrder {
                    unit: "s".into(),
                    previous: "s".into(),
                },
            ),
            (
                "5us5µs",
                DurationError::UnitsOutOfOrder {
                    unit: "µs".into(),
                    previous: "us".into(),
                },
            ),
        ];
        for (text, expected) in table {
            assert_eq!(parse_duration(text), Err(expected), "{text:?}");
        }
    }

    #[test]
    fn durations_longer_than_u64_nanoseconds_overflow_instead_of_wrapping() {
        for text in [
            "99999999999999h",
            "5124095h34m33.709551616s",
            "999999999999999999999999999999999999999999ns",
            "0.0000000000000000000000000000001s",
        ] {
            let result = parse_duration(text);
            assert!(result.is_err(), "{text}: {result:?}");
        }
        assert!(matches!(
            parse_duration("99999999999999h"),
            Err(DurationError::Overflow { .. })
        ));
        assert_eq!(parse_duration("5124095h34m33.709551615s"), Ok(u64::MAX));
    }

    #[test]
    fn signed_durations_take_an_optional_sign() {
        assert_eq!(parse_signed_duration("-3s"), Ok(-3 * S as i64));
        assert_eq!(parse_signed_duration("+2s"), Ok(2 * S as i64));
        assert_eq!(parse_signed_duration("2s"), Ok(2 * S as i64));
        assert_eq!(parse_signed_duration("-0s"), Ok(0));
        assert_eq!(
            parse_signed_duration("-9223372036854775808ns"),
            Ok(i64::MIN)
        );
        assert!(matches!(
            parse_signed_duration("9223372036854775808ns"),
            Err(DurationError::Overflow { .. })
        ));
        assert_eq!(
            parse_signed_duration("--3s"),
            Err(DurationError::UnexpectedChar { found: '-' })
        );
        assert_eq!(parse_signed_duration("-"), Err(DurationError::Empty));
    }

    #[test]
    fn durations_are_written_in_the_largest_exact_unit() {
        let table: [(u64, &str); 10] = [
            (0, "0s"),
            (10, "10ns"),
            (500_000, "500us"),
            (150 * MS, "150ms"),
            (1_500 * MS, "1.5s"),
            (1_000_001, "1.000001ms"),
            (90 * S, "1m30s"),
            (60 * S + 500 * MS, "1m500ms"),
            (7_200 * S, "2h"),
            (u64::MAX, "5124095h34m33.709551615s"),
        ];
        for (ns, expected) in table {
            assert_eq!(format_duration_ron(ns), expected, "{ns}");
        }
        assert_eq!(format_signed_duration_ron(-3 * S as i64), "-3s");
        assert_eq!(
            format_signed_duration_ron(i64::MIN),
            "-2562047h47m16.854775808s"
        );
    }

    proptest! {
        #[test]
        fn every_duration_is_written_so_that_it_parses_back_exactly(ns in any::<u64>()) {
            prop_assert_eq!(parse_duration(&format_duration_ron(ns)), Ok(ns));
        }

        #[test]
        fn every_signed_duration_is_written_so_that_it_parses_back_exactly(ns in any::<i64>()) {
            prop_assert_eq!(parse_signed_duration(&format_signed_duration_ron(ns)), Ok(ns));
        }

        #[test]
        fn small_round_durations_survive_the_round_trip(ms in 0u64..10_000_000) {
            prop_assert_eq!(parse_duration(&format_duration_ron(ms * MS)), Ok(ms * MS));
        }

        #[test]
        fn duration_parsing_never_panics(text in "\\PC{0,24}") {
            let _ = parse_duration(&text);
            let _ = parse_signed_duration(&text);
        }
    }
}
