// Package raftlib is the seam between the shared adapter (splitbrain.dev/etcdraft) and
// github.com/coreos/etcd/raft, the raft of etcd 3.2 and 3.3: the library's types under
// the names the adapter uses, and the few calls whose shape changed between versions.
package raftlib

import (
	"fmt"
	"math/rand"
	"sync"
	_ "unsafe" // go:linkname

	"github.com/coreos/etcd/raft"
	pb "github.com/coreos/etcd/raft/raftpb"
)

// Module is the library's module path; its version is read from the build info.
const Module = "github.com/coreos/etcd"

type (
	RawNode       = raft.RawNode
	Ready         = raft.Ready
	Config        = raft.Config
	Peer          = raft.Peer
	Logger        = raft.Logger
	MemoryStorage = raft.MemoryStorage
	StateType     = raft.StateType
	Message       = pb.Message
	MessageType   = pb.MessageType
	Entry         = pb.Entry
	HardState     = pb.HardState
	Snapshot      = pb.Snapshot
)

const (
	StateFollower     = raft.StateFollower
	StateCandidate    = raft.StateCandidate
	StateLeader       = raft.StateLeader
	StatePreCandidate = raft.StatePreCandidate
	MsgHeartbeat      = pb.MsgHeartbeat
	MsgPreVote        = pb.MsgPreVote
)

var (
	MessageTypeName  = pb.MessageType_name
	NewMemoryStorage = raft.NewMemoryStorage
	IsEmptyHardState = raft.IsEmptyHardState
	IsEmptySnap      = raft.IsEmptySnap
	SetLogger        = raft.SetLogger
)

// Start makes the RawNode: with peers, a fresh member bootstraps them (3.x's
// NewRawNode(config, peers)); without, it restarts from its storage.
func Start(cfg *Config, peers []Peer) (*RawNode, error) {
	return raft.NewRawNode(cfg, peers)
}

// ApplyConfChange applies a committed configuration change entry (3.x has only
// ConfChange); other entries are ignored.
func ApplyConfChange(rn *RawNode, e Entry) {
	if e.Type != pb.EntryConfChange {
		return
	}
	var cc pb.ConfChange
	if err := cc.Unmarshal(e.Data); err != nil {
		panic(err)
	}
	rn.ApplyConfChange(cc)
}

// globalRand is the library's unexported package-level source of randomized election
// timeouts (raft.go: `var globalRand = &lockedRand{rand: rand.New(rand.NewSource(
// time.Now().UnixNano()))}`), seeded from the clock when the process starts. The
// go:linkname pulls that very variable into this package (Go 1.23's linkname lockdown
// covers the standard library only); lockedRand mirrors the library's struct layout,
// {mu sync.Mutex; rand *rand.Rand}, identical in 3.2.0-3.3.x and in 3.4/3.5.
//
//go:linkname globalRand github.com/coreos/etcd/raft.globalRand
var globalRand *lockedRand

type lockedRand struct {
	mu   sync.Mutex
	rand *rand.Rand
}

// Reseed makes the library's randomized election timeouts a function of seed: a new
// math/rand source under the library's own lock.
func Reseed(seed int64) {
	globalRand.mu.Lock()
	globalRand.rand = rand.New(rand.NewSource(seed))
	globalRand.mu.Unlock()
}

// ProposeConfChange proposes op ("add", "remove", "add_learner", "promote") on raft id as a
// ConfChange, 3.x's only form: add and promote are ConfChangeAddNode (which promotes a
// learner, 3.3), add_learner ConfChangeAddLearnerNode (3.3; 3.2 has no learners: refused).
func ProposeConfChange(rn *RawNode, op string, id uint64) error {
	var t pb.ConfChangeType
	switch op {
	case "add", "promote":
		t = pb.ConfChangeAddNode
	case "remove":
		t = pb.ConfChangeRemoveNode
	case "add_learner":
		// By number: 3.2's raftpb has no name for it.
		const addLearner = pb.ConfChangeType(3)
		if _, ok := pb.ConfChangeType_name[int32(addLearner)]; !ok {
			return fmt.Errorf("add_learner: %s has no learners", Module)
		}
		t = addLearner
	default:
		return fmt.Errorf("unknown membership change %q", op)
	}
	return rn.ProposeConfChange(pb.ConfChange{Type: t, NodeID: id})
}

// SupportsApplyLag says whether committed entries can wait for their apply while the node
// keeps stepping, ticking and sending. Not in 3.2/3.3: Advance marks everything committed
// as applied (RawNode.commitReady: appliedTo(prevHardSt.Commit)), handed out or not.
const SupportsApplyLag = false
