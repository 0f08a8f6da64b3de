// Package raftnode is Raft's leader election (Ongaro and Ousterhout, section 5.2, without
// the log) as a splitbrain node: the code behind examples/raft and, with Broken set, the
// deliberately broken examples/raftbroken.
//
// Every node starts as a follower with a randomized election timeout of 150-300 ms drawn
// from ctx.Rand. A follower whose timeout expires becomes a candidate: it increments its
// term, votes for itself, persists term and vote, reports Campaign(term) and asks every peer
// for its vote. A node grants at most one vote per term and persists the vote before the
// answer leaves (the persist effect precedes the send, and the simulator holds sends until
// the write is on disk). A candidate with votes from a majority leads: every 50 ms it
// declares Lead(term, term), writes to the fenced resource with its term as the token and
// sends heartbeats. Any message with a higher term makes a node adopt that term (persisted)
// and step down; a stale heartbeat is answered so that a deposed leader learns the new term.
package raftnode

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"splitbrain.dev/node/splitbrain"
)

// Timing, as in the paper's example: heartbeats well under the election timeout.
const (
	ElectionMin = 150 * time.Millisecond
	ElectionMax = 300 * time.Millisecond
	Heartbeat   = 50 * time.Millisecond
)

// Spec is what the node sends and arms.
var Spec = splitbrain.Spec{
	Messages: []string{"vote_request", "vote", "heartbeat", "heartbeat_reply"},
	Timers:   []string{"election", "heartbeat"},
}

type role int

const (
	follower role = iota
	candidate
	leader
)

// msg is every message the node sends: vote_request{term}, vote{term, granted},
// heartbeat{term}, heartbeat_reply{term}.
type msg struct {
	Type    string `json:"type"`
	Term    uint64 `json:"term"`
	Granted bool   `json:"granted,omitempty"`
}

// durable is what the node persists: Raft's currentTerm and votedFor.
type durable struct {
	Term     uint64 `json:"term"`
	VotedFor *int   `json:"voted_for"`
}

// Node is one Raft election member.
type Node struct {
	// Broken makes the node the deliberately broken variant (see examples/raftbroken): a
	// leader that trusts a lease counted from its own heartbeats keeps leading when it sees
	// a higher term in a vote request, claiming that term without having won it.
	Broken bool

	// Durable state (persisted before it is acted on).
	term     uint64
	votedFor int // -1: none in this term

	// Volatile state, reset by Init.
	role     role
	leader   int // -1: unknown
	votes    map[int]bool
	lastBeat int64 // mono_ns of the last heartbeats sent (used by Broken only)
}

// Init starts or restarts the node from its durable state.
func (n *Node) Init(ctx *splitbrain.Ctx, d json.RawMessage) {
	defer n.digest(ctx)
	*n = Node{Broken: n.Broken, votedFor: -1, leader: -1}
	if d != nil {
		var st durable
		if err := json.Unmarshal(d, &st); err != nil {
			panic("raftnode: unreadable durable state " + string(d) + ": " + err.Error())
		}
		n.term = st.Term
		if st.VotedFor != nil {
			n.votedFor = *st.VotedFor
		}
	}
	ctx.SetTerm(n.term)
	ctx.ClearLeader()
	n.resetElectionTimer(ctx)
}

// Message handles a message from a peer.
func (n *Node) Message(ctx *splitbrain.Ctx, from int, body splitbrain.Body) {
	defer n.digest(ctx)
	var m msg
	if err := body.Decode(&m); err != nil {
		panic("raftnode: unreadable message " + string(body.Raw) + ": " + err.Error())
	}
	if m.Term > n.term {
		// THE BUG (Broken only): a leader whose lease looks valid, because it sent
		// heartbeats less than ElectionMin ago, reasons that nobody can have been elected
		// and carries on leading in the candidate's term, claiming it at once. The lease
		// is counted from its own sends, not from acknowledgements, so after a pause (or
		// with its heartbeats lost on the way) it proves nothing; and the term it now
		// claims, its fencing token, is the very term the candidate may win.
		if n.Broken && n.role == leader && body.Type == "vote_request" &&
			time.Duration(ctx.MonoNs-n.lastBeat) < ElectionMin {
			n.term, n.votedFor = m.Term, ctx.Me
			n.persist(ctx)
			ctx.SetTerm(n.term)
			ctx.Lead(n.term, n.term)
			ctx.Send(from, msg{Type: "vote", Term: n.term})
			return
		}
		n.becomeFollower(ctx, m.Term)
	}
	switch body.Type {
	case "vote_request":
		granted := m.Term == n.term && (n.votedFor == -1 || n.votedFor == from)
		if granted {
			n.votedFor = from
			n.persist(ctx) // before the vote leaves: the send waits for the write
			n.resetElectionTimer(ctx)
		}
		ctx.Send(from, msg{Type: "vote", Term: n.term, Granted: granted})
	case "vote":
		if n.role != candidate || m.Term != n.term || !m.Granted {
			return
		}
		n.votes[from] = true
		if len(n.votes) >= ctx.Quorum() {
			n.becomeLeader(ctx)
		}
	case "heartbeat":
		if m.Term < n.term {
			ctx.Send(from, msg{Type: "heartbeat_reply", Term: n.term})
			return
		}
		if n.role != follower {
			n.becomeFollower(ctx, n.term)
		}
		if n.leader != from {
			n.leader = from
			ctx.SetLeader(from)
		}
		n.resetElectionTimer(ctx)
	case "heartbeat_reply":
		// Only a higher term matters, handled above.
	}
}

