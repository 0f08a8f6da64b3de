package splitbrain_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"splitbrain.dev/node/splitbrain"
)

// probe is a handler whose behaviour each test sets; it records what it was given.
type probe struct {
	onInit    func(ctx *splitbrain.Ctx, durable json.RawMessage)
	onMessage func(ctx *splitbrain.Ctx, from int, body splitbrain.Body)
	onTimer   func(ctx *splitbrain.Ctx, name string)
}

func (p *probe) Init(ctx *splitbrain.Ctx, durable json.RawMessage) {
	if p.onInit != nil {
		p.onInit(ctx, durable)
	}
}

func (p *probe) Message(ctx *splitbrain.Ctx, from int, body splitbrain.Body) {
	if p.onMessage != nil {
		p.onMessage(ctx, from, body)
	}
}

func (p *probe) Timer(ctx *splitbrain.Ctx, name string) {
	if p.onTimer != nil {
		p.onTimer(ctx, name)
	}
}

// resigner adds the optional interfaces to probe.
type resigner struct {
	probe
	resigned     int
	disconnected []int
	confChanges  []string
}

func (r *resigner) ConfChange(ctx *splitbrain.Ctx, op string, member int) {
	r.confChanges = append(r.confChanges, fmt.Sprintf("%s %d", op, member))
}

func (r *resigner) Resign(ctx *splitbrain.Ctx) {
	r.resigned++
	ctx.StepDown()
}

func (r *resigner) Disconnect(ctx *splitbrain.Ctx, peer int) {
	r.disconnected = append(r.disconnected, peer)
	ctx.Disconnect(peer)
}

var spec = splitbrain.Spec{Messages: []string{"ping", "pong"}, Timers: []string{"tick", "t\"q"}}

const initLine = `{"type":"init","protocol":1,"node":1,"members":[0,1,2],"service":null,"seed":7,"restart":false,"durable":null,"mono_ns":10,"wall_ns":20}`

