package etcdelection

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"splitbrain.dev/node/splitbrain"
)

// reply is a decoded reply line.
type reply struct {
	Effects []struct {
		Type  string          `json:"type"`
		To    int             `json:"to"`
		Body  json.RawMessage `json:"body"`
		Name  string          `json:"name"`
		After int64           `json:"after_ns"`
		State json.RawMessage `json:"state"`
		Term  uint64          `json:"term"`
		Token uint64          `json:"token"`
	} `json:"effects"`
	Term   *uint64         `json:"term"`
	Leader json.RawMessage `json:"leader"`
}

// sends lists the bodies sent to the service, compacted, in order.
func (r reply) sends(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, e := range r.Effects {
		if e.Type == "send" {
			if e.To != 3 {
				t.Fatalf("a send to %d, not the service (3): %s", e.To, e.Body)
			}
			out = append(out, string(e.Body))
		}
	}
	return out
}

// kinds lists the effects' types, with a timer's name (set_timer:retry) or a lead's term.
func (r reply) kinds() string {
	var out []string
	for _, e := range r.Effects {
		switch e.Type {
		case "set_timer", "cancel_timer":
			out = append(out, e.Type+":"+e.Name)
		case "lead":
			out = append(out, fmt.Sprintf("lead:%d/%d", e.Term, e.Token))
		case "write":
			out = append(out, fmt.Sprintf("write:%d", e.Token))
		case "send":
			var b struct{ Type string }
			_ = json.Unmarshal(e.Body, &b)
			out = append(out, "send:"+b.Type)
		default:
			out = append(out, e.Type)
		}
	}
	return strings.Join(out, " ")
}

// member is node 0 of members [0,1,2] with the service 3, driven by hand.
type member struct {
	t    *testing.T
	node *splitbrain.Node
	now  int64
	last reply // the reply to init
}

func newMember(t *testing.T, broken bool, restart bool, durable string) *member {
	n, err := splitbrain.NewNode(Spec, &Node{Broken: broken})
	if err != nil {
		t.Fatal(err)
	}
	m := &member{t: t, node: n}
	return m.init(restart, durable)
}

func (m *member) init(restart bool, durable string) *member {
	m.t.Helper()
	m.last = m.step(fmt.Sprintf(`{"type":"init","protocol":1,"node":0,"members":[0,1,2],"service":3,"seed":1,"restart":%v,"durable":%s`, restart, durable))
	return m
}

// step sends an event (its fields before the clocks), 1 ms after the last, and decodes the
// reply.
func (m *member) step(fields string) reply {
	m.t.Helper()
	m.now += 1_000_000
	line := fmt.Sprintf(`%s,"mono_ns":%d,"wall_ns":%d}`, fields, m.now, m.now+1_700_000_000_000_000_000)
	out, err := m.node.Step([]byte(line))
	if err != nil {
		m.t.Fatalf("%s: %v", line, err)
	}
	var r reply
	if err := json.Unmarshal(out, &r); err != nil {
		m.t.Fatalf("reply %s: %v", out, err)
	}
	return r
}

func (m *member) answer(body string) reply {
	m.t.Helper()
	return m.step(`{"type":"message","from":3,"body":` + body)
}

func (m *member) timer(name string) reply {
	m.t.Helper()
	return m.step(`{"type":"timer","name":"` + name + `"`)
}

func wantSends(t *testing.T, r reply, want ...string) {
	t.Helper()
	got := r.sends(t)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("sends:\n%s\nwant:\n%s\n(effects: %s)", strings.Join(got, "\n"), strings.Join(want, "\n"), r.kinds())
	}
}

func wantKinds(t *testing.T, r reply, want string) {
	t.Helper()
	if got := r.kinds(); got != want {
		t.Fatalf("effects %q, want %q", got, want)
	}
}

