//! An API server in front of an etcd cluster (`etcd_members` > 1): it keeps no Lease of its
//! own; every request of an election member becomes a request to etcd, as kube-apiserver's
//! storage layer makes it (`staging/src/k8s.io/apiserver/pkg/storage/etcd3/store.go`,
//! docs/service-clusters.md, "kube-apiserver"):
//! - `Get` is a quorum read of the Lease's key (`store.Get` → `KV.Get`, linearizable by
//!   default); the record's `resourceVersion` is the key's `mod_revision`
//!   (`versioner.UpdateObject(obj, uint64(kv.ModRevision))`); no key: the record nobody
//!   holds, at resource version 0 (client-go's `Get` sees `NotFound` and creates).
//! - `Update` is `GuaranteedUpdate`: a `Txn` comparing the key's `mod_revision` with the
//!   resource version the client sent (0: create if absent); a failed compare is a conflict
//!   (409), answered with the record as stored.
//! - client-go's release is an `Update` of the record the elector last saw; modeled as a
//!   read, then that compare-and-put if the record still names the releasing identity.
//! - The etcd client is clientv3 with every member as endpoint: each request goes to the
//!   next endpoint in turn (the round-robin balancer, `client/v3`, 3.5), skipping one whose
//!   connection broke in the last second (gRPC's reconnect back-off starts at 1 s).
//! - An etcd error (no leader, the 7 s request timeout) fails the API request: the elector
//!   hears nothing and its try fails as a lost answer does (client-go handles an error and a
//!   timeout alike: the try failed). An API server whose etcd has no quorum therefore
//!   answers nothing, and the Lease can neither be renewed nor taken.
//!
//! Simplified, and why it cannot flip a safety verdict: every update reads nothing first (the
//! compare in the `Txn` decides, as it does in kube-apiserver whatever its watch cache
//! held); requests etcd never answers are forgotten after 60 s (kube-apiserver's
//! `--request-timeout` default), by when the elector's try is long over.

use super::messages::{Identity, K8sMsg, K8sTimer, Record};
use crate::etcd::messages::{EtcdMsg, ObjectView};
use splitbrain_sim::{Ctx, LocalNanos, NodeId, Process};
use std::collections::BTreeMap;

type K8sCtx<'a, 'b> = Ctx<'a, K8sMsg, K8sTimer>;

/// How long an endpoint whose connection broke is skipped (gRPC's first reconnect back-off).
const ENDPOINT_BACKOFF_NS: i64 = 1_000_000_000;

/// How long a request etcd does not answer is kept (kube-apiserver's `--request-timeout`).
const REQUEST_FORGOTTEN_NS: i64 = 60_000_000_000;

/// What an etcd request was for.
#[derive(Clone, Debug)]
enum Op {
    /// An elector's `Get`.
    Get,
    /// An elector's `Update`, with what its answer echoes.
    Update { sent_at: LocalNanos, request: u64 },
    /// A release's read.
    ReleaseRead { identity: Identity },
    /// A release's write.
    ReleaseWrite,
}

/// An etcd request waiting for its answer.
#[derive(Clone, Debug)]
struct Pending {
    client: NodeId,
    sent: LocalNanos,
    op: Op,
}

/// One API server: stateless but for its etcd requests in flight.
#[derive(Clone, Debug)]
pub struct ApiServer {
    /// The etcd members' process ids.
    endpoints: Vec<NodeId>,
    /// The endpoint the next request goes to.
    next: usize,
    /// Per endpoint: skipped until this time, after its connection broke.
    down_until: Vec<LocalNanos>,
    next_request: u64,
    pending: BTreeMap<u64, Pending>,
}

impl ApiServer {
    /// An API server whose etcd members are `endpoints`; `index` staggers where API servers
    /// start their round robin.
    pub fn new(index: usize, endpoints: Vec<NodeId>) -> Self {
        let size = endpoints.len().max(1);
        Self {
            next: index % size,
            down_until: vec![LocalNanos::MIN; endpoints.len()],
            endpoints,
            next_request: 1,
            pending: BTreeMap::new(),
        }
    }

    /// Sends `request(number)` to the next endpoint, remembering what it is for.
    fn ask(
        &mut self,
        ctx: &mut K8sCtx<'_, '_>,
        client: NodeId,
        op: Op,
        request: impl FnOnce(u64) -> EtcdMsg,
    ) {
        let now = ctx.monotonic_now();
        self.pending
            .retain(|_, p| p.sent.saturating_add(REQUEST_FORGOTTEN_NS) > now);
        let number = self.next_request;
        self.next_request += 1;
        let sent = now;
        self.pending.insert(number, Pending { client, sent, op });
        let endpoint = self.pick(now);
        ctx.send(
            endpoint,
            K8sMsg::Etcd {
                msg: request(number),
            },
        );
    }

