//! The worked exchanges of `docs/protocol-services.md` are what the built-in clients and
//! services send: each is regenerated here from a run on the test network (latency 1-5 ms,
//! every clock true time) and compared with the document's text, line by line.

use crate::etcd::EtcdConfig;
use crate::k8s_lease::K8sConfig;
use crate::testing::{Cluster, Observed, MS};
use crate::zookeeper::ZkConfig;
use serde::Serialize;
use splitbrain_sim::Process;

const DOC: &str = include_str!("../../../docs/protocol-services.md");

/// The fenced block that follows `<!-- exchange: name -->` in the document.
fn documented(name: &str) -> String {
    let marker = format!("<!-- exchange: {name} -->\n```text\n");
    let start = DOC
        .find(&marker)
        .unwrap_or_else(|| panic!("the document has no exchange {name:?}"))
        + marker.len();
    let len = DOC[start..].find("```").expect("the block is closed");
    DOC[start..start + len].to_string()
}

/// One line per message sent, leadership claim and step-down in `history[from..]`: the send
/// time in milliseconds, sender -> receiver, the body as JSON.
fn lines<P: Process>(c: &Cluster<P>, from: usize, out: &mut String)
where
    P::Msg: Serialize,
{
    for (t, i, what) in &c.history[from..] {
        let at = format!("{:>9.3}", *t as f64 / MS as f64);
        match what {
            Observed::Sent { to, msg } => {
                let body = serde_json::to_string(msg).expect("serializes");
                out.push_str(&format!("{at}  {i} -> {to}  {body}\n"));
            }
            Observed::BecameLeader { term, token } => {
                out.push_str(&format!("{at}  {i} leads (term {term}, token {token})\n"));
            }
            Observed::SteppedDown => out.push_str(&format!("{at}  {i} steps down\n")),
            Observed::Signal(_) => {}
        }
    }
}

/// Two members start at 0; the leader is asked to resign at `resign_ms`; the run goes on to
/// `end_ms`. The transcript of what they and the service sent.
fn transcript<P: Process>(nodes: Vec<P>, resign_ms: u64, end_ms: u64) -> String
where
    P::Msg: Serialize,
{
    let mut c = Cluster::new(nodes, 7);
    c.start();
    c.run_until(resign_ms * MS);
    let mut out = String::new();
    lines(&c, 0, &mut out);
    let leader = c.leader();
    out.push_str(&format!(
        "{:>9.3}  {leader} is asked to resign\n",
        resign_ms as f64
    ));
    let seen = c.history.len();
    c.resign(leader);
    c.run_until(end_ms * MS);
    lines(&c, seen, &mut out);
    out
}

/// Asserts the document's exchange `name` is `actual`, showing the run's text if not.
fn check(name: &str, actual: &str) {
    let doc = documented(name);
    assert!(
        doc == actual,
        "docs/protocol-services.md, exchange {name}, differs from the run:\n{actual}"
    );
}

#[test]
fn the_documented_etcd_exchange_is_the_built_in_clients() {
    let config = EtcdConfig {
        ttl_ns: 3_000 * MS,
        keepalive_ns: 1_000 * MS,
        lessor_phase_ns: Some(0),
        ..EtcdConfig::default()
    };
    check(
        "etcd",
        &transcript(crate::etcd::processes(2, &config), 3_500, 4_000),
    );
}

#[test]
fn the_documented_zookeeper_exchange_is_the_built_in_clients() {
    let config = ZkConfig {
        tick_ns: 1_000 * MS,
        session_timeout_ns: 6_000 * MS,
        ..ZkConfig::default()
    };
    check(
        "zookeeper",
        &transcript(crate::zookeeper::processes(2, &config), 4_500, 5_000),
    );
}

#[test]
fn the_documented_k8s_exchange_is_the_built_in_clients() {
    check(
        "k8s",
        &transcript(
            crate::k8s_lease::processes(2, &K8sConfig::default()),
            5_000,
            6_000,
        ),
    );
}

/// The step-protocol lines of the document's last example are JSON, and every message body
/// in them, to the service or from it, reads as an etcd message.
#[test]
fn the_documented_step_lines_carry_etcd_messages() {
    let start = DOC.find("## In the step protocol").expect("the section");
    let block = &DOC[start..];
    let open = block.find("```json\n").expect("the example") + "```json\n".len();
    let close = open + block[open..].find("```").expect("closed");
    let mut bodies = 0;
    for line in block[open..close].lines() {
        let value: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        let sent = value["effects"].as_array().into_iter().flatten();
        for body in sent
            .map(|effect| &effect["body"])
            .chain(std::iter::once(&value["body"]))
            .filter(|body| !body.is_null())
        {
            let msg: crate::etcd::EtcdMsg =
                serde_json::from_value(body.clone()).expect("an etcd message");
            assert_eq!(
                serde_json::to_value(&msg).unwrap(),
                *body,
                "written as the form"
            );
            bodies += 1;
        }
    }
    assert_eq!(bodies, 6);
}