func wantTermLeader(t *testing.T, r reply, term uint64, leader string) {
	t.Helper()
	if r.Term == nil || *r.Term != term || string(r.Leader) != leader {
		got := "absent"
		if r.Term != nil {
			got = fmt.Sprint(*r.Term)
		}
		t.Fatalf("term %s leader %s, want %d and %s", got, r.Leader, term, leader)
	}
}

// granted takes node 0 through its first grant (lease 7, TTL 5 s): KeepAlive and Txn.
func (m *member) granted() {
	m.t.Helper()
	r := m.answer(`{"type":"LeaseGrantResp","lease":7,"ttl_ns":5000000000,"sent_at":1000000,"campaign":1}`)
	wantSends(m.t, r, `{"type":"KeepAlive","lease":7,"sent_at":2000000}`, `{"type":"Txn","lease":7}`)
}

func TestCampaignGrantsALeaseThenCreatesTheKey(t *testing.T) {
	m := newMember(t, false, false, "null")
	r := m.last
	wantSends(t, r, `{"type":"LeaseGrant","ttl_ns":5000000000,"sent_at":1000000,"campaign":1}`)
	wantKinds(t, r, "cancel_timer:keepalive cancel_timer:deadline cancel_timer:write send:LeaseGrant set_timer:retry persist")
	wantTermLeader(t, r, 0, "null")
	r = m.answer(`{"type":"LeaseGrantResp","lease":7,"ttl_ns":5000000000,"sent_at":1000000,"campaign":1}`)
	wantKinds(t, r, "send:KeepAlive set_timer:keepalive set_timer:deadline send:Txn set_timer:retry")
	for _, e := range r.Effects {
		if e.Name == "retry" && e.After != 5_000_000_000/3 {
			t.Fatalf("retry after %d, want a third of the TTL", e.After)
		}
	}
	// The same grant again (a duplicate) is dropped: the lease is held.
	wantKinds(t, m.answer(`{"type":"LeaseGrantResp","lease":8,"ttl_ns":5000000000,"sent_at":1000000,"campaign":1}`), "")
}

func TestLowestKeyLeadsWithItsCreateRevision(t *testing.T) {
	m := newMember(t, false, false, "null")
	m.granted()
	r := m.answer(`{"type":"TxnResp","lease":7,"create_rev":4,"revision":4,"keys":[[4,0],[5,2]]}`)
	wantKinds(t, r, "cancel_timer:retry lead:4/4 write:4 set_timer:write persist")
	wantTermLeader(t, r, 4, "0")
	r = m.timer("write")
	wantKinds(t, r, "write:4 set_timer:write")
	// clientv3's send loop: the first keep-alive went with the grant; none is due until a
	// third of the TTL after its answer.
	m.answer(`{"type":"KeepAliveResp","lease":7,"ttl_ns":5000000000,"sent_at":2000000}`)
	wantKinds(t, m.timer("keepalive"), "set_timer:keepalive")
	m.now += int64(TTL / 3)
	wantKinds(t, m.timer("keepalive"), "send:KeepAlive set_timer:keepalive")
}

func TestAWaiterWatchesItsPredecessorAndLeadsWhenItGoes(t *testing.T) {
	m := newMember(t, false, false, "null")
	m.granted()
	r := m.answer(`{"type":"TxnResp","lease":7,"create_rev":6,"revision":6,"keys":[[2,1],[4,2],[6,0]]}`)
	// The predecessor (4) and, Election.Observe, the leader's key (2).
	wantSends(t, r, `{"type":"Watch","key":4,"start_rev":7}`, `{"type":"Watch","key":2,"start_rev":7}`)
	wantTermLeader(t, r, 6, "1")
	// A delete of a key it does not watch changes nothing but the term (persisted).
	wantKinds(t, m.answer(`{"type":"WatchEvent","key":3,"revision":7}`), "persist")
	// The leader's key goes: re-read; node 2 leads now, the predecessor is unchanged.
	wantSends(t, m.answer(`{"type":"WatchEvent","key":2,"revision":7}`), `{"type":"Range"}`)
	r = m.answer(`{"type":"RangeResp","revision":7,"keys":[[4,2],[6,0]]}`)
	wantSends(t, r)
	wantTermLeader(t, r, 7, "2")
	// A stale view (older revision) is ignored.
	wantKinds(t, m.answer(`{"type":"RangeResp","revision":6,"keys":[[6,0]]}`), "")
	wantSends(t, m.answer(`{"type":"WatchEvent","key":4,"revision":8}`), `{"type":"Range"}`)
	r = m.answer(`{"type":"RangeResp","revision":8,"keys":[[6,0]]}`)
	wantKinds(t, r, "cancel_timer:retry lead:6/6 write:6 set_timer:write")
	wantTermLeader(t, r, 8, "0")
}

