//! Macros that write an algorithm's name tables: [`message_kinds!`](crate::message_kinds)
//! for its [`Message`](crate::Message) type and [`timer_kinds!`](crate::timer_kinds) for its
//! [`TimerKind`](crate::TimerKind). Each variant is named once, next to its stable name, so a
//! table and the index into it cannot disagree, and a variant left out of the list does not
//! compile.

/// Implements [`Message`](crate::Message) for an enum from a list of `Variant => "Name"`
/// pairs: `KINDS` holds the names in list order and `kind()` returns a variant's position in
/// it. The list must name every variant exactly once (a missing variant is a non-exhaustive
/// match, a repeated one a duplicate definition: both fail to compile). Items after the list
/// (such as `term`) go into the impl as written.
///
/// The names are the message types as traces, counts and charts show them: renaming one
/// changes every golden trace.
///
/// ```
/// use splitbrain_sim::Message;
///
/// #[derive(Clone, Debug)]
/// enum PingMsg {
///     Ping { term: u64 },
///     Pong(u64),
///     Bye,
/// }
///
/// splitbrain_sim::message_kinds! {
///     impl Message for PingMsg {
///         kinds {
///             Ping => "Ping",
///             Pong => "Pong",
///             Bye => "Bye",
///         }
///
///         fn term(&self) -> u64 {
///             match *self {
///                 PingMsg::Ping { term } | PingMsg::Pong(term) => term,
///                 PingMsg::Bye => 0,
///             }
///         }
///     }
/// }
///
/// assert_eq!(PingMsg::KINDS, ["Ping", "Pong", "Bye"]);
/// assert_eq!(PingMsg::Pong(3).kind(), 1);
/// assert_eq!(PingMsg::Pong(3).term(), 3);
/// ```
///
/// A variant left out does not compile:
///
/// ```compile_fail
/// #[derive(Clone, Debug)]
/// enum PingMsg {
///     Ping,
///     Pong,
/// }
///
/// splitbrain_sim::message_kinds! {
///     impl Message for PingMsg {
///         kinds {
///             Ping => "Ping",
///         }
///     }
/// }
/// ```
///
/// Nor does a variant listed twice:
///
/// ```compile_fail
/// #[derive(Clone, Debug)]
/// enum PingMsg {
///     Ping,
///     Pong,
/// }
///
/// splitbrain_sim::message_kinds! {
///     impl Message for PingMsg {
///         kinds {
///             Ping => "Ping",
///             Pong => "Pong",
///             Ping => "Ping again",
///         }
///     }
/// }
/// ```
#[macro_export]
macro_rules! message_kinds {
    (
        impl Message for $name:ident {
            kinds {
                $($variant:ident => $label:literal),+ $(,)?
            }
            $($items:tt)*
        }
    ) => {
        impl $crate::Message for $name {
            const KINDS: &'static [&'static str] = &[$($label),+];

            fn kind(&self) -> usize {
                // A fieldless mirror of the listed variants: its discriminants are the
                // positions in `KINDS`.
                enum Kind {
                    $($variant),+
                }
                match self {
                    $($name::$variant { .. } => Kind::$variant as usize,)+
                }
            }

            $($items)*
        }
    };
}

/// Defines a fieldless timer enum and implements [`TimerKind`](crate::TimerKind) for it from
/// its `Variant => "name"` list: `NAMES` holds the names in declaration order, `index()` is a
/// variant's position and `from_index()` its inverse. `from_index` panics on an index past
/// the last kind: the engine only passes indexes of timers the process armed (its own
/// workload slot, one past the last, it handles itself).
///
/// Attributes (doc comments, derives) pass through to the enum and its variants; the enum
/// must derive at least `Copy, Clone, Debug, PartialEq, Eq`, which `TimerKind` requires.
///
/// ```
/// use splitbrain_sim::TimerKind;
///
/// splitbrain_sim::timer_kinds! {
///     /// A heartbeat protocol's timers.
///     #[derive(Copy, Clone, Debug, PartialEq, Eq)]
///     pub enum PingTimer {
///         /// Time to send a heartbeat.
///         Heartbeat => "heartbeat",
///         /// No heartbeat heard for too long.
///         Failure => "failure",
///     }
/// }
///
/// assert_eq!(PingTimer::NAMES, ["heartbeat", "failure"]);
/// assert_eq!(PingTimer::Failure.index(), 1);
/// assert_eq!(PingTimer::from_index(1), PingTimer::Failure);
/// ```
#[macro_export]
macro_rules! timer_kinds {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $(
                $(#[$variant_meta:meta])*
                $variant:ident => $label:literal
            ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis enum $name {
            $(
                $(#[$variant_meta])*
                $variant,
            )+
        }

        impl $crate::TimerKind for $name {
            const NAMES: &'static [&'static str] = &[$($label),+];

            fn index(self) -> usize {
                self as usize
            }

            fn from_index(index: usize) -> Self {
                const ALL: &[$name] = &[$($name::$variant),+];
                match ALL.get(index) {
                    Some(kind) => *kind,
                    None => panic!(concat!(stringify!($name), " has no timer kind {}"), index),
                }
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use crate::{Message, TimerKind};

    #[derive(Clone, Debug)]
    enum Shapes {
        Unit,
        Tuple(u64),
        Struct { term: u64 },
    }

    crate::message_kinds! {
        impl Message for Shapes {
            kinds {
                Unit => "unit",
                Struct => "Struct",
                Tuple => "tuple-ish",
            }

            fn term(&self) -> u64 {
                match *self {
                    Shapes::Struct { term } | Shapes::Tuple(term) => term,
                    Shapes::Unit => 0,
                }
            }
        }
    }

    crate::timer_kinds! {
        #[derive(Copy, Clone, Debug, PartialEq, Eq)]
        enum Alarm {
            Early => "early",
            Late => "check_late",
            Never => "never",
        }
    }

    #[test]
    fn message_kinds_follow_the_list_order_not_the_declaration_order() {
        assert_eq!(Shapes::KINDS, ["unit", "Struct", "tuple-ish"]);
        let samples = [Shapes::Unit, Shapes::Struct { term: 4 }, Shapes::Tuple(9)];
        let kinds: Vec<usize> = samples.iter().map(Message::kind).collect();
        assert_eq!(kinds, [0, 1, 2]);
        assert_eq!(samples[1].term(), 4, "the listed items go into the impl");
        assert_eq!(samples[0].term(), 0);
    }

    #[test]
    fn timer_kinds_round_trip_through_their_index_in_declaration_order() {
        assert_eq!(Alarm::NAMES, ["early", "check_late", "never"]);
        for (index, timer) in [Alarm::Early, Alarm::Late, Alarm::Never]
            .into_iter()
            .enumerate()
        {
            assert_eq!(timer.index(), index);
            assert_eq!(Alarm::from_index(index), timer);
        }
    }

    #[test]
    #[should_panic(expected = "Alarm has no timer kind 3")]
    fn a_timer_index_past_the_last_kind_panics() {
        Alarm::from_index(3);
    }
}
