package raftnode

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
	Digest *struct {
		State string `json:"state"`
		Rand  string `json:"rand"`
	} `json:"digest"`
}

// cluster drives n nodes by hand through Node.Step: no pipes, no simulator.
type cluster struct {
	t     *testing.T
	nodes []*splitbrain.Node
	now   int64
}

func newCluster(t *testing.T, n int, broken bool) *cluster {
	c := &cluster{t: t}
	members := make([]string, n)
	for i := range members {
		members[i] = fmt.Sprint(i)
	}
	for i := 0; i < n; i++ {
		node, err := splitbrain.NewNode(Spec, &Node{Broken: broken})
		if err != nil {
			t.Fatal(err)
		}
		c.nodes = append(c.nodes, node)
		c.step(i, fmt.Sprintf(`{"type":"init","protocol":1,"node":%d,"members":[%s],"service":null,"seed":%d,"restart":false,"durable":null`,
			i, strings.Join(members, ","), i+1))
	}
	return c
}

// step sends node i an event (its fields before the clocks) and returns the decoded reply.
func (c *cluster) step(i int, fields string) reply {
	c.t.Helper()
	c.now += 1000
	line := fmt.Sprintf(`%s,"mono_ns":%d,"wall_ns":%d}`, fields, c.now, c.now)
	out, err := c.nodes[i].Step([]byte(line))
	if err != nil {
		c.t.Fatalf("node %d, %s: %v", i, line, err)
	}
	var r reply
	if err := json.Unmarshal(out, &r); err != nil {
		c.t.Fatalf("node %d reply %s: %v", i, out, err)
	}
	return r
}

// deliver hands every send of r (from node from) to its destination, recursively, and
// returns every reply, in delivery order.
func (c *cluster) deliver(from int, r reply) []reply {
	var all []reply
	for _, e := range r.Effects {
		if e.Type != "send" {
			continue
		}
		next := c.step(e.To, fmt.Sprintf(`{"type":"message","from":%d,"body":%s`, from, e.Body))
		all = append(all, next)
		all = append(all, c.deliver(e.To, next)...)
	}
	return all
}

func types(r reply) string {
	var s []string
	for _, e := range r.Effects {
		s = append(s, e.Type)
	}
	return strings.Join(s, ",")
}

func TestElectionAndHeartbeat(t *testing.T) {
	c := newCluster(t, 3, false)
	r := c.step(0, `{"type":"timer","name":"election"`)
	if got := types(r); got != "persist,campaign,send,send,set_timer" || *r.Term != 1 || string(r.Leader) != "null" {
		t.Fatalf("campaign: %s term %v leader %s", got, r.Term, r.Leader)
	}
	if string(r.Effects[0].State) != `{"term":1,"voted_for":0}` {
		t.Fatalf("persisted %s", r.Effects[0].State)
	}
	if d := r.Effects[4].After; d < int64(ElectionMin) || d > int64(ElectionMax) {
		t.Fatalf("election timeout %d", d)
	}
	// Node 1 grants: it persists its vote before the vote leaves.
	vote := c.step(1, `{"type":"message","from":0,"body":{"type":"vote_request","term":1}`)
	if got := types(vote); got != "persist,persist,set_timer,send" ||
		string(vote.Effects[1].State) != `{"term":1,"voted_for":0}` || string(vote.Effects[3].Body) != `{"type":"vote","term":1,"granted":true}` {
		t.Fatalf("vote: %s %+v", got, vote)
	}
	// A second candidate in the same term is refused.
	if no := c.step(1, `{"type":"message","from":2,"body":{"type":"vote_request","term":1}`); string(no.Effects[0].Body) != `{"type":"vote","term":1}` {
		t.Fatalf("second vote: %+v", no)
	}
	won := c.step(0, `{"type":"message","from":1,"body":{"type":"vote","term":1,"granted":true}`)
	if got := types(won); got != "cancel_timer,lead,write,send,send,set_timer" || string(won.Leader) != "0" ||
		won.Effects[1].Term != 1 || won.Effects[1].Token != 1 || won.Effects[2].Token != 1 {
		t.Fatalf("won: %s %+v", got, won)
	}
	// Followers recognise the leader; node 2 adopts term 1.
	for _, rr := range c.deliver(0, won) {
		if got := types(rr); got != "set_timer" && got != "persist,set_timer" {
			t.Fatalf("heartbeat reply %s", got)
		}
	}
	// A higher term deposes the leader, which persists it and steps down.
	r = c.step(0, `{"type":"message","from":2,"body":{"type":"vote_request","term":5}`)
	if got := types(r); got != "persist,step_down,cancel_timer,set_timer,persist,set_timer,send" || *r.Term != 5 || string(r.Leader) != "null" {
		t.Fatalf("deposed: %s %+v", got, r)
	}
}

