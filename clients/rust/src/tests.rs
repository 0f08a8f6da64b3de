use super::*;
use serde_json::json;

/// A node that does, on each event, what the test put in `script`.
#[derive(Default)]
struct Scripted {
    inits: u32,
    durable: Option<Value>,
    got: Vec<(u64, Body)>,
}

type Script = fn(&mut Ctx) -> Result;

struct Node1 {
    s: Scripted,
    on_timer: Script,
}

impl Handler for Node1 {
    fn init(&mut self, ctx: &mut Ctx, durable: Option<&Value>) -> Result {
        self.s.inits += 1;
        self.s.durable = durable.cloned();
        ctx.set_term(0);
        ctx.clear_leader();
        Ok(())
    }
    fn message(&mut self, _ctx: &mut Ctx, from: u64, body: &Body) -> Result {
        self.s.got.push((from, body.clone()));
        Ok(())
    }
    fn timer(&mut self, ctx: &mut Ctx, _name: &str) -> Result {
        (self.on_timer)(ctx)
    }
}

/// A node that keeps the default handlers of the optional events.
struct Plain;

impl Handler for Plain {
    fn init(&mut self, _ctx: &mut Ctx, _durable: Option<&Value>) -> Result {
        Ok(())
    }
    fn message(&mut self, _ctx: &mut Ctx, _from: u64, _body: &Body) -> Result {
        Ok(())
    }
    fn timer(&mut self, _ctx: &mut Ctx, _name: &str) -> Result {
        Ok(())
    }
}

/// Records the membership changes it is asked for.
struct Changer(Vec<(ConfOp, u64)>);

impl Handler for Changer {
    fn init(&mut self, _ctx: &mut Ctx, _durable: Option<&Value>) -> Result {
        Ok(())
    }
    fn message(&mut self, _ctx: &mut Ctx, _from: u64, _body: &Body) -> Result {
        Ok(())
    }
    fn timer(&mut self, _ctx: &mut Ctx, _name: &str) -> Result {
        Ok(())
    }
    fn conf_change(&mut self, _ctx: &mut Ctx, op: ConfOp, member: u64) -> Result {
        self.0.push((op, member));
        Ok(())
    }
}

fn spec() -> Spec {
    Spec::new(&["ping", "pong"], &["tick", "lease"])
}

const INIT: &str = r#"{"type":"init","protocol":2,"node":1,"members":[0,1,2],"service":null,"seed":7,"restart":false,"durable":null,"step":1,"mono_ns":5,"wall_ns":6}"#;

fn node(on_timer: Script) -> Node<Node1> {
    let mut n = Node::new(
        spec(),
        Node1 {
            s: Scripted::default(),
            on_timer,
        },
    )
    .unwrap();
    assert_eq!(
        n.step(INIT).unwrap(),
        r#"{"effects":[],"term":0,"leader":null,"step":1}"#
    );
    n
}