    /// The next endpoint in turn whose connection has not just broken (the next in turn if
    /// all have).
    fn pick(&mut self, now: LocalNanos) -> NodeId {
        let size = self.endpoints.len();
        let up = (0..size)
            .map(|step| (self.next + step) % size)
            .find(|k| self.down_until[*k] <= now)
            .unwrap_or(self.next);
        self.next = (up + 1) % size;
        self.endpoints[up]
    }

    /// etcd answered request `request`: the elector hears the record (a release's read goes
    /// on to its write).
    fn answered(
        &mut self,
        ctx: &mut K8sCtx<'_, '_>,
        request: u64,
        ok: bool,
        object: Option<ObjectView>,
    ) {
        let Some(pending) = self.pending.remove(&request) else {
            return;
        };
        let record = Record::of_object(object.as_ref());
        let client = pending.client;
        match pending.op {
            Op::Get => ctx.send(client, K8sMsg::GetResp { record }),
            Op::Update { sent_at, request } => {
                let answer = K8sMsg::UpdateResp {
                    ok,
                    record,
                    sent_at,
                    request,
                };
                ctx.send(client, answer);
            }
            Op::ReleaseRead { identity } if record.holder == Some(identity) => {
                // client-go's `release`: an empty `HolderIdentity`, `LeaseDurationSeconds: 1`.
                let expected_rev = record.resource_version;
                self.ask(ctx, client, Op::ReleaseWrite, |request| {
                    EtcdMsg::ObjectPut {
                        request,
                        expected_rev,
                        owner: None,
                        value: 1,
                    }
                });
            }
            Op::ReleaseRead { .. } | Op::ReleaseWrite => {}
        }
    }
}

impl Process for ApiServer {
    type Msg = K8sMsg;
    type Timer = K8sTimer;
    type Durable = ();

    /// The requests in flight to etcd, for `run --stop-at`.
    fn inspect(&self) -> Vec<(&'static str, String)> {
        let next = self.endpoints.get(self.next).map(|n| n.to_string());
        vec![
            ("etcd_requests_in_flight", self.pending.len().to_string()),
            ("next_endpoint", next.unwrap_or_default()),
        ]
    }

    /// An elector's request or an etcd member's answer.
    fn on_message(&mut self, ctx: &mut K8sCtx<'_, '_>, from: NodeId, msg: K8sMsg) {
        match msg {
            K8sMsg::Get => self.ask(ctx, from, Op::Get, |request| EtcdMsg::ObjectGet { request }),
            K8sMsg::Update {
                expected_rv,
                sent_at,
                identity,
                lease_duration_s,
                request,
            } => {
                let op = Op::Update { sent_at, request };
                self.ask(ctx, from, op, |request| EtcdMsg::ObjectPut {
                    request,
                    expected_rev: expected_rv,
                    owner: Some(Identity::owner(identity)),
                    value: u64::from(lease_duration_s),
                });
            }
            K8sMsg::Release { identity } => {
                let op = Op::ReleaseRead { identity };
                self.ask(ctx, from, op, |request| EtcdMsg::ObjectGet { request });
            }
            K8sMsg::Etcd {
                msg:
                    EtcdMsg::ObjectResp {
                        request,
                        ok,
                        object,
                    },
            } => self.answered(ctx, request, ok, object),
            _ => {}
        }
    }

    /// The connection to an etcd member broke: it is skipped for a while; what was in
    /// flight on it is lost (forgotten later).
    fn on_disconnect(&mut self, ctx: &mut K8sCtx<'_, '_>, peer: NodeId) {
        if let Some(k) = self.endpoints.iter().position(|e| *e == peer) {
            self.down_until[k] = ctx.monotonic_now().saturating_add(ENDPOINT_BACKOFF_NS);
        }
    }

    /// A restarted API server has no requests in flight (their connections broke).
    fn on_restart(&mut self, _ctx: &mut K8sCtx<'_, '_>) {
        self.pending.clear();
    }

    /// An API server waits for requests.
    fn on_start(&mut self, _ctx: &mut K8sCtx<'_, '_>) {}

    /// An API server keeps no timer of its own (its requests time out in etcd).
    fn on_timer(&mut self, _ctx: &mut K8sCtx<'_, '_>, _timer: K8sTimer) {}

    /// An API server keeps no state a term could count.
    fn term(&self) -> u64 {
        0
    }

    fn write_token(&self, _now: LocalNanos) -> Option<u64> {
        None
    }

    fn known_leader(&self) -> Option<NodeId> {
        None
    }

    /// An API server serves while it reaches a quorum of etcd members.
    fn is_service_gateway(&self) -> bool {
        true
    }
}