func TestALostLeaseEndsTheLeadership(t *testing.T) {
	for _, tc := range []struct {
		name string
		lose func(m *member) reply
	}{
		{"keep-alive answered TTL 0", func(m *member) reply {
			return m.answer(`{"type":"KeepAliveResp","lease":7,"ttl_ns":0,"sent_at":2000000}`)
		}},
		{"deadline passed", func(m *member) reply {
			m.now += int64(TTL)
			return m.timer("deadline")
		}},
		{"own key missing from a view", func(m *member) reply {
			return m.answer(`{"type":"RangeResp","revision":9,"keys":[[8,1]]}`)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMember(t, false, false, "null")
			m.granted()
			m.answer(`{"type":"TxnResp","lease":7,"create_rev":4,"revision":4,"keys":[[4,0]]}`)
			r := tc.lose(m)
			if !strings.HasPrefix(r.kinds(), "step_down cancel_timer:write send:Revoke ") {
				t.Fatalf("effects %q: want a step-down and a revoke first", r.kinds())
			}
			sends := r.sends(t)
			if sends[0] != `{"type":"Revoke","lease":7}` || !strings.Contains(sends[1], `"type":"LeaseGrant"`) || !strings.Contains(sends[1], `"campaign":2`) {
				t.Fatalf("sends %q: want Revoke of lease 7 then LeaseGrant of campaign 2", sends)
			}
			// The leader no longer writes.
			wantKinds(t, m.timer("write"), "")
		})
	}
}

func TestTheDeadlineLoopWaitsForTheDeadline(t *testing.T) {
	m := newMember(t, false, false, "null")
	m.granted()
	m.answer(`{"type":"TxnResp","lease":7,"create_rev":4,"revision":4,"keys":[[4,0]]}`)
	m.now += int64(TTL) - 10_000_000
	wantKinds(t, m.timer("deadline"), "set_timer:deadline")
}

func TestARestartKeepsTheTermAndCampaignsAnew(t *testing.T) {
	m := newMember(t, false, true, `{"revision":9,"campaigns":3}`)
	r := m.last
	wantSends(t, r, `{"type":"LeaseGrant","ttl_ns":5000000000,"sent_at":1000000,"campaign":4}`)
	wantTermLeader(t, r, 9, "null")
	// A grant asked for before the crash (campaign 3) is not this incarnation's.
	wantKinds(t, m.answer(`{"type":"LeaseGrantResp","lease":5,"ttl_ns":5000000000,"sent_at":1,"campaign":3}`), "")
	// init resets everything: the same node re-initialised from scratch starts over.
	m.init(false, "null")
	wantSends(t, m.last, `{"type":"LeaseGrant","ttl_ns":5000000000,"sent_at":3000000,"campaign":1}`)
	wantTermLeader(t, m.last, 0, "null")
}

