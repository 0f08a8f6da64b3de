// Package raftlib is the seam between the shared adapter (splitbrain.dev/etcdraft) and
// go.etcd.io/etcd/raft/v3, the raft of etcd 3.5 (module go.etcd.io/etcd/raft/v3): the library's types under the names the adapter uses, and the
// few calls whose shape changed between versions.
package raftlib

import (
	"fmt"
	"math/rand"
	"sync"
	_ "unsafe" // go:linkname

	raft "go.etcd.io/etcd/raft/v3"
	pb "go.etcd.io/etcd/raft/v3/raftpb"
)

// Module is the library's module path; its version is read from the build info.
const Module = "go.etcd.io/etcd/raft/v3"

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

// Start makes the RawNode: with peers, a fresh member bootstraps them (NewRawNode(config)
// then Bootstrap(peers), since 3.4); without, it restarts from its storage.
func Start(cfg *Config, peers []Peer) (*RawNode, error) {
	rn, err := raft.NewRawNode(cfg)
	if err != nil || len(peers) == 0 {
		return rn, err
	}
	return rn, rn.Bootstrap(peers)
}

// ApplyConfChange applies a committed configuration change entry, either form (ConfChangeV2
// since 3.4); other entries are ignored.
func ApplyConfChange(rn *RawNode, e Entry) {
	var cc pb.ConfChangeI
	switch e.Type {
	case pb.EntryConfChange:
		var c pb.ConfChange
		if err := c.Unmarshal(e.Data); err != nil {
			panic(err)
		}
		cc = c
	case pb.EntryConfChangeV2:
		var c pb.ConfChangeV2
		if err := c.Unmarshal(e.Data); err != nil {
			panic(err)
		}
		cc = c
	default:
		return
	}
	rn.ApplyConfChange(cc)
}

// globalRand is the library's unexported package-level source of randomized election
// timeouts (raft.go: `var globalRand = &lockedRand{rand: rand.New(rand.NewSource(
// time.Now().UnixNano()))}`), seeded from the clock when the process starts. The
// go:linkname pulls that very variable into this package (Go 1.23's linkname lockdown
// covers the standard library only); lockedRand mirrors the library's struct layout,
// {mu sync.Mutex; rand *rand.Rand}.
//
//go:linkname globalRand go.etcd.io/etcd/raft/v3.globalRand
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
// ConfChangeV2 of one change with the automatic transition: a simple change, no joint
// configuration (etcd's server proposes the same through ConfChange, which the library
// turns into this). add and promote are ConfChangeAddNode, which promotes a learner.
func ProposeConfChange(rn *RawNode, op string, id uint64) error {
	var t pb.ConfChangeType
	switch op {
	case "add", "promote":
		t = pb.ConfChangeAddNode
	case "remove":
		t = pb.ConfChangeRemoveNode
	case "add_learner":
		t = pb.ConfChangeAddLearnerNode
	default:
		return fmt.Errorf("unknown membership change %q", op)
	}
	return rn.ProposeConfChange(pb.ConfChangeV2{Changes: []pb.ConfChangeSingle{{Type: t, NodeID: id}}})
}

// SupportsApplyLag says whether committed entries can wait for their apply while the node
// keeps stepping, ticking and sending. Since 3.4 the RawNode hands a Ready's committed entries out again until Advance, so the adapter can hold them (--apply-lag-ticks) while it keeps sending each Ready's messages.
const SupportsApplyLag = true
