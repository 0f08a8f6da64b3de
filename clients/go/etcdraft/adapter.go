// Package etcdraft runs etcd's raft library, unchanged, as a splitbrain external node
// (docs/protocol.md, protocol version 2, through the Go client splitbrain.dev/node). The
// library comes in through splitbrain.dev/etcdraft/raftlib, a seam of type aliases and a
// few functions that each pin (pins/<pin>) provides for its own version: this source is
// written once and compiled once per pin.
//
// Member i is raft id i+1. Every event ends with the RawNode's Ready loop: persist the
// HardState and entries, then send the messages (sorted), apply the committed
// configuration changes, Advance. RawNode only: raft.Node runs goroutines, which would
// make a step's answer depend on the scheduler.
package etcdraft

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"

	"splitbrain.dev/etcdraft/raftlib"
	"splitbrain.dev/node/splitbrain"
)

// LibraryVersion is the pinned library's module and version, from the build info.
func LibraryVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == raftlib.Module {
				return d.Path + "@" + d.Version
			}
		}
	}
	return raftlib.Module + "@unknown"
}

// Run serves the step protocol on stdin/stdout until stdin ends.
func Run(opts Options) {
	splitbrain.Run(Spec(), &Node{opts: opts})
}

// Spec is what hello_ok declares: the message types that go on the wire, one timer.
func Spec() splitbrain.Spec {
	return splitbrain.Spec{Messages: messageTypes(), Timers: []string{"tick"}}
}

// Node is one member: a RawNode and its MemoryStorage, and what the simulator was last
// told of its role.
type Node struct {
	opts Options
	rn   *raftlib.RawNode
	ms   *raftlib.MemoryStorage
	id   uint64

	state raftlib.StateType // the role at the end of the last event
	term  uint64            // the term at the end of the last event
	// campaigning is the term this node runs for as a candidate (campaign effect sent),
	// 0 if it does not.
	campaigning uint64

	// With --apply-lag-ticks: the ticks seen since init, the tick at which the committed
	// entries handed out are applied (0: none wait), and the durable state last persisted
	// (a Ready not yet Advanced hands its HardState and entries out again).
	ticks     int
	applyAt   int
	persisted string
}

// NewNode returns a node with these options, for splitbrain.NewNode in tests.
func NewNode(opts Options) *Node { return &Node{opts: opts} }

// Init starts the RawNode: a fresh member bootstraps every member as a voter, a restarted
// one reloads its storage from durable.
func (n *Node) Init(ctx *splitbrain.Ctx, durableState json.RawMessage) {
	*n = Node{opts: n.opts} // init resets everything
	// Determinism: the library draws its randomized election timeouts from a package-level
	// source seeded from the OS (the clock in 3.x, crypto/rand in 3.6): the seam reseeds
	// it from this node's seed (see raftlib.Reseed in each pin).
	raftlib.Reseed(ctx.Rand.Int64())
	log := &logger{prefix: fmt.Sprintf("n%d ", ctx.Me), verbose: n.opts.Verbose}
	raftlib.SetLogger(log)

	n.id = uint64(ctx.Me) + 1
	n.ms = raftlib.NewMemoryStorage()
	var peers []raftlib.Peer
	if len(durableState) == 0 || string(durableState) == "null" {
		// A fresh start (or a crash before anything reached the disk): etcd's
		// --initial-cluster, every member a voter.
		for _, m := range ctx.Members {
			peers = append(peers, raftlib.Peer{ID: uint64(m) + 1})
		}
	} else if err := restore(durableState, n.ms); err != nil {
		panic(err)
	}
	cfg := &raftlib.Config{
		ID:              n.id,
		ElectionTick:    n.opts.ElectionTick,
		HeartbeatTick:   n.opts.HeartbeatTick,
		Storage:         n.ms,
		MaxSizePerMsg:   1 << 20, // etcd's maxSizePerMsg
		MaxInflightMsgs: 512,     // etcd's maxInflightMsgs (4096/8)
		PreVote:         n.opts.PreVote,
		CheckQuorum:     n.opts.CheckQuorum,
		Logger:          log,
	}
	rn, err := raftlib.Start(cfg, peers)
	if err != nil {
		panic(fmt.Errorf("raft %s: NewRawNode: %w", LibraryVersion(), err))
	}
	n.rn = rn
	n.state = raftlib.StateFollower
	ctx.SetTimer("tick", n.opts.Tick)
	// What the node had applied before a crash (its log, replayed) it finds applied at
	// once, as etcd restores its configuration from its snapshot and backend: no lag.
	n.applyAt = -1
	n.ready(ctx, false)
	n.applyAt = 0
}

