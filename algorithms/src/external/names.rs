//! The message types and timer names a node declares in `hello_ok`, and the run's
//! [`Names`]: the engine counts, traces and charts by them.

use splitbrain_sim::Names;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// What a node declared: the message types it sends and the timers it arms.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Declared {
    /// The protocol version it speaks (2 echoes each event's step in its reply).
    pub protocol: u32,
    /// Message types (a body's `type`), in the node's order.
    pub messages: Vec<String>,
    /// Timer names.
    pub timers: Vec<String>,
}

impl Declared {
    /// Whether the node echoes each event's `step` in its reply (protocol version 2 and
    /// later): a line out of turn is then refused at once, whatever the timing.
    pub fn echoes_steps(&self) -> bool {
        self.protocol >= 2
    }

    /// How this node's `hello_ok` differs from `first`'s (n0's), in a bounded sentence.
    pub fn difference(&self, first: &Declared) -> String {
        let list = |names: &[String]| crate::text::shorten(&names.join(", "));
        let (what, mine, theirs) = if self.protocol != first.protocol {
            let version = |v: u32| v.to_string();
            (
                "protocol version",
                version(self.protocol),
                version(first.protocol),
            )
        } else if self.messages != first.messages {
            ("message types", list(&self.messages), list(&first.messages))
        } else {
            ("timers", list(&self.timers), list(&first.timers))
        };
        format!(
            "its `hello_ok` declared other {what} than n0's: [{mine}] against [{theirs}]; \
             every member must declare the same"
        )
    }
}

/// A name is letters, digits, `_`, `-` and `.`, 1 to 64 of them: it goes into traces,
/// charts and CSV columns as it is.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{}` cannot be a message type or timer name: use 1 to 64 letters, digits, `_`, `-` or `.`",
            crate::text::shorten(name)
        ))
    }
}

/// `names` as one `'static` list, made once per distinct list for the whole process (a hunt
/// of a million seeds leaks nothing per run).
pub(crate) fn intern(names: &[String]) -> &'static [&'static str] {
    static INTERNED: Mutex<Option<BTreeMap<Vec<String>, &'static [&'static str]>>> =
        Mutex::new(None);
    let mut interned = INTERNED.lock().unwrap_or_else(|e| e.into_inner());
    let map = interned.get_or_insert_with(BTreeMap::new);
    if let Some(list) = map.get(names) {
        return list;
    }
    let list: Vec<&'static str> = names
        .iter()
        .map(|name| &*Box::leak(name.clone().into_boxed_str()))
        .collect();
    let list: &'static [&'static str] = Box::leak(list.into_boxed_slice());
    map.insert(names.to_vec(), list);
    list
}

/// `name` made `'static` once for the whole process: an observation or property name,
/// looked up without an allocation on every later call (an `observe` effect asks each time).
pub(crate) fn intern_one(name: &str) -> &'static str {
    static INTERNED: Mutex<BTreeMap<String, &'static str>> = Mutex::new(BTreeMap::new());
    let mut interned = INTERNED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(kept) = interned.get(name) {
        return kept;
    }
    let kept: &'static str = Box::leak(name.to_string().into_boxed_str());
    interned.insert(name.to_string(), kept);
    kept
}

/// The run's names: the nodes' declared ones, then `extra` (a modeled service's own).
pub(crate) fn run_names(
    declared: &Declared,
    extra_messages: &[&str],
    extra_timers: &[&str],
) -> Names {
    let join = |own: &[String], extra: &[&str]| {
        let mut all = own.to_vec();
        all.extend(extra.iter().map(|s| s.to_string()));
        intern(&all)
    };
    Names {
        messages: join(&declared.messages, extra_messages),
        timers: join(&declared.timers, extra_timers),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_list_is_interned_once() {
        let a = intern(&["vote".to_string(), "ping".to_string()]);
        let b = intern(&["vote".to_string(), "ping".to_string()]);
        assert!(std::ptr::eq(a, b));
        assert_eq!(a, ["vote", "ping"]);
        let c = intern(&["ping".to_string()]);
        assert_eq!(c, ["ping"]);
    }

    #[test]
    fn names_that_would_break_a_trace_or_a_csv_are_refused() {
        assert!(check_name("request_vote").is_ok());
        assert!(check_name("Append.Entries-2").is_ok());
        for bad in ["", "a b", "x\"y", "comma,", &"x".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }
}