func newNode(t testing.TB, h splitbrain.Handler) *splitbrain.Node {
	t.Helper()
	n, err := splitbrain.NewNode(spec, h)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// step runs one event and returns the reply as a string, failing the test on an error.
func step(t testing.TB, n *splitbrain.Node, line string) string {
	t.Helper()
	reply, err := n.Step([]byte(line))
	if err != nil {
		t.Fatalf("Step(%s): %v", line, err)
	}
	return string(reply)
}

func TestHelloAnswersTheSpec(t *testing.T) {
	n := newNode(t, &probe{})
	got := step(t, n, `{"type":"hello","protocol":1}`)
	want := `{"type":"hello_ok","protocol":1,"messages":["ping","pong"],"timers":["tick","t\"q"]}`
	if got != want {
		t.Fatalf("hello:\n got %s\nwant %s", got, want)
	}
	if !json.Valid([]byte(got)) {
		t.Fatalf("hello_ok is not JSON: %s", got)
	}
}

// A simulator speaking version 2 gets version 2, and every reply echoes its event's step.
func TestVersion2EchoesTheStep(t *testing.T) {
	n := newNode(t, &probe{})
	if got := step(t, n, `{"type":"hello","protocol":2}`); !strings.Contains(got, `"protocol":2`) {
		t.Fatalf("hello: %s", got)
	}
	init := `{"type":"init","protocol":2,"node":0,"members":[0,1],"service":null,"seed":3,"restart":false,"durable":null,"step":1,"mono_ns":1,"wall_ns":1}`
	if got := step(t, n, init); !strings.HasSuffix(got, `,"step":1}`) {
		t.Fatalf("init: %s", got)
	}
	if got := step(t, n, `{"type":"timer","name":"tick","step":2,"mono_ns":2,"wall_ns":2}`); !strings.HasSuffix(got, `,"step":2}`) {
		t.Fatalf("timer: %s", got)
	}
}

func TestNewNodeRejectsABadSpec(t *testing.T) {
	for _, s := range []splitbrain.Spec{
		{Messages: []string{"a", "a"}},
		{Timers: []string{""}},
	} {
		if _, err := splitbrain.NewNode(s, &probe{}); err == nil {
			t.Errorf("NewNode(%+v) accepted it", s)
		}
	}
	if _, err := splitbrain.NewNode(spec, nil); err == nil {
		t.Error("NewNode accepted a nil handler")
	}
}

func TestInitSetsTheContext(t *testing.T) {
	var got splitbrain.Ctx
	var peers []int
	var durable json.RawMessage
	p := &probe{onInit: func(ctx *splitbrain.Ctx, d json.RawMessage) {
		got = *ctx
		peers = append([]int(nil), ctx.Peers()...)
		durable = d
	}}
	n := newNode(t, p)
	if r := step(t, n, initLine); r != `{"effects":[]}` {
		t.Fatalf("init reply %s", r)
	}
	if got.Me != 1 || fmt.Sprint(got.Members) != "[0 1 2]" || got.Service != -1 || got.Seed != 7 ||
		got.Restart || got.MonoNs != 10 || got.WallNs != 20 || got.Rand == nil {
		t.Fatalf("ctx after init: %+v", got)
	}
	if fmt.Sprint(peers) != "[0 2]" || durable != nil || got.Quorum() != 2 {
		t.Fatalf("peers %v durable %s quorum %d", peers, durable, got.Quorum())
	}

	step(t, n, `{"type":"init","protocol":1,"node":3,"members":[0,1,2,3],"service":4,"seed":9,"restart":true,"durable":{"term":5},"mono_ns":1,"wall_ns":2}`)
	if got.Me != 3 || got.Service != 4 || !got.Restart || got.Seed != 9 || string(durable) != `{"term":5}` {
		t.Fatalf("ctx after restart: %+v durable %s", got, durable)
	}
	if fmt.Sprint(peers) != "[0 1 2]" || got.Quorum() != 3 {
		t.Fatalf("peers after restart %v", peers)
	}
}

// Every init reseeds Rand and resets what the previous run left: the same init gives the
// same behaviour.
func TestInitResets(t *testing.T) {
	var draws []uint64
	p := &probe{
		onInit: func(ctx *splitbrain.Ctx, _ json.RawMessage) {
			draws = append(draws, ctx.Rand.Uint64())
			ctx.SetTerm(1)
		},
		onTimer: func(ctx *splitbrain.Ctx, name string) { ctx.Rand.Uint64(); ctx.SetLeader(2) },
	}
	n := newNode(t, p)
	first := step(t, n, initLine)
	step(t, n, `{"type":"timer","name":"tick","mono_ns":11,"wall_ns":21}`)
	step(t, n, `{"type":"init","protocol":1,"node":0,"members":[0,1],"service":5,"seed":3,"restart":false,"durable":null,"mono_ns":1,"wall_ns":1}`)
	step(t, n, `{"type":"timer","name":"tick","mono_ns":11,"wall_ns":21}`)
	again := step(t, n, initLine)
	if again != first || first != `{"effects":[],"term":1}` {
		t.Fatalf("replies to the same init differ: %s then %s", first, again)
	}
	if len(draws) != 3 || draws[0] != draws[2] || draws[0] == draws[1] {
		t.Fatalf("Rand is not reseeded by init: %v", draws)
	}
	if c := n.Ctx(); c.Service != -1 || c.Me != 1 || c.Restart {
		t.Fatalf("init left the previous run's fields: %+v", c)
	}
}

// Each effect's JSON form, exactly as docs/protocol.md gives it.
func TestEffectsJSON(t *testing.T) {
	type state struct {
		Term  int  `json:"term"`
		Voted *int `json:"voted_for"`
	}
	cases := []struct {
		name string
		do   func(ctx *splitbrain.Ctx)
		want string
	}{
		{"send struct", func(c *splitbrain.Ctx) {
			c.Send(2, struct {
				Type string `json:"type"`
				Term int    `json:"term"`
			}{"ping", 3})
		}, `{"type":"send","to":2,"body":{"type":"ping","term":3}}`},
		{"send map", func(c *splitbrain.Ctx) { c.Send(0, map[string]any{"type": "pong", "ok": true}) },
			`{"type":"send","to":0,"body":{"ok":true,"type":"pong"}}`},
		{"send raw", func(c *splitbrain.Ctx) {
			c.Send(0, json.RawMessage("{ \"n\": [1, {\"type\":\"x\"}],\n \"type\" : \"pong\" }"))
		},
			`{"type":"send","to":0,"body":{"n":[1,{"type":"x"}],"type":"pong"}}`},
		{"set_timer", func(c *splitbrain.Ctx) { c.SetTimer("tick", 150*time.Millisecond) },
			`{"type":"set_timer","name":"tick","after_ns":150000000}`},
		{"set_wall_timer", func(c *splitbrain.Ctx) { c.SetWallTimer("t\"q", -5) },
			`{"type":"set_wall_timer","name":"t\"q","at_wall_ns":-5}`},
		{"cancel_timer", func(c *splitbrain.Ctx) { c.CancelTimer("tick") },
			`{"type":"cancel_timer","name":"tick"}`},
		{"persist struct", func(c *splitbrain.Ctx) { c.Persist(state{Term: 4}) },
			`{"type":"persist","state":{"term":4,"voted_for":null}}`},
		{"persist null", func(c *splitbrain.Ctx) { c.Persist(nil) }, `{"type":"persist","state":null}`},
		{"persist number", func(c *splitbrain.Ctx) { c.Persist(12) }, `{"type":"persist","state":12}`},
		{"lead", func(c *splitbrain.Ctx) { c.Lead(7, 18446744073709551615) },
			`{"type":"lead","term":7,"token":18446744073709551615}`},
		{"step_down", func(c *splitbrain.Ctx) { c.StepDown() }, `{"type":"step_down"}`},
		{"write", func(c *splitbrain.Ctx) { c.Write(9) }, `{"type":"write","token":9}`},
		{"campaign", func(c *splitbrain.Ctx) { c.Campaign(2) }, `{"type":"campaign","term":2}`},
		{"pre_campaign", func(c *splitbrain.Ctx) { c.PreCampaign(3) }, `{"type":"pre_campaign","term":3}`},
		{"round_failed", func(c *splitbrain.Ctx) { c.RoundFailed(2) }, `{"type":"round_failed","term":2}`},
		{"observe bool", func(c *splitbrain.Ctx) { c.Observe("ok", true) },
			`{"type":"observe","name":"ok","value":true}`},
		{"observe int", func(c *splitbrain.Ctx) { c.Observe("lag\n", int32(-3)) },
			`{"type":"observe","name":"lag\n","value":-3}`},
		{"observe null", func(c *splitbrain.Ctx) { c.Observe("x", nil) },
			`{"type":"observe","name":"x","value":null}`},
		{"disconnect", func(c *splitbrain.Ctx) { c.Disconnect(4) }, `{"type":"disconnect","peer":4}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := newNode(t, &probe{onTimer: func(ctx *splitbrain.Ctx, _ string) { tc.do(ctx) }})
			step(t, n, initLine)
			got := step(t, n, `{"type":"timer","name":"tick","mono_ns":1,"wall_ns":2}`)
			want := `{"effects":[` + tc.want + `]}`
			if got != want {
				t.Fatalf("\n got %s\nwant %s", got, want)
			}
			if !json.Valid([]byte(got)) {
				t.Fatalf("not JSON: %s", got)
			}
		})
	}
}

func TestEffectsKeepTheirOrder(t *testing.T) {
	n := newNode(t, &probe{onTimer: func(c *splitbrain.Ctx, _ string) {
		c.Persist(map[string]int{"term": 2})
		c.Campaign(2)
		c.Send(0, map[string]any{"type": "ping"})
		c.SetTimer("tick", 1)
	}})
	step(t, n, initLine)
	got := step(t, n, `{"type":"timer","name":"tick","mono_ns":1,"wall_ns":2}`)
	want := `{"effects":[{"type":"persist","state":{"term":2}},{"type":"campaign","term":2},` +
		`{"type":"send","to":0,"body":{"type":"ping"}},{"type":"set_timer","name":"tick","after_ns":1}]}`
	if got != want {
		t.Fatalf("\n got %s\nwant %s", got, want)
	}
}

// term and leader appear only in the step that set them; ClearLeader gives null.
func TestTermAndLeader(t *testing.T) {
	var do func(c *splitbrain.Ctx)
	n := newNode(t, &probe{onTimer: func(c *splitbrain.Ctx, _ string) { do(c) }})
	step(t, n, initLine)
	const tick = `{"type":"timer","name":"tick","mono_ns":1,"wall_ns":2}`
	for _, tc := range []struct {
		do   func(c *splitbrain.Ctx)
		want string
	}{
		{func(c *splitbrain.Ctx) { c.SetTerm(3); c.SetLeader(0) }, `{"effects":[],"term":3,"leader":0}`},
		{func(c *splitbrain.Ctx) {}, `{"effects":[]}`},
		{func(c *splitbrain.Ctx) { c.ClearLeader() }, `{"effects":[],"leader":null}`},
		{func(c *splitbrain.Ctx) { c.SetLeader(2); c.ClearLeader(); c.Write(1) }, `{"effects":[{"type":"write","token":1}],"leader":null}`},
		{func(c *splitbrain.Ctx) { c.SetTerm(0) }, `{"effects":[],"term":0}`},
	} {
		do = tc.do
		if got := step(t, n, tick); got != tc.want {
			t.Errorf("\n got %s\nwant %s", got, tc.want)
		}
	}
}

// digestOf returns the reply's digest (its raw JSON), or "" if the reply has none.
func digestOf(t *testing.T, reply string) string {
	t.Helper()
	var r map[string]json.RawMessage
	if err := json.Unmarshal([]byte(reply), &r); err != nil {
		t.Fatalf("the reply %s is not JSON: %v", reply, err)
	}
	return string(r["digest"])
}

func TestDigestIsSentOnlyInTheStepThatSetsItWithTheStateOfRand(t *testing.T) {
	var do func(c *splitbrain.Ctx)
	n := newNode(t, &probe{
		onInit:  func(c *splitbrain.Ctx, _ json.RawMessage) { c.SetDigest("init") },
		onTimer: func(c *splitbrain.Ctx, _ string) { do(c) },
	})
	const tick = `{"type":"timer","name":"tick","mono_ns":1,"wall_ns":2}`
	atInit := step(t, n, initLine)
	// PCG(7, 7^0x9e3779b97f4a7c15) as init seeds it, before any draw.
	const seeded = `"rand":"00000000000000079e3779b97f4a7c12"`
	if want := `{"effects":[],"digest":{"state":"init",` + seeded + `}}`; atInit != want {
		t.Fatalf("init:\n got %s\nwant %s", atInit, want)
	}
	for _, tc := range []struct {
		do   func(c *splitbrain.Ctx)
		want string
	}{
		// Reset every step: a step without SetDigest sends none (the simulator keeps the last).
		{func(c *splitbrain.Ctx) {}, `{"effects":[]}`},
		// Escaped, so any string makes valid JSON; after term and leader, before step.
		{func(c *splitbrain.Ctx) { c.SetTerm(2); c.SetDigest("a\"b\\c\n\x00é") },
			`{"effects":[],"term":2,"digest":{"state":"a\"b\\c\n\u0000é",` + seeded + `}}`},
		// The last call of a step wins, and effects are untouched by it.
		{func(c *splitbrain.Ctx) { c.SetDigest("x"); c.Write(1); c.SetDigest("18446744073709551615") },
			`{"effects":[{"type":"write","token":1}],"digest":{"state":"18446744073709551615",` + seeded + `}}`},
	} {
		do = tc.do
		if got := step(t, n, tick); got != tc.want {
			t.Errorf("\n got %s\nwant %s", got, tc.want)
		}
	}

	// A draw after SetDigest in the same step is in the digest: the state is taken as the
	// step ends, and the same state with another position of Rand is another digest.
	do = func(c *splitbrain.Ctx) { c.SetDigest("init"); c.Rand.Uint64() }
	drawn := digestOf(t, step(t, n, tick))
	if drawn == digestOf(t, atInit) || !strings.Contains(drawn, `"state":"init"`) {
		t.Fatalf("a draw from Rand left the digest as it was: %s", drawn)
	}
	// A restart reseeds Rand: the same state is the same digest again.
	again := step(t, n, `{"type":"init","protocol":1,"node":1,"members":[0,1,2],"service":null,"seed":7,"restart":true,"durable":null,"mono_ns":50,"wall_ns":60}`)
	if digestOf(t, again) != digestOf(t, atInit) {
		t.Fatalf("a restart from the same seed digests otherwise: %s, then %s", atInit, again)
	}
}

func TestMisusedEffectsAreErrors(t *testing.T) {
	for _, tc := range []struct {
		do   func(c *splitbrain.Ctx)
		want string
	}{
		{func(c *splitbrain.Ctx) { c.Send(0, map[string]any{"type": "vote"}) }, `message type "vote" is not declared`},
		{func(c *splitbrain.Ctx) { c.Send(0, map[string]any{"term": 1}) }, `no string "type"`},
		{func(c *splitbrain.Ctx) { c.Send(0, map[string]any{"type": 1}) }, `no string "type"`},
		{func(c *splitbrain.Ctx) { c.Send(0, []int{1}) }, `must be a JSON object`},
		{func(c *splitbrain.Ctx) { c.Send(0, json.RawMessage(`{"type":`)) }, `cannot marshal`},
		{func(c *splitbrain.Ctx) { c.Send(0, func() {}) }, `cannot marshal`},
		{func(c *splitbrain.Ctx) { c.SetTimer("election", time.Second) }, `timer "election" is not declared`},
		{func(c *splitbrain.Ctx) { c.SetWallTimer("election", 1) }, `timer "election" is not declared`},
		{func(c *splitbrain.Ctx) { c.CancelTimer("election") }, `timer "election" is not declared`},
		{func(c *splitbrain.Ctx) { c.SetTimer("tick", -1) }, `negative delay`},
		{func(c *splitbrain.Ctx) { c.Observe("x", 1.5) }, `must be a bool, an integer or nil`},
		{func(c *splitbrain.Ctx) { c.Observe("x", uint64(1)<<63) }, `does not fit`},
		{func(c *splitbrain.Ctx) { c.Persist(make(chan int)) }, `cannot marshal`},
		{func(c *splitbrain.Ctx) { c.Rand = rand.New(rand.NewPCG(1, 2)); c.SetDigest("x") }, `ctx.Rand was replaced`},
	} {
		n := newNode(t, &probe{onTimer: func(c *splitbrain.Ctx, _ string) { c.Write(1); tc.do(c); c.Write(2) }})
		step(t, n, initLine)
		reply, err := n.Step([]byte(`{"type":"timer","name":"tick","mono_ns":1,"wall_ns":2}`))
		if err == nil {
			t.Errorf("want an error containing %q, got the reply %s", tc.want, reply)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "splitbrain_test.go:") {
			t.Errorf("error %q: want it to contain %q and the caller's position", err, tc.want)
		}
	}
}

func TestMessageBody(t *testing.T) {
	var gotFrom int
	var gotBody splitbrain.Body
	var decoded struct {
		Type string `json:"type"`
		Term int    `json:"term"`
	}
	n := newNode(t, &probe{onMessage: func(c *splitbrain.Ctx, from int, b splitbrain.Body) {
		gotFrom, gotBody = from, b
		if err := b.Decode(&decoded); err != nil {
			t.Error(err)
		}
	}})
	step(t, n, initLine)
	step(t, n, `{"type":"message","from":2,"body":{"x":{"type":"no"},"term":4,"type":"ping"},"mono_ns":1,"wall_ns":2}`)
	if gotFrom != 2 || gotBody.Type != "ping" || string(gotBody.Raw) != `{"x":{"type":"no"},"term":4,"type":"ping"}` {
		t.Fatalf("from %d body %+v", gotFrom, gotBody)
	}
	if decoded.Term != 4 || decoded.Type != "ping" {
		t.Fatalf("decoded %+v", decoded)
	}
	// The body of one event is not overwritten by the next.
	kept := gotBody
	step(t, n, `{"type":"message","from":0,"body":{"type":"pong","term":5},"mono_ns":1,"wall_ns":2}`)
	if string(kept.Raw) != `{"x":{"type":"no"},"term":4,"type":"ping"}` || gotBody.Type != "pong" {
		t.Fatalf("kept %s, new %+v", kept.Raw, gotBody)
	}
}

func TestOptionalHandlers(t *testing.T) {
	plain := newNode(t, &probe{})
	step(t, plain, initLine)
	for _, ev := range []string{
		`{"type":"resign","mono_ns":1,"wall_ns":2}`,
		`{"type":"disconnect","peer":2,"mono_ns":1,"wall_ns":2}`,
		`{"type":"conf_change","op":"remove","node":2,"mono_ns":1,"wall_ns":2}`,
		`{"type":"from_the_future","mono_ns":1,"wall_ns":2}`,
	} {
		if got := step(t, plain, ev); got != `{"effects":[]}` {
			t.Errorf("%s without a handler: %s", ev, got)
		}
	}
	r := &resigner{}
	n := newNode(t, r)
	step(t, n, initLine)
	if got := step(t, n, `{"type":"resign","mono_ns":1,"wall_ns":2}`); got != `{"effects":[{"type":"step_down"}]}` || r.resigned != 1 {
		t.Errorf("resign: %s (%d)", got, r.resigned)
	}
	if got := step(t, n, `{"type":"disconnect","peer":2,"mono_ns":1,"wall_ns":2}`); got != `{"effects":[{"type":"disconnect","peer":2}]}` ||
		fmt.Sprint(r.disconnected) != "[2]" {
		t.Errorf("disconnect: %s (%v)", got, r.disconnected)
	}
	for _, op := range []string{"add", "remove", "add_learner", "promote"} {
		ev := `{"type":"conf_change","op":"` + op + `","node":1,"mono_ns":1,"wall_ns":2}`
		if got := step(t, n, ev); got != `{"effects":[]}` {
			t.Errorf("conf_change %s: %s", op, got)
		}
	}
	if got := fmt.Sprint(r.confChanges); got != "[add 1 remove 1 add_learner 1 promote 1]" {
		t.Errorf("conf changes: %s", got)
	}
}

func TestBadEventsAreErrors(t *testing.T) {
	n := newNode(t, &probe{})
	for _, ev := range []string{`not json`, `{"type":"init","node":1}`, `{"type":"timer","name":3}`} {
		if reply, err := n.Step([]byte(ev)); err == nil {
			t.Errorf("Step(%s) = %s, want an error", ev, reply)
		}
	}
}

// echo counts messages and answers each with a pong carrying the count.
type echo struct{ count int }

func (e *echo) Init(ctx *splitbrain.Ctx, _ json.RawMessage) { e.count = 0 }
func (e *echo) Message(ctx *splitbrain.Ctx, from int, body splitbrain.Body) {
	e.count++
	ctx.Send(from, map[string]any{"type": "pong", "n": e.count, "pad": len(body.Raw)})
}
func (e *echo) Timer(ctx *splitbrain.Ctx, name string) { panic("boom on " + name) }

// printer is echo with a stray print to stdout in Init.
type printer struct{ echo }

func (p *printer) Init(ctx *splitbrain.Ctx, d json.RawMessage) {
	fmt.Println("stray print") // must go to stderr, not into the protocol
	p.echo.Init(ctx, d)
}

func TestServe(t *testing.T) {
	big := strings.Repeat("x", 3<<20) // longer than the reader's buffer
	in := "\n" + `{"type":"hello","protocol":1}` + "\n" + initLine + "\n" +
		`{"type":"message","from":0,"body":{"type":"ping"},"mono_ns":1,"wall_ns":2}` + "\n" +
		`{"type":"message","from":2,"body":{"type":"ping","big":"` + big + `"},"mono_ns":1,"wall_ns":2}` + "\n" +
		`{"type":"message","from":0,"body":{"type":"ping"},"mono_ns":1,"wall_ns":2}` // no newline at EOF
	var out bytes.Buffer
	if err := splitbrain.Serve(spec, &echo{}, strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	want := `{"type":"hello_ok","protocol":1,"messages":["ping","pong"],"timers":["tick","t\"q"]}` + "\n" +
		`{"effects":[]}` + "\n" +
		`{"effects":[{"type":"send","to":0,"body":{"n":1,"pad":15,"type":"pong"}}]}` + "\n" +
		fmt.Sprintf(`{"effects":[{"type":"send","to":2,"body":{"n":2,"pad":%d,"type":"pong"}}]}`, len(big)+24) + "\n" +
		`{"effects":[{"type":"send","to":0,"body":{"n":3,"pad":15,"type":"pong"}}]}` + "\n"
	if out.String() != want {
		t.Fatalf("\n got %.500s\nwant %.500s", out.String(), want)
	}
}

func TestServeReturnsAPanic(t *testing.T) {
	in := initLine + "\n" + `{"type":"timer","name":"tick","mono_ns":1,"wall_ns":2}` + "\n" + initLine + "\n"
	var out bytes.Buffer
	err := splitbrain.Serve(spec, &echo{}, strings.NewReader(in), &out)
	var pe *splitbrain.PanicError
	if !errors.As(err, &pe) || pe.Value != "boom on tick" || !strings.Contains(string(pe.Stack), "(*echo).Timer") {
		t.Fatalf("err %v", err)
	}
	if out.String() != "{\"effects\":[]}\n" {
		t.Fatalf("output before the panic: %q", out.String())
	}
}

// The process-level tests re-run this test binary as a node (TestMain below).
const childEnv = "SPLITBRAIN_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "echo" {
		splitbrain.Run(spec, &printer{})
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runChild(t *testing.T, stdin string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=echo")
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

func TestProcessExitsCleanlyOnEOF(t *testing.T) {
	stdout, stderr, code := runChild(t, `{"type":"hello","protocol":1}`+"\n"+initLine+"\n"+
		`{"type":"message","from":0,"body":{"type":"ping"},"mono_ns":1,"wall_ns":2}`+"\n")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	want := `{"type":"hello_ok","protocol":1,"messages":["ping","pong"],"timers":["tick","t\"q"]}` + "\n" +
		`{"effects":[]}` + "\n" + `{"effects":[{"type":"send","to":0,"body":{"n":1,"pad":15,"type":"pong"}}]}` + "\n"
	if stdout != want {
		t.Fatalf("stdout %q", stdout)
	}
	if !strings.Contains(stderr, "stray print") {
		t.Fatalf("the stray print is not on stderr: %q", stderr)
	}
}

func TestProcessPanicExits1WithAStack(t *testing.T) {
	stdout, stderr, code := runChild(t, initLine+"\n"+`{"type":"timer","name":"tick","mono_ns":1,"wall_ns":2}`+"\n"+initLine+"\n")
	if code != 1 {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	if stdout != "{\"effects\":[]}\n" {
		t.Fatalf("stdout %q", stdout)
	}
	for _, want := range []string{"panic in a handler: boom on tick", `"name":"tick"`, "(*echo).Timer", "splitbrain_test.go:"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

func TestProcessMisuseExits1(t *testing.T) {
	_, stderr, code := runChild(t, initLine+"\n"+`{"type":"bogus`+"\n")
	if code != 1 || !strings.Contains(stderr, "cannot read the event") {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
}

// raftish does what a Raft follower does on a heartbeat: decode, compare, answer, re-arm.
type raftish struct{ term uint64 }

type hb struct {
	Type string `json:"type"`
	Term uint64 `json:"term"`
}

func (r *raftish) Init(ctx *splitbrain.Ctx, _ json.RawMessage) { r.term = 0 }
func (r *raftish) Message(ctx *splitbrain.Ctx, from int, body splitbrain.Body) {
	var m hb
	if err := body.Decode(&m); err != nil {
		panic(err)
	}
	if m.Term > r.term {
		r.term = m.Term
		ctx.SetTerm(r.term)
	}
	ctx.SetLeader(from)
	ctx.Send(from, hb{Type: "pong", Term: r.term})
	ctx.SetTimer("tick", 150*time.Millisecond+time.Duration(ctx.Rand.Int64N(int64(150*time.Millisecond))))
}
func (r *raftish) Timer(ctx *splitbrain.Ctx, name string) {}

func BenchmarkStep(b *testing.B) {
	n := newNode(b, &raftish{})
	step(b, n, initLine)
	ev := []byte(`{"type":"message","from":0,"body":{"type":"ping","term":3},"mono_ns":123456789,"wall_ns":1700000000123456789}`)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := n.Step(ev); err != nil {
			b.Fatal(err)
		}
	}
}

func TestServiceRequestsNeedNoDeclaration(t *testing.T) {
	n := newNode(t, &probe{onTimer: func(c *splitbrain.Ctx, _ string) {
		c.Send(c.Service, map[string]any{"type": "Range"})
	}})
	step(t, n, `{"type":"init","protocol":1,"node":1,"members":[0,1,2],"service":3,"seed":7,"restart":false,"durable":null,"mono_ns":10,"wall_ns":20}`)
	got := step(t, n, `{"type":"timer","name":"tick","mono_ns":11,"wall_ns":21}`)
	if want := `{"effects":[{"type":"send","to":3,"body":{"type":"Range"}}]}`; got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	// To a member, the same undeclared type is still an error.
	n = newNode(t, &probe{onTimer: func(c *splitbrain.Ctx, _ string) {
		c.Send(0, map[string]any{"type": "Range"})
	}})
	step(t, n, `{"type":"init","protocol":1,"node":1,"members":[0,1,2],"service":3,"seed":7,"restart":false,"durable":null,"mono_ns":10,"wall_ns":20}`)
	if reply, err := n.Step([]byte(`{"type":"timer","name":"tick","mono_ns":11,"wall_ns":21}`)); err == nil {
		t.Fatalf("want an error for an undeclared type to a member, got %s", reply)
	}
}

// A clustered service: init's services lists every process a client may use, and each takes
// the service's requests undeclared; without services (an older simulator) the one service.
func TestEveryServiceProcessTakesRequests(t *testing.T) {
	var services []int
	n := newNode(t, &probe{
		onInit: func(c *splitbrain.Ctx, _ json.RawMessage) { services = c.Services },
		onTimer: func(c *splitbrain.Ctx, _ string) {
			for _, s := range c.Services {
				c.Send(s, map[string]any{"type": "Range"})
			}
		},
	})
	step(t, n, `{"type":"init","protocol":1,"node":1,"members":[0,1,2],"service":3,"services":[3,4,5],"seed":7,"restart":false,"durable":null,"mono_ns":10,"wall_ns":20}`)
	if fmt.Sprint(services) != "[3 4 5]" {
		t.Fatalf("services %v", services)
	}
	got := step(t, n, `{"type":"timer","name":"tick","mono_ns":11,"wall_ns":21}`)
	want := `{"effects":[{"type":"send","to":3,"body":{"type":"Range"}},{"type":"send","to":4,"body":{"type":"Range"}},{"type":"send","to":5,"body":{"type":"Range"}}]}`
	if got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	step(t, n, `{"type":"init","protocol":1,"node":1,"members":[0,1,2],"service":3,"seed":7,"restart":false,"durable":null,"mono_ns":10,"wall_ns":20}`)
	if fmt.Sprint(services) != "[3]" {
		t.Fatalf("services without the field %v", services)
	}
}