// Timer handles the election and heartbeat timers.
func (n *Node) Timer(ctx *splitbrain.Ctx, name string) {
	defer n.digest(ctx)
	switch name {
	case "election":
		if n.role != leader {
			n.campaign(ctx)
		}
	case "heartbeat":
		if n.role == leader {
			n.beat(ctx)
		}
	}
}

// Resign hands leadership over: the leader steps down and waits longer than the others
// before it campaigns again.
func (n *Node) Resign(ctx *splitbrain.Ctx) {
	defer n.digest(ctx)
	if n.role != leader {
		return
	}
	n.role = follower
	n.leader = -1
	ctx.StepDown()
	ctx.ClearLeader()
	ctx.CancelTimer("heartbeat")
	ctx.SetTimer("election", 2*ElectionMin+time.Duration(ctx.Rand.Int64N(int64(ElectionMax-ElectionMin)+1)))
}

// digest reports the node's whole state for a systematic search (ctx.SetDigest, which adds
// the state of ctx.Rand), at the end of every handler. Its timers are the simulator's to
// digest. The votes count only while a candidate (a vote is read in no other role, and a
// campaign starts them afresh). Broken reports none: its lease reads the time of the last
// heartbeats, and an age written at the step would be stale at the search's checkpoints
// (a leader paused with its heartbeat held would digest alike whatever its lease's age).
func (n *Node) digest(ctx *splitbrain.Ctx) {
	if n.Broken {
		return
	}
	var votes []int
	if n.role == candidate {
		for id := range n.votes {
			votes = append(votes, id)
		}
		sort.Ints(votes)
	}
	ctx.SetDigest(fmt.Sprintf("term=%d voted_for=%d role=%d leader=%d votes=%v", n.term, n.votedFor, n.role, n.leader, votes))
}

func (n *Node) campaign(ctx *splitbrain.Ctx) {
	if n.role == candidate { // the last round ended without a winner
		ctx.RoundFailed(n.term)
	}
	n.term++
	n.votedFor = ctx.Me
	n.role = candidate
	n.leader = -1
	n.votes = map[int]bool{ctx.Me: true}
	n.persist(ctx)
	ctx.Campaign(n.term)
	ctx.SetTerm(n.term)
	ctx.ClearLeader()
	for _, p := range ctx.Peers() {
		ctx.Send(p, msg{Type: "vote_request", Term: n.term})
	}
	n.resetElectionTimer(ctx)
	if len(n.votes) >= ctx.Quorum() {
		n.becomeLeader(ctx)
	}
}

func (n *Node) becomeLeader(ctx *splitbrain.Ctx) {
	n.role = leader
	n.leader = ctx.Me
	ctx.SetLeader(ctx.Me)
	ctx.CancelTimer("election")
	n.beat(ctx)
}

// beat is a leader's heartbeat: claim, write, heartbeats, re-arm.
func (n *Node) beat(ctx *splitbrain.Ctx) {
	ctx.Lead(n.term, n.term)
	ctx.Write(n.term)
	for _, p := range ctx.Peers() {
		ctx.Send(p, msg{Type: "heartbeat", Term: n.term})
	}
	n.lastBeat = ctx.MonoNs
	ctx.SetTimer("heartbeat", Heartbeat)
}

// becomeFollower adopts term (a new term clears the vote and is persisted) and steps down.
func (n *Node) becomeFollower(ctx *splitbrain.Ctx, term uint64) {
	if term > n.term {
		n.term, n.votedFor = term, -1
		n.persist(ctx)
		ctx.SetTerm(n.term)
	}
	wasLeader := n.role == leader
	if n.role != follower || n.leader != -1 {
		n.leader = -1
		ctx.ClearLeader()
	}
	n.role = follower
	if wasLeader {
		ctx.StepDown()
		ctx.CancelTimer("heartbeat")
		n.resetElectionTimer(ctx)
	}
}

func (n *Node) persist(ctx *splitbrain.Ctx) {
	st := durable{Term: n.term}
	if n.votedFor >= 0 {
		v := n.votedFor
		st.VotedFor = &v
	}
	ctx.Persist(st)
}

func (n *Node) resetElectionTimer(ctx *splitbrain.Ctx) {
	d := ElectionMin + time.Duration(ctx.Rand.Int64N(int64(ElectionMax-ElectionMin)+1))
	ctx.SetTimer("election", d)
}

// Main runs the node as a process (see examples/raft and examples/raftbroken).
func Main(broken bool) {
	splitbrain.Run(Spec, &Node{Broken: broken})
}