func TestDisconnectResendsWhatWasOutstanding(t *testing.T) {
	m := newMember(t, false, false, "null")
	wantSends(t, m.step(`{"type":"disconnect","peer":3`), `{"type":"LeaseGrant","ttl_ns":5000000000,"sent_at":2000000,"campaign":1}`)
	m.answer(`{"type":"LeaseGrantResp","lease":7,"ttl_ns":5000000000,"sent_at":1000000,"campaign":1}`)
	wantSends(t, m.step(`{"type":"disconnect","peer":3`), `{"type":"Txn","lease":7}`)
	m.answer(`{"type":"TxnResp","lease":7,"create_rev":6,"revision":6,"keys":[[4,2],[6,0]]}`)
	wantSends(t, m.step(`{"type":"disconnect","peer":3`), `{"type":"Range"}`)
	// The next view re-creates the watch lost with the connection.
	wantSends(t, m.answer(`{"type":"RangeResp","revision":6,"keys":[[4,2],[6,0]]}`), `{"type":"Watch","key":4,"start_rev":7}`)
	// A peer's disconnect is not the service's.
	wantKinds(t, m.step(`{"type":"disconnect","peer":1`), "")
}

func TestResignRevokesAndCampaignsAgain(t *testing.T) {
	m := newMember(t, false, false, "null")
	m.granted()
	m.answer(`{"type":"TxnResp","lease":7,"create_rev":4,"revision":4,"keys":[[4,0]]}`)
	r := m.step(`{"type":"resign"`)
	wantSends(t, r, `{"type":"Revoke","lease":7}`, `{"type":"LeaseGrant","ttl_ns":5000000000,"sent_at":4000000,"campaign":2}`)
	wantTermLeader(t, r, 4, "null")
}

func TestBrokenWritesWithTheWallClock(t *testing.T) {
	m := newMember(t, true, false, "null")
	m.granted()
	r := m.answer(`{"type":"TxnResp","lease":7,"create_rev":4,"revision":4,"keys":[[4,0]]}`)
	// Lead in the create revision's term, but the token is the wall clock in seconds.
	wantKinds(t, r, "cancel_timer:retry lead:4/1700000000 write:1700000000 set_timer:write persist")
}

// destinations lists the members each send went to, in order.
func destinations(r reply) []int {
	var out []int
	for _, e := range r.Effects {
		if e.Type == "send" {
			out = append(out, e.To)
		}
	}
	return out
}

// On a 3-member cluster (services 3, 4, 5) node 1 starts with member 4, as clientv3's
// round-robin balancer spreads clients; an Unavailable from it moves the retry to member 5
// after 25 ms, a disconnect from 5 moves the request to 3 at once, and an Unavailable from a
// member already left changes nothing.
func TestOnAClusterAFailedMemberMovesTheRequestToTheNext(t *testing.T) {
	n, err := splitbrain.NewNode(Spec, &Node{})
	if err != nil {
		t.Fatal(err)
	}
	m := &member{t: t, node: n}
	r := m.step(`{"type":"init","protocol":1,"node":1,"members":[0,1,2],"service":3,"services":[3,4,5],"seed":1,"restart":false,"durable":null`)
	if got := fmt.Sprint(destinations(r)); got != "[4]" {
		t.Fatalf("the first grant went to %s, want [4]", got)
	}
	r = m.step(`{"type":"message","from":4,"body":{"type":"Unavailable"}`)
	if len(r.Effects) != 1 || r.Effects[0].Name != "retry" || r.Effects[0].After != 25_000_000 {
		t.Fatalf("after Unavailable: %s", r.kinds())
	}
	if got := fmt.Sprint(destinations(m.timer("retry"))); got != "[5]" {
		t.Fatalf("the retry went to %s, want [5]", got)
	}
	if r := m.step(`{"type":"message","from":4,"body":{"type":"Unavailable"}`); len(r.Effects) != 0 {
		t.Fatalf("an Unavailable from a member left acted: %s", r.kinds())
	}
	if got := fmt.Sprint(destinations(m.step(`{"type":"disconnect","peer":5`))); got != "[3]" {
		t.Fatalf("after the disconnect the grant went to %s, want [3]", got)
	}
}
