//! Simulated time. True time is a `u64` of nanoseconds since the start of the run; a node's
//! local clock reading is an `i64` (a clock jumped backwards may read before zero).

/// Nanoseconds of true (simulated, global) time.
pub type Nanos = u64;
/// A local clock reading in nanoseconds. Signed: a clock jumped backwards may read negative.
pub type LocalNanos = i64;

/// Nanoseconds in a microsecond.
pub const NANOS_PER_MICRO: u64 = 1_000;
/// Nanoseconds in a millisecond.
pub const NANOS_PER_MILLI: u64 = 1_000_000;
/// Nanoseconds in a second.
pub const NANOS_PER_SEC: u64 = 1_000_000_000;

/// Formats a duration for people: `0s`, `150ms`, `1.25s`, `2m30s`, `750us`, `12ns`.
pub fn format_duration(ns: u64) -> String {
    if ns == 0 {
        return "0s".to_string();
    }
    if ns >= 60 * NANOS_PER_SEC {
        let total_s = ns / NANOS_PER_SEC;
        let (m, s) = (total_s / 60, total_s % 60);
        let rest_ms = (ns % NANOS_PER_SEC) / NANOS_PER_MILLI;
        return match (s, rest_ms) {
            (0, 0) => format!("{m}m"),
            (_, 0) => format!("{m}m{s}s"),
            _ => format!("{m}m{}s", trim_decimal(s as f64 + rest_ms as f64 / 1000.0)),
        };
    }
    if ns >= NANOS_PER_SEC {
        return format!("{}s", trim_decimal(ns as f64 / NANOS_PER_SEC as f64));
    }
    if ns >= NANOS_PER_MILLI {
        return format!("{}ms", trim_decimal(ns as f64 / NANOS_PER_MILLI as f64));
    }
    if ns >= NANOS_PER_MICRO {
        return format!("{}us", trim_decimal(ns as f64 / NANOS_PER_MICRO as f64));
    }
    format!("{ns}ns")
}

/// Formats a signed duration, with a leading `-` when negative.
pub fn format_signed_duration(ns: i64) -> String {
    if ns < 0 {
        format!("-{}", format_duration(ns.unsigned_abs()))
    } else {
        format_duration(ns as u64)
    }
}

fn trim_decimal(value: f64) -> String {
    let text = format!("{value:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_in_the_largest_sensible_unit() {
        assert_eq!(format_duration(0), "0s");
        assert_eq!(format_duration(12), "12ns");
        assert_eq!(format_duration(750 * NANOS_PER_MICRO), "750us");
        assert_eq!(format_duration(150 * NANOS_PER_MILLI), "150ms");
        assert_eq!(format_duration(1_250 * NANOS_PER_MILLI), "1.25s");
        assert_eq!(format_duration(150 * NANOS_PER_SEC), "2m30s");
        assert_eq!(format_duration(120 * NANOS_PER_SEC), "2m");
        assert_eq!(format_signed_duration(-3 * NANOS_PER_SEC as i64), "-3s");
    }
}
