package etcdraft

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"splitbrain.dev/etcdraft/raftlib"
)

// wireTypes are the message types a RawNode can hand to the application to send to a
// peer (the others, MsgHup, MsgBeat, MsgUnreachable, MsgSnapStatus, MsgCheckQuorum and
// 3.6's local storage messages, never leave the node). hello_ok declares those of them
// that the pinned library knows.
var wireTypes = []string{
	"MsgProp", "MsgApp", "MsgAppResp", "MsgVote", "MsgVoteResp", "MsgSnap",
	"MsgHeartbeat", "MsgHeartbeatResp", "MsgTransferLeader", "MsgTimeoutNow",
	"MsgReadIndex", "MsgReadIndexResp", "MsgPreVote", "MsgPreVoteResp",
}

// messageTypes returns the wire types the pinned library has, in wireTypes' order.
func messageTypes() []string {
	known := map[string]bool{}
	for _, name := range raftlib.MessageTypeName {
		known[name] = true
	}
	var out []string
	for _, t := range wireTypes {
		if known[t] {
			out = append(out, t)
		}
	}
	return out
}

// body is a message on the simulated wire: the type and term for splitbrain's trace and
// charts, and the raftpb.Message itself, protobuf-marshalled, base64 in JSON.
type body struct {
	Type string `json:"type"`
	Term uint64 `json:"term"`
	PB   []byte `json:"pb"` // encoding/json writes []byte as standard base64
}

// outgoing is one message of a Ready, marshalled, with what it sorts by.
type outgoing struct {
	msg  raftlib.Message
	wire []byte
}

// encode marshals m into its wire body.
func encode(m raftlib.Message) (outgoing, error) {
	b, err := m.Marshal()
	if err != nil {
		return outgoing{}, fmt.Errorf("marshal %s to %d: %w", m.Type, m.To, err)
	}
	return outgoing{msg: m, wire: b}, nil
}

// body returns the JSON body for splitbrain.
func (o outgoing) body() body {
	return body{Type: o.msg.Type.String(), Term: o.msg.Term, PB: o.wire}
}

// decode rebuilds the raftpb.Message from a wire body.
func decode(raw json.RawMessage) (raftlib.Message, error) {
	var b body
	var m raftlib.Message
	if err := json.Unmarshal(raw, &b); err != nil {
		return m, fmt.Errorf("message body: %w", err)
	}
	if err := m.Unmarshal(b.PB); err != nil {
		return m, fmt.Errorf("message body %s: protobuf: %w", b.Type, err)
	}
	if m.Type.String() != b.Type || m.Term != b.Term {
		return m, fmt.Errorf("message body says %s term %d, its protobuf %s term %d", b.Type, b.Term, m.Type, m.Term)
	}
	return m, nil
}

// sortMessages orders a Ready's messages completely: by recipient, type, term, index, log
// term, commit, and finally by their marshalled bytes. The library builds some of them by
// iterating Go maps (the progress of every peer: bcastAppend, bcastHeartbeat), whose order
// changes from run to run, and a stable sort by recipient alone would keep that order
// among the messages to one peer; a total order cannot. Messages to one peer of one type
// keep their index order (MsgApp 5 before MsgApp 6), the order the library made them in.
func sortMessages(ms []outgoing) {
	sort.SliceStable(ms, func(i, j int) bool {
		a, b := &ms[i].msg, &ms[j].msg
		switch {
		case a.To != b.To:
			return a.To < b.To
		case a.Type != b.Type:
			return a.Type < b.Type
		case a.Term != b.Term:
			return a.Term < b.Term
		case a.Index != b.Index:
			return a.Index < b.Index
		case a.LogTerm != b.LogTerm:
			return a.LogTerm < b.LogTerm
		case a.Commit != b.Commit:
			return a.Commit < b.Commit
		}
		return bytes.Compare(ms[i].wire, ms[j].wire) < 0
	})
}
