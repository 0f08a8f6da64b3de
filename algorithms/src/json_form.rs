//! The JSON form of the modeled coordination services' messages (etcd, ZooKeeper, the
//! Kubernetes API server), which an external election node sends and receives as message
//! bodies: `docs/protocol-services.md` documents it, and this module's tests pin it.
//!
//! Each message enum is internally tagged: `{"type":"<kind>", <fields>}`, where the tag is
//! the message's kind as `message_kinds!` names it, the fields are the Rust field names, and
//! unknown fields are refused. serde's derive lets a *unit* variant of an internally tagged
//! enum ignore extra fields; [`no_fields`] makes those variants refuse them too.

use serde::{Deserialize, Deserializer};

/// The body of a variant without fields: no field at all (`deny_unknown_fields`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoFields {}

/// Deserializes the rest of a unit variant's object (the tag already taken off), refusing
/// any field: for `#[serde(deserialize_with = "crate::json_form::no_fields")]` on the unit
/// variants of an internally tagged, `deny_unknown_fields` enum.
pub(crate) fn no_fields<'de, D: Deserializer<'de>>(deserializer: D) -> Result<(), D::Error> {
    NoFields::deserialize(deserializer).map(|NoFields {}| ())
}

#[cfg(test)]
mod exchanges;
#[cfg(test)]
mod tests;
