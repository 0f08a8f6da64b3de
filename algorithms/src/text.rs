//! Text a node or a process wrote, made fit to quote in an error message.

/// `text`, cut to a readable length for an error message, its control characters escaped
/// (a node's bytes must not reach the terminal raw).
pub(crate) fn shorten(text: &str) -> String {
    shorten_to(text, 300)
}

/// `text` cut after about `max` bytes, its control characters escaped.
pub(crate) fn shorten_to(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max + 32));
    for c in text.chars() {
        if out.len() >= max {
            return format!("{out}... ({} bytes)", text.len());
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}
