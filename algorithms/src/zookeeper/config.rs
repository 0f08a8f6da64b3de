//! ZooKeeper session and election-recipe settings, validated by the scenario loader.

use serde::{Deserialize, Serialize};

/// Who watches what while waiting.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename(deserialize = "zookeeper recipe"))]
pub enum ZkRecipe {
    /// The ZooKeeper recipe: each waiter sets an `exists` watch on its predecessor only.
    Predecessor,
    /// The herd effect: every waiter watches the children of the election node, so every
    /// change wakes every waiter.
    Herd,
}

/// What a leader does when its connection is lost (nothing heard for 2/3 of the session
/// timeout) before it knows whether its session expired.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename(deserialize = "zookeeper on_disconnect"))]
pub enum ZkOnDisconnect {
    /// Stop acting as leader at once (Curator's advice on `SUSPENDED`).
    StepDown,
    /// Keep leading until told the session expired (unsafe on purpose).
    KeepUntilExpired,
}

/// ZooKeeper settings. Durations are local time of whoever measures them: sessions expire
/// on the server's clock, a client's connection check runs on its own.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ZkConfig {
    /// The server's tick: session timeouts are bounded by 2 and 20 ticks and sessions expire
    /// in buckets of one tick.
    pub tick_ns: u64,
    /// The session timeout a client asks for (negotiated into [2, 20] ticks).
    pub session_timeout_ns: u64,
    /// Who a waiter watches: its predecessor, or (the herd) every child.
    pub recipe: ZkRecipe,
    /// What a leader does when it loses its connection.
    pub on_disconnect: ZkOnDisconnect,
}

impl ZkConfig {
    /// The session timeout the server grants.
    pub fn negotiated_timeout_ns(&self) -> u64 {
        self.session_timeout_ns
            .clamp(2 * self.tick_ns, 20 * self.tick_ns)
    }
}

impl Default for ZkConfig {
    fn default() -> Self {
        Self {
            tick_ns: 100_000_000,
            session_timeout_ns: 1_000_000_000,
            recipe: ZkRecipe::Predecessor,
            on_disconnect: ZkOnDisconnect::StepDown,
        }
    }
}