// Message steps a peer's message into the RawNode.
func (n *Node) Message(ctx *splitbrain.Ctx, from int, body splitbrain.Body) {
	m, err := decode(body.Raw)
	if err != nil {
		panic(err)
	}
	if m.From != uint64(from)+1 || m.To != n.id {
		panic(fmt.Errorf("%s from raft id %d to %d arrived from member %d at member %d", m.Type, m.From, m.To, from, ctx.Me))
	}
	// Errors are the library's refusals (a response from a peer it does not know yet,
	// say); etcd's transport drops them too.
	_ = n.rn.Step(m)
	n.ready(ctx, false)
}

// Timer is the tick: RawNode.Tick every --tick.
func (n *Node) Timer(ctx *splitbrain.Ctx, name string) {
	n.ticks++
	n.rn.Tick()
	ctx.SetTimer("tick", n.opts.Tick)
	n.ready(ctx, true)
}

// Resign hands leadership over (etcd's MoveLeader): TransferLeader to the follower with
// the highest Match, the lowest id among equals.
func (n *Node) Resign(ctx *splitbrain.Ctx) {
	if to := transferTarget(n.rn, n.id); to != 0 {
		n.rn.TransferLeader(to)
	}
	n.ready(ctx, false)
}

// ConfChange proposes a membership change (etcd's MemberAdd, MemberRemove,
// MemberPromote, which end in ProposeConfChange): a ConfChange on 3.2/3.3, a ConfChangeV2
// of one change since 3.4 (raftlib.ProposeConfChange). A follower forwards it to the
// leader it knows; a proposal the library drops (no leader, a transfer under way) is lost,
// as etcd's would time out.
func (n *Node) ConfChange(ctx *splitbrain.Ctx, op string, member int) {
	if err := raftlib.ProposeConfChange(n.rn, op, uint64(member)+1); err != nil {
		fmt.Fprintf(os.Stderr, "n%d: conf_change %s %d not proposed: %v\n", ctx.Me, op, member, err)
	}
	n.ready(ctx, false)
}

// apply applies a committed entry: a configuration change goes to ApplyConfChange. One the
// library refuses (removing the last voter, say: it panics before changing anything) is
// applied as no change, as etcd's server applies a change that fails its own validation
// (ValidateConfigurationChange) with NodeID None.
func (n *Node) apply(e raftlib.Entry) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "n%d: conf change at index %d not applied: %v\n", n.id-1, e.Index, r)
		}
	}()
	raftlib.ApplyConfChange(n.rn, e)
}

// transferTarget is the follower with the highest Match, the lowest id among equals; 0 if
// this node does not lead or leads alone.
func transferTarget(rn *raftlib.RawNode, self uint64) uint64 {
	st := rn.Status()
	if st.RaftState != raftlib.StateLeader {
		return 0
	}
	var best, bestMatch uint64
	for id, pr := range st.Progress {
		if id == self {
			continue
		}
		if best == 0 || pr.Match > bestMatch || (pr.Match == bestMatch && id < best) {
			best, bestMatch = id, pr.Match
		}
	}
	return best
}

