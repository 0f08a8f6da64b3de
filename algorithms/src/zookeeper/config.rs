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

/// The tick of the server users run: `conf/zoo_sample.cfg`, `tickTime=2000` (ms). Unset,
/// `ZooKeeperServer.DEFAULT_TICK_TIME` is 3000 ms; the sample configuration is what a
/// deployment starts from.
pub const ZOO_SAMPLE_TICK_NS: u64 = 2_000_000_000;

/// The session timeout Curator asks for: `CuratorFrameworkFactory`,
/// `DEFAULT_SESSION_TIMEOUT_MS = 60 * 1000`.
pub const CURATOR_SESSION_TIMEOUT_NS: u64 = 60_000_000_000;

/// The real pair's defaults: a `zoo_sample.cfg` server (tick 2 s) and a Curator client,
/// whose 60 s request the server caps at `maxSessionTimeout`, 20 ticks
/// (`ZooKeeperServer.processConnectRequest`): a 40 s session. The default session timeout
/// is that 40 s, what the pair runs, so a default run needs no negotiation note.
impl Default for ZkConfig {
    fn default() -> Self {
        let tick_ns = ZOO_SAMPLE_TICK_NS;
        let session_timeout_ns = CURATOR_SESSION_TIMEOUT_NS.clamp(2 * tick_ns, 20 * tick_ns);
        Self {
            tick_ns,
            session_timeout_ns,
            recipe: ZkRecipe::Predecessor,
            on_disconnect: ZkOnDisconnect::StepDown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_real_systems() {
        let defaults = ZkConfig::default();
        // `conf/zoo_sample.cfg`: `tickTime=2000`.
        assert_eq!(defaults.tick_ns, 2_000_000_000);
        // Curator asks for 60 s; the server grants at most 20 ticks, 40 s.
        let asked = ZkConfig {
            session_timeout_ns: CURATOR_SESSION_TIMEOUT_NS,
            ..defaults.clone()
        };
        assert_eq!(asked.negotiated_timeout_ns(), 40_000_000_000);
        assert_eq!(defaults.session_timeout_ns, 40_000_000_000);
        assert_eq!(
            defaults.negotiated_timeout_ns(),
            defaults.session_timeout_ns
        );
        assert_eq!(defaults.recipe, ZkRecipe::Predecessor);
        assert_eq!(defaults.on_disconnect, ZkOnDisconnect::StepDown);
    }
}
