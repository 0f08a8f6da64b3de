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
    /// The number of ZooKeeper servers: 1 is the single modeled server, an odd number up to
    /// 7 an ensemble (`docs/algorithms/zookeeper.md`, "Ensemble (servers > 1)").
    #[serde(skip_serializing_if = "is_one")]
    pub servers: u64,
    /// An ensemble's `initLimit`: ticks a new leader's sync with a quorum may take.
    #[serde(skip_serializing_if = "is_default_init_limit")]
    pub init_limit: u64,
    /// An ensemble's `syncLimit`: ticks a follower may be silent to its leader, and the
    /// leader to its followers, before either gives up.
    #[serde(skip_serializing_if = "is_default_sync_limit")]
    pub sync_limit: u64,
}

fn is_one(n: &u64) -> bool {
    *n == 1
}

fn is_default_init_limit(n: &u64) -> bool {
    *n == ZOO_SAMPLE_INIT_LIMIT
}

fn is_default_sync_limit(n: &u64) -> bool {
    *n == ZOO_SAMPLE_SYNC_LIMIT
}

/// `conf/zoo_sample.cfg`: `initLimit=10` (ticks).
pub const ZOO_SAMPLE_INIT_LIMIT: u64 = 10;

/// `conf/zoo_sample.cfg`: `syncLimit=5` (ticks).
pub const ZOO_SAMPLE_SYNC_LIMIT: u64 = 5;

/// The most servers an ensemble may have here.
pub const MAX_SERVERS: u64 = 7;

impl ZkConfig {
    /// The session timeout the server grants.
    pub fn negotiated_timeout_ns(&self) -> u64 {
        self.session_timeout_ns
            .clamp(2 * self.tick_ns, 20 * self.tick_ns)
    }

    /// Whether the service is an ensemble of several servers.
    pub fn is_ensemble(&self) -> bool {
        self.servers > 1
    }

    /// The servers a quorum needs: a majority.
    pub fn quorum(&self) -> usize {
        (self.servers as usize) / 2 + 1
    }

    /// `initLimit × tickTime`: the bound on a new leader's sync (`Leader.getEpochToPropose`,
    /// `waitForEpochAck`, `waitForNewLeaderAck`).
    pub fn init_limit_ns(&self) -> u64 {
        self.init_limit.saturating_mul(self.tick_ns)
    }

    /// `syncLimit × tickTime`: how long a follower waits on a silent leader
    /// (`Learner.syncWithLeader`'s socket timeout).
    pub fn sync_limit_ns(&self) -> u64 {
        self.sync_limit.saturating_mul(self.tick_ns)
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
            servers: 1,
            init_limit: ZOO_SAMPLE_INIT_LIMIT,
            sync_limit: ZOO_SAMPLE_SYNC_LIMIT,
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