// ready runs the Ready loop, then tells the simulator the role changes, the term and the
// leader. tick says the event was a tick (the leader writes at each heartbeat it sends).
func (n *Node) ready(ctx *splitbrain.Ctx, tick bool) {
	heartbeat := false
	var preVoteTerm uint64
	for n.rn.HasReady() {
		rd := n.rn.Ready()
		// Persist before this Ready's sends: the simulator holds what follows a persist
		// until the write is on disk, as etcd's raft loop saves to the WAL first.
		changed := false
		if !raftlib.IsEmptySnap(rd.Snapshot) {
			if err := n.ms.ApplySnapshot(rd.Snapshot); err != nil {
				panic(err)
			}
			changed = true
		}
		if !raftlib.IsEmptyHardState(rd.HardState) {
			if err := n.ms.SetHardState(rd.HardState); err != nil {
				panic(err)
			}
			changed = true
		}
		if len(rd.Entries) > 0 {
			if err := n.ms.Append(rd.Entries); err != nil {
				panic(err)
			}
			changed = true
		}
		if changed {
			d, err := save(n.ms)
			if err != nil {
				panic(err)
			}
			// A Ready held back (--apply-lag-ticks) hands the same state out again: one
			// write of it is enough.
			if n.opts.ApplyLagTicks == 0 {
				ctx.Persist(d)
			} else if key, err := json.Marshal(d); err != nil {
				panic(err)
			} else if string(key) != n.persisted {
				ctx.Persist(d)
				n.persisted = string(key)
			}
		}
		outs := make([]outgoing, 0, len(rd.Messages))
		for _, m := range rd.Messages {
			o, err := encode(m)
			if err != nil {
				panic(err)
			}
			outs = append(outs, o)
		}
		sortMessages(outs)
		for _, o := range outs {
			switch o.msg.Type {
			case raftlib.MsgHeartbeat:
				heartbeat = true
			case raftlib.MsgPreVote:
				preVoteTerm = o.msg.Term
			}
			ctx.Send(int(o.msg.To)-1, o.body())
		}
		if n.holdBack(rd) {
			break // until the tick at which they are applied; the next Ready repeats them
		}
		for _, e := range rd.CommittedEntries {
			n.apply(e)
		}
		n.rn.Advance(rd)
	}
	n.report(ctx, tick && heartbeat, preVoteTerm)
}

// holdBack says whether rd's committed entries wait (--apply-lag-ticks): the first Ready
// that hands some out starts the wait; at its end every entry committed by then is applied
// at once, as etcd's apply goroutine takes what accumulated while it was busy. Until then
// raft's applied index stays below its commit index: the window in which etcd #12133's
// campaigns count votes with a configuration that a committed change has superseded.
func (n *Node) holdBack(rd raftlib.Ready) bool {
	if n.opts.ApplyLagTicks == 0 || n.applyAt < 0 || len(rd.CommittedEntries) == 0 {
		return false
	}
	if n.applyAt == 0 {
		n.applyAt = n.ticks + n.opts.ApplyLagTicks
	}
	if n.ticks < n.applyAt {
		return true
	}
	n.applyAt = 0
	return false
}

// report turns the role the RawNode ended the event in into effects, and sets the reply's
// term and leader.
func (n *Node) report(ctx *splitbrain.Ctx, heartbeat bool, preVoteTerm uint64) {
	st := n.rn.Status()
	state, term, lead := st.RaftState, st.Term, st.Lead
	newTerm := term != n.term
	// A candidacy ends without a winner when the node campaigns again on its own timeout:
	// as a candidate in a higher term, or as a pre-candidate (with PreVote). One that ends
	// because the node hears of a leader or a higher term is not counted.
	if n.campaigning != 0 && !(state == raftlib.StateCandidate && term == n.campaigning) {
		if state == raftlib.StateCandidate || state == raftlib.StatePreCandidate {
			ctx.RoundFailed(n.campaigning)
		}
		n.campaigning = 0
	}
	if n.state == raftlib.StateLeader && (state != raftlib.StateLeader || newTerm) {
		ctx.StepDown()
	}
	// A pre-vote round: the pre-candidate asks its peers for term+1, raising no term.
	// A new round shows as MsgPreVote sent in this event (a pre-candidate whose round
	// timed out starts another without changing its role).
	if state == raftlib.StatePreCandidate && (preVoteTerm != 0 || n.state != raftlib.StatePreCandidate) {
		if preVoteTerm == 0 {
			preVoteTerm = term + 1
		}
		ctx.PreCampaign(preVoteTerm)
	}
	if state == raftlib.StateCandidate && (n.state != raftlib.StateCandidate || newTerm) {
		ctx.Campaign(term)
		n.campaigning = term
	}
	if state == raftlib.StateLeader {
		if n.state != raftlib.StateLeader || newTerm {
			ctx.Lead(term, term)
			ctx.Write(term)
		} else if heartbeat {
			ctx.Write(term) // a fenced write at every heartbeat
		}
	}
	n.state, n.term = state, term
	ctx.SetTerm(term)
	if lead == 0 {
		ctx.ClearLeader()
	} else {
		ctx.SetLeader(int(lead) - 1)
	}
}

// Main is a pin's main: parse the flags (an error: usage on stderr, exit 2), then Run.
func Main() {
	opts, err := ParseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcdraft-node (%s): %v\n%s", LibraryVersion(), err, Usage)
		os.Exit(2)
	}
	Run(opts)
}