func TestRestartRestoresTermAndVote(t *testing.T) {
	node, err := splitbrain.NewNode(Spec, &Node{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := node.Step([]byte(`{"type":"init","protocol":1,"node":1,"members":[0,1,2],"service":null,"seed":1,"restart":true,"durable":{"term":4,"voted_for":2},"mono_ns":0,"wall_ns":0}`))
	if err != nil || !strings.Contains(string(out), `"term":4`) {
		t.Fatalf("%s %v", out, err)
	}
	// Already voted for 2 in term 4: refuses 0, grants 2 again.
	out, _ = node.Step([]byte(`{"type":"message","from":0,"body":{"type":"vote_request","term":4},"mono_ns":1,"wall_ns":1}`))
	if !strings.Contains(string(out), `{"type":"vote","term":4}`) {
		t.Fatalf("refusal: %s", out)
	}
	out, _ = node.Step([]byte(`{"type":"message","from":2,"body":{"type":"vote_request","term":4},"mono_ns":2,"wall_ns":2}`))
	if !strings.Contains(string(out), `"granted":true`) {
		t.Fatalf("grant: %s", out)
	}
}

// The broken leader claims the candidate's term instead of stepping down; the correct one
// steps down.
func TestBrokenLeaderClaimsTheCandidatesTerm(t *testing.T) {
	for _, broken := range []bool{false, true} {
		c := newCluster(t, 3, broken)
		c.step(0, `{"type":"timer","name":"election"`)
		c.deliver(0, c.step(0, `{"type":"message","from":1,"body":{"type":"vote","term":1,"granted":true}`))
		// Node 2 campaigns in term 2 and node 1 grants it: node 2 leads term 2.
		c.step(2, `{"type":"timer","name":"election"`)
		if v := c.step(1, `{"type":"message","from":2,"body":{"type":"vote_request","term":2}`); !strings.Contains(string(v.Effects[len(v.Effects)-1].Body), "granted") {
			t.Fatalf("node 1 did not grant: %+v", v)
		}
		// The old leader hears node 2's request.
		old := c.step(0, `{"type":"message","from":2,"body":{"type":"vote_request","term":2}`)
		claims := false
		for _, e := range old.Effects {
			if e.Type == "lead" && e.Term == 2 {
				claims = true
			}
		}
		if claims != broken {
			t.Fatalf("broken=%v: the old leader's reply %s claims term 2: %v", broken, types(old), claims)
		}
	}
}

// Every reply of the correct node carries the digest of its state after the step, early
// returns included (a step without one would leave the simulator the stale one); the broken
// node, whose lease reads the time, reports none.
func TestEveryReplyDigestsTheStateAndBrokenSendsNone(t *testing.T) {
	for _, broken := range []bool{false, true} {
		c := newCluster(t, 3, broken)
		var replies []reply
		campaign := c.step(0, `{"type":"timer","name":"election"`)
		replies = append(replies, campaign)
		replies = append(replies, c.deliver(0, campaign)...)
		// A stale heartbeat: node 1 answers and returns early.
		replies = append(replies, c.step(1, `{"type":"message","from":2,"body":{"type":"heartbeat","term":0}`))
		for _, r := range replies {
			if (r.Digest != nil) == broken {
				t.Fatalf("broken=%v: a reply (%s) has the digest %+v", broken, types(r), r.Digest)
			}
		}
		if broken {
			continue
		}
		if got := campaign.Digest.State; got != "term=1 voted_for=0 role=1 leader=-1 votes=[0]" {
			t.Fatalf("the candidate's digest: %s", got)
		}
		// The candidate has won by now (node 1's vote came back): votes no longer count.
		won := c.step(0, `{"type":"timer","name":"heartbeat"`)
		if got := won.Digest.State; got != "term=1 voted_for=0 role=2 leader=0 votes=[]" {
			t.Fatalf("the leader's digest: %s", got)
		}
	}
}