fn tick(n: &mut Node<Node1>) -> Result<String> {
    n.step(r#"{"type":"timer","name":"tick","step":2,"mono_ns":100,"wall_ns":-3}"#)
}

#[test]
fn hello_declares_the_spec_and_the_version() {
    let mut n = Node::new(
        spec(),
        Node1 {
            s: Scripted::default(),
            on_timer: |_| Ok(()),
        },
    )
    .unwrap();
    assert_eq!(
        n.step(r#"{"type":"hello","protocol":2}"#).unwrap(),
        r#"{"type":"hello_ok","protocol":2,"messages":["ping","pong"],"timers":["tick","lease"]}"#
    );
    // An older simulator gets the newest version both speak; a newer one gets ours.
    assert!(n
        .step(r#"{"type":"hello","protocol":1}"#)
        .unwrap()
        .contains(r#""protocol":1,"#));
    assert!(n
        .step(r#"{"type":"hello","protocol":3}"#)
        .unwrap()
        .contains(r#""protocol":2,"#));
}

#[test]
fn init_sets_the_context() {
    let n = node(|_| Ok(()));
    let c = n.ctx();
    assert_eq!(
        (c.me, c.members.clone(), c.service, c.seed, c.restart),
        (1, vec![0, 1, 2], None, 7, false)
    );
    assert_eq!((c.mono_ns, c.wall_ns), (5, 6));
    assert_eq!(c.peers(), vec![0, 2]);
    assert_eq!(c.quorum(), 2);
    assert_eq!(c.rng, Rng::new(7));
}

#[test]
fn restart_gives_durable_back_and_reseeds() {
    let mut n = node(|ctx| {
        ctx.rng.next_u64();
        Ok(())
    });
    tick(&mut n).unwrap();
    let line = r#"{"type":"init","protocol":2,"node":1,"members":[0,1,2],"service":3,"seed":7,"restart":true,"durable":{"term":4},"step":3,"mono_ns":9,"wall_ns":9}"#;
    n.step(line).unwrap();
    assert_eq!(n.handler().s.inits, 2);
    assert_eq!(n.handler().s.durable, Some(json!({"term": 4})));
    assert!(n.ctx().restart);
    assert_eq!(n.ctx().service, Some(3));
    assert_eq!(n.ctx().rng, Rng::new(7), "init reseeds the generator");
}

#[test]
fn every_effect_in_call_order() {
    let mut n = node(|ctx| {
        ctx.send(0, &json!({"type": "ping", "term": 3}))?;
        ctx.set_timer("tick", Duration::from_millis(150))?;
        ctx.set_wall_timer("lease", -5)?;
        ctx.cancel_timer("lease")?;
        ctx.persist(&json!({"term": 3, "voted_for": null}))?;
        ctx.lead(3, 3);
        ctx.write(3);
        ctx.step_down();
        ctx.campaign(4);
        ctx.pre_campaign(5);
        ctx.round_failed(4);
        ctx.observe("held", true)?;
        ctx.observe("epoch", (3u64, 1u64))?;
        ctx.observe("none", ())?;
        ctx.observe("n", -2i64)?;
        ctx.disconnect(2)?;
        ctx.set_term(4);
        ctx.set_leader(2)?;
        Ok(())
    });
    let want = concat!(
        r#"{"effects":[{"type":"send","to":0,"body":{"term":3,"type":"ping"}},"#,
        r#"{"type":"set_timer","name":"tick","after_ns":150000000},"#,
        r#"{"type":"set_wall_timer","name":"lease","at_wall_ns":-5},"#,
        r#"{"type":"cancel_timer","name":"lease"},"#,
        r#"{"type":"persist","state":{"term":3,"voted_for":null}},"#,
        r#"{"type":"lead","term":3,"token":3},{"type":"write","token":3},{"type":"step_down"},"#,
        r#"{"type":"campaign","term":4},{"type":"pre_campaign","term":5},{"type":"round_failed","term":4},"#,
        r#"{"type":"observe","name":"held","value":true},{"type":"observe","name":"epoch","value":[3,1]},"#,
        r#"{"type":"observe","name":"none","value":null},{"type":"observe","name":"n","value":-2},"#,
        r#"{"type":"disconnect","peer":2}],"term":4,"leader":2,"step":2}"#
    );
    assert_eq!(tick(&mut n).unwrap(), want);
    let c = n.ctx();
    assert_eq!((c.mono_ns, c.wall_ns), (100, -3));
}

#[test]
fn a_reply_without_term_or_leader_leaves_them_out() {
    let mut n = node(|_| Ok(()));
    assert_eq!(tick(&mut n).unwrap(), r#"{"effects":[],"step":2}"#);
    // Version 1: no step in the event, none in the reply.
    let r = n
        .step(r#"{"type":"timer","name":"tick","mono_ns":1,"wall_ns":1}"#)
        .unwrap();
    assert_eq!(r, r#"{"effects":[]}"#);
}

#[test]
fn messages_reach_the_handler_with_their_type() {
    let mut n = node(|_| Ok(()));
    let r = n.step(r#"{"type":"message","from":2,"body":{"type":"ping","n":1},"step":2,"mono_ns":1,"wall_ns":1}"#);
    assert_eq!(r.unwrap(), r#"{"effects":[],"step":2}"#);
    let (from, body) = &n.handler().s.got[0];
    assert_eq!((*from, body.ty.as_str()), (2, "ping"));
    assert_eq!(body.decode::<Value>().unwrap()["n"], 1);
}

#[test]
fn unknown_events_and_default_handlers_answer_empty() {
    let mut n = node(|_| Ok(()));
    for ev in [
        r#"{"type":"resign","step":2,"mono_ns":1,"wall_ns":1}"#,
        r#"{"type":"disconnect","peer":0,"step":2,"mono_ns":1,"wall_ns":1}"#,
        r#"{"type":"from_the_future","x":[1],"step":2,"mono_ns":1,"wall_ns":1}"#,
    ] {
        assert_eq!(n.step(ev).unwrap(), r#"{"effects":[],"step":2}"#);
    }
    let mut plain = Node::new(spec(), Plain).unwrap();
    plain.step(INIT).unwrap();
    let ev = r#"{"type":"conf_change","op":"remove","node":2,"step":2,"mono_ns":1,"wall_ns":1}"#;
    assert_eq!(plain.step(ev).unwrap(), r#"{"effects":[],"step":2}"#);
}

#[test]
fn a_conf_change_reaches_its_handler_with_the_operation_and_member() {
    let mut n = Node::new(spec(), Changer(Vec::new())).unwrap();
    n.step(INIT).unwrap();
    for (step, op) in ["add", "remove", "add_learner", "promote", "split"]
        .iter()
        .enumerate()
    {
        let ev = format!(
            r#"{{"type":"conf_change","op":"{op}","node":1,"step":{},"mono_ns":1,"wall_ns":1}}"#,
            step + 2
        );
        assert_eq!(
            n.step(&ev).unwrap(),
            format!(r#"{{"effects":[],"step":{}}}"#, step + 2)
        );
    }
    let want = [
        ConfOp::Add,
        ConfOp::Remove,
        ConfOp::AddLearner,
        ConfOp::Promote,
    ];
    assert_eq!(n.handler().0, want.map(|op| (op, 1)));
    let bad = r#"{"type":"conf_change","node":1,"step":7,"mono_ns":1,"wall_ns":1}"#;
    assert!(n.step(bad).is_err());
}

#[test]
fn a_digest_is_sent_only_in_the_step_that_sets_it_with_the_generators_state() {
    let mut n = node(|c| c.set_digest(&json!({"vote": 1, "term": u64::MAX, "s": "a\"b"})));
    assert_eq!(
        tick(&mut n).unwrap(),
        concat!(
            r#"{"effects":[],"digest":{"state":{"s":"a\"b","term":18446744073709551615,"vote":1},"#,
            r#""rand":"0000000000000007"},"step":2}"#
        )
    );
    // Reset every step: a step without set_digest sends none (the simulator keeps the last).
    let mut n = node(|c| {
        c.set_digest(&"stale")?;
        c.set_digest(&"last")?; // the last call of a step wins
        c.rng.next_u64(); // after the call, still in this step's digest
        Ok(())
    });
    let first = tick(&mut n).unwrap();
    let rand = format!("{:016x}", 7u64.wrapping_add(0x9e37_79b9_7f4a_7c15));
    assert_eq!(
        first,
        format!(r#"{{"effects":[],"digest":{{"state":"last","rand":"{rand}"}},"step":2}}"#)
    );
    let second = tick(&mut n).unwrap();
    assert_ne!(
        first, second,
        "the same state after another draw is another digest"
    );
    n.step(INIT).unwrap();
    assert_eq!(
        tick(&mut n).unwrap(),
        first,
        "init reseeds: the same state digests alike"
    );
}

/// Each misuse is an error that names the call, its position and the event.
#[test]
fn misused_effects_name_the_call() {
    let cases: [(Script, &str); 10] = [
        (|c| c.send(0, &json!({"type": "pnig"})), "send at tests.rs:"),
        (
            |c| c.send(0, &json!({"type": "pnig"})),
            r#"message type "pnig" is not declared in Spec.messages ["ping", "pong"]"#,
        ),
        (|c| c.send(0, &json!([1])), "must be a JSON object"),
        (
            |c| c.send(0, &json!({"kind": "ping"})),
            r#"no string "type""#,
        ),
        (|c| c.send(9, &json!({"type": "ping"})), "send at tests.rs:"),
        (
            |c| c.set_timer("tock", Duration::ZERO),
            r#"set_timer at tests.rs:"#,
        ),
        (
            |c| c.cancel_timer("tock"),
            r#"timer "tock" is not declared in Spec.timers ["tick", "lease"]"#,
        ),
        (|c| c.set_leader(7), "set_leader at tests.rs:"),
        (|c| c.observe("a b", 1i64), "observe at tests.rs:"),
        (
            |c| c.set_digest(&std::collections::BTreeMap::from([((1, 2), 3)])),
            "set_digest at tests.rs:",
        ),
    ];
    for (script, want) in cases {
        let mut n = node(script);
        let e = tick(&mut n).unwrap_err().to_string();
        assert!(e.contains(want), "{e:?} lacks {want:?}");
        assert!(e.contains(r#"(handling {"type":"timer""#), "{e}");
    }
    let mut n = node(|c| c.send(9, &json!({"type": "ping"})));
    assert!(tick(&mut n)
        .unwrap_err()
        .to_string()
        .contains("the destination 9 is no member [0, 1, 2]"));
}

#[test]
fn a_dropped_error_still_fails_the_step() {
    let mut n = node(|c| {
        let _ = c.set_timer("nope", Duration::ZERO);
        c.write(1);
        Ok(())
    });
    assert!(tick(&mut n)
        .unwrap_err()
        .to_string()
        .contains(r#"timer "nope""#));
}

#[test]
fn the_service_takes_undeclared_requests() {
    let mut n = node(|c| c.send(3, &json!({"type": "LeaseGrant", "ttl_ms": 5000})));
    n.step(r#"{"type":"init","protocol":2,"node":1,"members":[0,1,2],"service":3,"seed":1,"restart":false,"durable":null,"step":1,"mono_ns":0,"wall_ns":0}"#)
        .unwrap();
    assert!(tick(&mut n)
        .unwrap()
        .contains(r#""to":3,"body":{"ttl_ms":5000,"type":"LeaseGrant"}"#));
}

#[test]
fn every_process_of_a_clustered_service_takes_requests() {
    let mut n = node(|c| c.send(5, &json!({"type": "Range"})));
    n.step(r#"{"type":"init","protocol":2,"node":1,"members":[0,1,2],"service":3,"services":[3,4,5],"seed":1,"restart":false,"durable":null,"step":1,"mono_ns":0,"wall_ns":0}"#)
        .unwrap();
    assert!(tick(&mut n)
        .unwrap()
        .contains(r#""to":5,"body":{"type":"Range"}"#));
    let mut n = node(|c| c.send(6, &json!({"type": "Range"})));
    n.step(r#"{"type":"init","protocol":2,"node":1,"members":[0,1,2],"service":3,"services":[3,4,5],"seed":1,"restart":false,"durable":null,"step":2,"mono_ns":0,"wall_ns":0}"#)
        .unwrap();
    let error = tick(&mut n).unwrap_err().to_string();
    assert!(error.contains("a service process 3 to 5"), "{error}");
}

#[test]
fn bad_events_and_bad_specs_are_errors() {
    let mut n = node(|_| Ok(()));
    assert!(n
        .step("not json")
        .unwrap_err()
        .to_string()
        .contains("cannot read the event"));
    assert!(n
        .step("[1]")
        .unwrap_err()
        .to_string()
        .contains("not a JSON object"));
    assert!(n
        .step(r#"{"type":"init","step":1}"#)
        .unwrap_err()
        .to_string()
        .contains("members"));
    let h = || Node1 {
        s: Scripted::default(),
        on_timer: |_| Ok(()),
    };
    assert!(Node::new(Spec::new(&["a", "a"], &[]), h())
        .err()
        .unwrap()
        .to_string()
        .contains("twice"));
    assert!(Node::new(Spec::new(&[], &[""]), h())
        .err()
        .unwrap()
        .to_string()
        .contains("Spec.timers"));
    assert!(Node::new(Spec::new(&["x y"], &[]), h()).is_err());
}

#[test]
fn handler_errors_end_the_step() {
    let mut n = node(|_| Err(Error::new("mine")));
    assert!(tick(&mut n)
        .unwrap_err()
        .to_string()
        .starts_with("mine (handling"));
}

#[test]
fn serve_answers_each_line_and_stops_at_eof() {
    let input = format!(
        "{}\n\n{INIT}\n{}\n",
        r#"{"type":"hello","protocol":2}"#,
        r#"{"type":"timer","name":"tick","step":2,"mono_ns":1,"wall_ns":1}"#
    );
    let mut out = Vec::new();
    let h = Node1 {
        s: Scripted::default(),
        on_timer: |c| c.set_timer("tick", Duration::from_nanos(7)),
    };
    serve(spec(), h, input.as_bytes(), &mut out).unwrap();
    let out = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(lines[0].starts_with(r#"{"type":"hello_ok""#));
    assert_eq!(
        lines[2],
        r#"{"effects":[{"type":"set_timer","name":"tick","after_ns":7}],"step":2}"#
    );
}

/// The generator's stream is fixed: these values are SplitMix64's for seed 0 and 7.
#[test]
fn rng_is_splitmix64() {
    let mut r = Rng::new(0);
    assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
    assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    let mut a = Rng::new(7);
    let mut b = Rng::new(7);
    for _ in 0..100 {
        let x = a.range(150, 300);
        assert!((150..=300).contains(&x));
        assert_eq!(x, b.range(150, 300));
    }
    assert_eq!(Rng::new(1).range(5, 5), 5);
    let d = Rng::new(3).duration(Duration::from_millis(150), Duration::from_millis(300));
    assert!(d >= Duration::from_millis(150) && d <= Duration::from_millis(300));
    // Every value of a small range comes up.
    let mut seen = [false; 4];
    for _ in 0..64 {
        seen[a.below(4) as usize] = true;
    }
    assert_eq!(seen, [true; 4]);
}
