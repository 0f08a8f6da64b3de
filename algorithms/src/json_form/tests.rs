//! The JSON form of every message of the three modeled services, pinned: each variant's
//! exact text (the stable form `docs/protocol-services.md` documents and external clients
//! code against), its tag against the `message_kinds!` name, the round trip, and what is
//! refused.

use crate::etcd::messages::ObjectView;
use crate::etcd::EtcdMsg;
use crate::k8s_lease::{Identity, K8sMsg, Record};
use crate::zookeeper::db::ZkDb;
use crate::zookeeper::messages::{ZkOp, ZkPeerState, ZkTxn};
use crate::zookeeper::ZkMsg;
use serde::de::DeserializeOwned;
use serde::Serialize;
use splitbrain_sim::{Message, NodeId};
use std::fmt::Debug;

/// One instance of every etcd message, with its exact JSON text.
fn etcd_golden() -> Vec<(EtcdMsg, &'static str)> {
    let n = NodeId;
    vec![
        (
            EtcdMsg::LeaseGrant {
                ttl_ns: 6_000_000_000,
                sent_at: 1_500_000,
                campaign: 1,
            },
            r#"{"type":"LeaseGrant","ttl_ns":6000000000,"sent_at":1500000,"campaign":1}"#,
        ),
        (
            EtcdMsg::LeaseGrantResp {
                lease: 1,
                ttl_ns: 6_000_000_000,
                sent_at: 1_500_000,
                campaign: 1,
            },
            r#"{"type":"LeaseGrantResp","lease":1,"ttl_ns":6000000000,"sent_at":1500000,"campaign":1}"#,
        ),
        (
            EtcdMsg::KeepAlive {
                lease: 1,
                sent_at: 2_001_500_000,
            },
            r#"{"type":"KeepAlive","lease":1,"sent_at":2001500000}"#,
        ),
        (
            EtcdMsg::KeepAliveResp {
                lease: 1,
                ttl_ns: 6_000_000_000,
                sent_at: 2_001_500_000,
            },
            r#"{"type":"KeepAliveResp","lease":1,"ttl_ns":6000000000,"sent_at":2001500000}"#,
        ),
        (
            EtcdMsg::Revoke { lease: 1 },
            r#"{"type":"Revoke","lease":1}"#,
        ),
        (EtcdMsg::Txn { lease: 2 }, r#"{"type":"Txn","lease":2}"#),
        (
            EtcdMsg::TxnResp {
                lease: 2,
                create_rev: 3,
                revision: 3,
                keys: vec![(2, n(0)), (3, n(1))],
            },
            r#"{"type":"TxnResp","lease":2,"create_rev":3,"revision":3,"keys":[[2,0],[3,1]]}"#,
        ),
        (EtcdMsg::Range, r#"{"type":"Range"}"#),
        (
            EtcdMsg::RangeResp {
                revision: 4,
                keys: vec![(3, n(1))],
            },
            r#"{"type":"RangeResp","revision":4,"keys":[[3,1]]}"#,
        ),
        (
            EtcdMsg::Watch {
                key: 2,
                start_rev: 4,
            },
            r#"{"type":"Watch","key":2,"start_rev":4}"#,
        ),
        (
            EtcdMsg::WatchEvent {
                key: 2,
                revision: 4,
            },
            r#"{"type":"WatchEvent","key":2,"revision":4}"#,
        ),
        (
            EtcdMsg::SetNx {
                ttl_ns: 6_000_000_000,
            },
            r#"{"type":"SetNx","ttl_ns":6000000000}"#,
        ),
        (
            EtcdMsg::SetNxResp {
                acquired: false,
                term: 1,
                holder: Some(n(0)),
            },
            r#"{"type":"SetNxResp","acquired":false,"term":1,"holder":0}"#,
        ),
        (
            EtcdMsg::Extend {
                term: 1,
                sent_at: 2_000_000_000,
            },
            r#"{"type":"Extend","term":1,"sent_at":2000000000}"#,
        ),
        (
            EtcdMsg::ExtendResp {
                ok: true,
                term: 1,
                sent_at: 2_000_000_000,
            },
            r#"{"type":"ExtendResp","ok":true,"term":1,"sent_at":2000000000}"#,
        ),
        (EtcdMsg::Del { term: 1 }, r#"{"type":"Del","term":1}"#),
        (
            EtcdMsg::Raft {
                msg: crate::raft::RaftMsg::AppendEntries { term: 2, commit: 1 },
                proposals: vec![],
            },
            r#"{"type":"Raft","msg":{"AppendEntries":{"term":2,"commit":1}},"proposals":[]}"#,
        ),
        (
            EtcdMsg::Propose {
                proposal: crate::etcd::messages::Proposal {
                    command: crate::etcd::messages::Command::Txn {
                        owner: n(0),
                        lease: 1,
                    },
                    origin: Some(n(4)),
                    request: 2,
                },
            },
            r#"{"type":"Propose","proposal":{"command":{"Txn":{"owner":0,"lease":1}},"origin":4,"request":2}}"#,
        ),
        (
            EtcdMsg::RenewForward {
                lease: 1,
                request: 3,
            },
            r#"{"type":"RenewForward","lease":1,"request":3}"#,
        ),
        (
            EtcdMsg::RenewForwardResp {
                request: 3,
                ttl_ns: None,
            },
            r#"{"type":"RenewForwardResp","request":3,"ttl_ns":null}"#,
        ),
        (EtcdMsg::Unavailable, r#"{"type":"Unavailable"}"#),
        (EtcdMsg::Ready, r#"{"type":"Ready"}"#),
        (
            EtcdMsg::ObjectGet { request: 4 },
            r#"{"type":"ObjectGet","request":4}"#,
        ),
        (
            EtcdMsg::ObjectPut {
                request: 5,
                expected_rev: 0,
                owner: Some((NodeId(1), 0)),
                value: 15,
            },
            r#"{"type":"ObjectPut","request":5,"expected_rev":0,"owner":[1,0],"value":15}"#,
        ),
        (
            EtcdMsg::ObjectResp {
                request: 5,
                ok: true,
                object: Some(ObjectView {
                    mod_rev: 7,
                    owner: Some((NodeId(1), 0)),
                    owner_since: 7,
                    value: 15,
                }),
            },
            r#"{"type":"ObjectResp","request":5,"ok":true,"object":{"mod_rev":7,"owner":[1,0],"owner_since":7,"value":15}}"#,
        ),
    ]
}

/// One instance of every ZooKeeper message, with its exact JSON text.
fn zk_golden() -> Vec<(ZkMsg, &'static str)> {
    let n = NodeId;
    vec![
        (
            ZkMsg::Connect {
                timeout_ns: 6_000_000_000,
            },
            r#"{"type":"Connect","timeout_ns":6000000000}"#,
        ),
        (
            ZkMsg::ConnectResp {
                session: 1,
                timeout_ns: 6_000_000_000,
            },
            r#"{"type":"ConnectResp","session":1,"timeout_ns":6000000000}"#,
        ),
        (ZkMsg::Ping { session: 1 }, r#"{"type":"Ping","session":1}"#),
        (
            ZkMsg::Pong {
                session: 1,
                expired: false,
            },
            r#"{"type":"Pong","session":1,"expired":false}"#,
        ),
        (
            ZkMsg::Create { session: 2 },
            r#"{"type":"Create","session":2}"#,
        ),
        (
            ZkMsg::CreateResp { seq: 1, czxid: 4 },
            r#"{"type":"CreateResp","seq":1,"czxid":4}"#,
        ),
        (
            ZkMsg::GetChildren {
                session: 2,
                watch: false,
            },
            r#"{"type":"GetChildren","session":2,"watch":false}"#,
        ),
        (
            ZkMsg::Children {
                zxid: 4,
                children: vec![(0, 3, n(0)), (1, 4, n(1))],
            },
            r#"{"type":"Children","zxid":4,"children":[[0,3,0],[1,4,1]]}"#,
        ),
        (
            ZkMsg::Exists { session: 2, seq: 0 },
            r#"{"type":"Exists","session":2,"seq":0}"#,
        ),
        (
            ZkMsg::ExistsResp {
                seq: 0,
                exists: true,
            },
            r#"{"type":"ExistsResp","seq":0,"exists":true}"#,
        ),
        (
            ZkMsg::NodeDeleted { seq: 0, zxid: 5 },
            r#"{"type":"NodeDeleted","seq":0,"zxid":5}"#,
        ),
        (
            ZkMsg::ChildrenChanged { zxid: 5 },
            r#"{"type":"ChildrenChanged","zxid":5}"#,
        ),
        (
            ZkMsg::CloseSession { session: 1 },
            r#"{"type":"CloseSession","session":1}"#,
        ),
        (
            ZkMsg::Notification {
                round: 2,
                leader: n(5),
                zxid: 7,
                epoch: 1,
                state: ZkPeerState::Looking,
            },
            r#"{"type":"Notification","round":2,"leader":5,"zxid":7,"epoch":1,"state":"Looking"}"#,
        ),
        (
            ZkMsg::FollowerInfo {
                accepted_epoch: 1,
                zxid: 7,
            },
            r#"{"type":"FollowerInfo","accepted_epoch":1,"zxid":7}"#,
        ),
        (
            ZkMsg::NewLeader {
                epoch: 2,
                snapshot: zk_db(),
            },
            r#"{"type":"NewLeader","epoch":2,"snapshot":{"zxid":8589934592,"next_session":2,"next_seq":1,"sessions":[[1,{"owner":0,"timeout_ns":4000000000,"node":0}]],"children":[[0,[4294967298,0,1]]]}}"#,
        ),
        (
            ZkMsg::AckNewLeader { epoch: 2 },
            r#"{"type":"AckNewLeader","epoch":2}"#,
        ),
        (
            ZkMsg::UpToDate { epoch: 2 },
            r#"{"type":"UpToDate","epoch":2}"#,
        ),
        (
            ZkMsg::Proposal {
                zxid: 9,
                txn: ZkTxn::Create { session: 1, seq: 0 },
            },
            r#"{"type":"Proposal","zxid":9,"txn":{"op":"Create","session":1,"seq":0}}"#,
        ),
        (ZkMsg::Ack { zxid: 9 }, r#"{"type":"Ack","zxid":9}"#),
        (
            ZkMsg::Commit {
                zxid: 9,
                txn: ZkTxn::CloseSession {
                    session: 1,
                    expired: true,
                },
                origin: None,
            },
            r#"{"type":"Commit","zxid":9,"txn":{"op":"CloseSession","session":1,"expired":true},"origin":null}"#,
        ),
        (
            ZkMsg::LeaderPing { epoch: 2 },
            r#"{"type":"LeaderPing","epoch":2}"#,
        ),
        (
            ZkMsg::FollowerPing {
                touches: vec![1, 3],
            },
            r#"{"type":"FollowerPing","touches":[1,3]}"#,
        ),
        (
            ZkMsg::Request {
                client: n(0),
                op: ZkOp::CreateSession {
                    timeout_ns: 4_000_000_000,
                },
            },
            r#"{"type":"Request","client":0,"op":{"op":"CreateSession","timeout_ns":4000000000}}"#,
        ),
        (
            ZkMsg::Reply {
                client: n(0),
                answer: Box::new(ZkMsg::Pong {
                    session: 1,
                    expired: true,
                }),
            },
            r#"{"type":"Reply","client":0,"answer":{"type":"Pong","session":1,"expired":true}}"#,
        ),
    ]
}

/// An ensemble's database with one session and its child, for `NewLeader`.
fn zk_db() -> ZkDb {
    let mut db = ZkDb::new();
    let txn = ZkTxn::CreateSession {
        session: 1,
        owner: NodeId(0),
        timeout_ns: 4_000_000_000,
    };
    db.apply((1 << 32) | 1, &txn);
    db.apply((1 << 32) | 2, &ZkTxn::Create { session: 1, seq: 0 });
    db.zxid = 2 << 32;
    db
}

/// One instance of every Kubernetes API server message, with its exact JSON text.
fn k8s_golden() -> Vec<(K8sMsg, &'static str)> {
    let me = Identity {
        node: NodeId(1),
        incarnation: 0,
    };
    let held = Record {
        holder: Some(me),
        resource_version: 2,
        acquired_rv: 2,
        expires_at: 15_003_000_000,
        lease_duration_s: 15,
    };
    let free = Record {
        holder: None,
        resource_version: 1,
        acquired_rv: 0,
        expires_at: 0,
        lease_duration_s: 0,
    };
    vec![
        (K8sMsg::Get, r#"{"type":"Get"}"#),
        (
            K8sMsg::GetResp { record: free },
            r#"{"type":"GetResp","record":{"holder":null,"resource_version":1,"acquired_rv":0,"expires_at":0,"lease_duration_s":0}}"#,
        ),
        (
            K8sMsg::Update {
                expected_rv: 1,
                sent_at: 3_000_000,
                identity: me,
                lease_duration_s: 15,
                request: 1,
            },
            r#"{"type":"Update","expected_rv":1,"sent_at":3000000,"identity":{"node":1,"incarnation":0},"lease_duration_s":15,"request":1}"#,
        ),
        (
            K8sMsg::UpdateResp {
                ok: true,
                record: held,
                sent_at: 3_000_000,
                request: 1,
            },
            r#"{"type":"UpdateResp","ok":true,"record":{"holder":{"node":1,"incarnation":0},"resource_version":2,"acquired_rv":2,"expires_at":15003000000,"lease_duration_s":15},"sent_at":3000000,"request":1}"#,
        ),
        (
            K8sMsg::Release { identity: me },
            r#"{"type":"Release","identity":{"node":1,"incarnation":0}}"#,
        ),
    ]
}

/// The checks every message type passes: one golden instance per kind (each kind exactly
/// once, in `KINDS` order), its exact text, its tag equal to its kind's name, and the round
/// trip from that text back to the same message.
fn check_golden<M>(golden: &[(M, &str)])
where
    M: Message + Serialize + DeserializeOwned + PartialEq,
{
    check_kinds(golden, M::KINDS.len());
}

/// [`check_golden`] for the first `count` kinds of `M`.
fn check_kinds<M>(golden: &[(M, &str)], count: usize)
where
    M: Message + Serialize + DeserializeOwned + PartialEq,
{
    let kinds: Vec<usize> = golden.iter().map(|(msg, _)| msg.kind()).collect();
    let every: Vec<usize> = (0..count).collect();
    assert_eq!(kinds, every, "one instance of every kind, in KINDS order");
    for (msg, text) in golden {
        let written = serde_json::to_string(msg).expect("serializes");
        assert_eq!(written, *text, "the stable text of {msg:?}");
        let value: serde_json::Value = serde_json::from_str(&written).expect("valid JSON");
        assert_eq!(value["type"], M::KINDS[msg.kind()], "the tag of {msg:?}");
        let read: M = serde_json::from_str(text).expect("deserializes");
        assert_eq!(read, *msg, "the round trip of {text}");
    }
}

/// Serializes and deserializes `msg`, and asserts that it comes back equal.
fn round_trip<M>(msg: &M)
where
    M: Serialize + DeserializeOwned + PartialEq + Debug,
{
    let text = serde_json::to_string(msg).expect("serializes");
    let back: M = serde_json::from_str(&text).expect("deserializes");
    assert_eq!(back, *msg, "the round trip of {text}");
}

/// Asserts that `text` is refused, with an error that mentions `why` (any error for "").
fn refused<M: DeserializeOwned + Debug>(text: &str, why: &str) {
    match serde_json::from_str::<M>(text) {
        Ok(msg) => panic!("{text} was accepted as {msg:?}"),
        Err(e) => assert!(e.to_string().contains(why), "{text}: {e} (wanted {why:?})"),
    }
}

#[test]
fn etcd_messages_have_their_stable_json_form() {
    check_golden(&etcd_golden());
}

#[test]
fn zookeeper_messages_have_their_stable_json_form() {
    check_golden(&zk_golden());
}

/// The Lease lock's own kinds; then etcd's, each carried whole between API servers and etcd
/// members (`{"type":"Etcd","msg":{..}}`) and counted under its own kind.
#[test]
fn k8s_messages_have_their_stable_json_form() {
    let own = k8s_golden();
    check_kinds(&own, own.len());
    let etcd = etcd_golden();
    assert_eq!(K8sMsg::KINDS.len(), own.len() + etcd.len());
    for (msg, text) in etcd {
        let kind = msg.kind();
        let wrapped = K8sMsg::Etcd { msg };
        assert_eq!(wrapped.kind(), own.len() + kind);
        assert_eq!(K8sMsg::KINDS[wrapped.kind()], EtcdMsg::KINDS[kind]);
        let text = format!(r#"{{"type":"Etcd","msg":{text}}}"#);
        assert_eq!(serde_json::to_string(&wrapped).expect("serializes"), text);
        let read: K8sMsg = serde_json::from_str(&text).expect("deserializes");
        assert_eq!(read, wrapped);
    }
}

#[test]
fn etcd_messages_round_trip_at_the_extremes() {
    for (msg, _) in etcd_golden() {
        round_trip(&msg);
    }
    // Local clocks may read below zero; u64 fields reach 2^64 - 1 (JSON integers, not
    // floats: serde_json keeps them exact); an empty prefix; nobody holds the lock.
    round_trip(&EtcdMsg::KeepAlive {
        lease: u64::MAX,
        sent_at: i64::MIN,
    });
    round_trip(&EtcdMsg::LeaseGrantResp {
        lease: 1,
        ttl_ns: u64::MAX,
        sent_at: -5,
        campaign: u64::MAX,
    });
    round_trip(&EtcdMsg::RangeResp {
        revision: 1,
        keys: vec![],
    });
    let nobody = EtcdMsg::SetNxResp {
        acquired: false,
        term: 0,
        holder: None,
    };
    round_trip(&nobody);
    assert_eq!(
        serde_json::to_string(&nobody).unwrap(),
        r#"{"type":"SetNxResp","acquired":false,"term":0,"holder":null}"#
    );
    round_trip(&EtcdMsg::TxnResp {
        lease: 9,
        create_rev: 0,
        revision: 7,
        keys: vec![(3, NodeId(u32::MAX))],
    });
}

#[test]
fn zookeeper_messages_round_trip_at_the_extremes() {
    for (msg, _) in zk_golden() {
        round_trip(&msg);
    }
    round_trip(&ZkMsg::Children {
        zxid: 0,
        children: vec![],
    });
    round_trip(&ZkMsg::Pong {
        session: u64::MAX,
        expired: true,
    });
    round_trip(&ZkMsg::GetChildren {
        session: 1,
        watch: true,
    });
}

#[test]
fn k8s_messages_round_trip_at_the_extremes() {
    for (msg, _) in k8s_golden() {
        round_trip(&msg);
    }
    round_trip(&K8sMsg::UpdateResp {
        ok: false,
        record: Record {
            holder: Some(Identity {
                node: NodeId(0),
                incarnation: u32::MAX,
            }),
            resource_version: u64::MAX,
            acquired_rv: 1,
            expires_at: i64::MIN,
            lease_duration_s: u32::MAX,
        },
        sent_at: -1,
        request: 0,
    });
}

#[test]
fn etcd_refuses_unknown_fields_and_types() {
    refused::<EtcdMsg>(
        r#"{"type":"Txn","lease":2,"prefix":"/election"}"#,
        "unknown field `prefix`",
    );
    // A unit variant refuses fields too (serde's derive alone would ignore them).
    refused::<EtcdMsg>(r#"{"type":"Range","limit":1}"#, "unknown field `limit`");
    refused::<EtcdMsg>(r#"{"type":"LeaseRevoke","lease":1}"#, "unknown variant");
    // The tag is case-sensitive, required, and a string.
    refused::<EtcdMsg>(r#"{"type":"range"}"#, "unknown variant");
    refused::<EtcdMsg>(r#"{"lease":2}"#, "missing field `type`");
    refused::<EtcdMsg>(r#"{"type":5}"#, "");
    // A field of the request is required, and keeps its type.
    refused::<EtcdMsg>(
        r#"{"type":"KeepAlive","lease":1}"#,
        "missing field `sent_at`",
    );
    refused::<EtcdMsg>(r#"{"type":"Revoke","lease":-1}"#, "");
    refused::<EtcdMsg>(r#"{"type":"Revoke","lease":1.5}"#, "");
    refused::<EtcdMsg>(r#"{"type":"RangeResp","revision":1,"keys":[[1]]}"#, "");
    refused::<EtcdMsg>(r#"{"type":"RangeResp","revision":1,"keys":[[1,-1]]}"#, "");
    // What is accepted is exactly what is written: the known form still reads.
    let range: EtcdMsg = serde_json::from_str(r#"{"type":"Range"}"#).unwrap();
    assert_eq!(range, EtcdMsg::Range);
}

#[test]
fn zookeeper_refuses_unknown_fields_and_types() {
    refused::<ZkMsg>(
        r#"{"type":"Create","session":1,"path":"/election/n-"}"#,
        "unknown field `path`",
    );
    refused::<ZkMsg>(r#"{"type":"Delete","session":1}"#, "unknown variant");
    refused::<ZkMsg>(r#"{"session":1}"#, "missing field `type`");
    refused::<ZkMsg>(
        r#"{"type":"GetChildren","session":1}"#,
        "missing field `watch`",
    );
    refused::<ZkMsg>(r#"{"type":"GetChildren","session":1,"watch":1}"#, "");
}

#[test]
fn k8s_refuses_unknown_fields_and_types() {
    refused::<K8sMsg>(r#"{"type":"Get","name":"lease"}"#, "unknown field `name`");
    refused::<K8sMsg>(
        r#"{"type":"Release","identity":{"node":1,"incarnation":0,"host":"a"}}"#,
        "unknown field `host`",
    );
    refused::<K8sMsg>(
        r#"{"type":"GetResp","record":{"holder":null,"resource_version":1,"acquired_rv":0,"expires_at":0,"lease_duration_s":0,"renew_time":0}}"#,
        "unknown field `renew_time`",
    );
    refused::<K8sMsg>(r#"{"type":"Patch"}"#, "unknown variant");
    refused::<K8sMsg>(r#"{"type":"Release","identity":1}"#, "");
    refused::<K8sMsg>(
        r#"{"type":"Release","identity":{"node":1}}"#,
        "missing field `incarnation`",
    );
}
