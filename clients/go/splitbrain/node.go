// Package splitbrain speaks the splitbrain step protocol (version 2, docs/protocol.md) for
// an election node written in Go: the simulator runs the node as a process and drives it over
// stdin/stdout, one JSON object per line; this package reads the events, calls the node's
// handlers and writes one reply per event with the effects the handlers produced.
//
// A node is a [Handler] (plus, optionally, a [Resigner], a [ConfChanger] and a
// [Disconnecter]) and a [Spec]
// naming the message types it sends and the timers it arms:
//
//	func main() {
//		splitbrain.Run(splitbrain.Spec{Messages: []string{"ping"}, Timers: []string{"tick"}}, &node{})
//	}
//
// Everything a handler may know arrives in its [Ctx] (its id, the members, the clocks, a
// random generator seeded by the simulator) and everything it does goes through the Ctx's
// effect methods. A node must not read the OS clock, OS randomness, files or the network,
// and must keep no state outside what Init resets. [Node.Step] runs one event without any
// pipe, for unit tests.
package splitbrain

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
)

// Protocol is the protocol version this package speaks.
const Protocol = 2

// Spec declares what a node sends and arms, answered to the simulator's hello. The simulator
// refuses a message type or timer name that is not declared; so does this package, with an
// error that names the call.
type Spec struct {
	// Messages are the "type" values of the message bodies the node sends.
	Messages []string
	// Timers are the names of the timers the node arms.
	Timers []string
}

// Handler is an election node: the simulator's events, dispatched.
type Handler interface {
	// Init starts (or, with ctx.Restart, restarts after a crash) the node. It must reset
	// every piece of state the node keeps: a process is reused across runs and restarts.
	// durable is the last state the node persisted that reached its disk, or nil if none.
	Init(ctx *Ctx, durable json.RawMessage)
	// Message delivers a message that from sent.
	Message(ctx *Ctx, from int, body Body)
	// Timer fires the armed timer name.
	Timer(ctx *Ctx, name string)
}

// Resigner is implemented by a node that hands over leadership when the scenario asks it to
// (a Resign fault). A node without it answers resign with no effects.
type Resigner interface {
	// Resign asks the leader to hand over.
	Resign(ctx *Ctx)
}

// ConfChanger is implemented by a node that proposes membership changes when the scenario
// asks it to (a ConfChange fault, aimed at the leader as a rule). A node without it answers
// conf_change with no effects.
type ConfChanger interface {
	// ConfChange asks the node to propose a membership change: op is "add", "remove",
	// "add_learner" or "promote", member a member's id.
	ConfChange(ctx *Ctx, op string, member int)
}

// Disconnecter is implemented by a node that wants to hear, on the Stream transport, that
// its connection to peer broke (what was in flight on it is lost). A node without it answers
// disconnect with no effects.
type Disconnecter interface {
	// Disconnect says that the connection to peer broke.
	Disconnect(ctx *Ctx, peer int)
}

// Body is a received message body: its "type" and the whole object, unchanged.
type Body struct {
	// Type is the body's "type" field ("" if it has none).
	Type string
	// Raw is the body as the sender sent it: a JSON object.
	Raw json.RawMessage
}

// Decode unmarshals the body into v (typically a pointer to the node's message struct).
func (b Body) Decode(v any) error {
	return json.Unmarshal(b.Raw, v)
}

// Node runs a Handler one event at a time: the protocol without the pipe. Run and Serve use
// one; tests use [Node.Step] directly. A Node is not safe for concurrent use.
type Node struct {
	spec    Spec
	h       Handler
	ctx     Ctx
	ev      event
	hello   []byte // in protocol version Protocol
	hello1  []byte // in version 1, for an older simulator
	reply   []byte
	started bool
}

// NewNode checks spec and returns a Node that runs h.
func NewNode(spec Spec, h Handler) (*Node, error) {
	if h == nil {
		return nil, errors.New("splitbrain: the handler is nil")
	}
	if err := checkNames("Spec.Messages", spec.Messages); err != nil {
		return nil, err
	}
	if err := checkNames("Spec.Timers", spec.Timers); err != nil {
		return nil, err
	}
	spec = Spec{
		Messages: append([]string(nil), spec.Messages...),
		Timers:   append([]string(nil), spec.Timers...),
	}
	n := &Node{spec: spec, h: h}
	n.ctx.spec = &n.spec
	n.ctx.Service = -1
	n.hello = helloOK(Protocol, spec)
	n.hello1 = helloOK(1, spec)
	return n, nil
}

// helloOK is the answer to hello in protocol version v.
func helloOK(v int, spec Spec) []byte {
	b := []byte(`{"type":"hello_ok","protocol":`)
	b = strconv.AppendInt(b, int64(v), 10)
	b = append(b, `,"messages":`...)
	b = appendStrings(b, spec.Messages)
	b = append(b, `,"timers":`...)
	b = appendStrings(b, spec.Timers)
	return append(b, '}')
}

func checkNames(what string, names []string) error {
	seen := make(map[string]bool, len(names))
	for _, name := range names {
		if name == "" {
			return fmt.Errorf("splitbrain: %s holds an empty name", what)
		}
		if seen[name] {
			return fmt.Errorf("splitbrain: %s names %q twice", what, name)
		}
		seen[name] = true
	}
	return nil
}

// Step handles one event line (one JSON object, with or without its trailing newline) and
// returns the reply line, without its newline. The returned slice is only valid until the
// next call to Step: copy it to keep it. An error means that the event could not be read or
// that a handler misused an effect (an undeclared message type or timer, a body that is not
// a JSON object, ...); the error names the call. A panic in a handler is not recovered.
func (n *Node) Step(line []byte) ([]byte, error) {
	if err := parseEvent(line, &n.ev, n.spec.Timers); err != nil {
		return nil, fmt.Errorf("splitbrain: cannot read the event %q: %w", truncate(line), err)
	}
	ev := &n.ev
	if ev.Type == "hello" {
		if ev.Protocol < Protocol {
			return n.hello1, nil // an older simulator: the newest version both speak
		}
		return n.hello, nil
	}
	ctx := &n.ctx
	ctx.begin(ev.MonoNs, ev.WallNs)
	switch ev.Type {
	case "init":
		if ev.Members == nil {
			return nil, fmt.Errorf("splitbrain: init without members: %q", truncate(line))
		}
		ctx.reset(ev)
		n.started = true
		n.h.Init(ctx, ev.Durable)
	case "message":
		n.h.Message(ctx, ev.From, Body{Type: objectType(ev.Body), Raw: ev.Body})
	case "timer":
		n.h.Timer(ctx, ev.Name)
	case "resign":
		if r, ok := n.h.(Resigner); ok {
			r.Resign(ctx)
		}
	case "conf_change":
		if c, ok := n.h.(ConfChanger); ok {
			c.ConfChange(ctx, ev.Op, ev.Node)
		}
	case "disconnect":
		if d, ok := n.h.(Disconnecter); ok {
			d.Disconnect(ctx, ev.Peer)
		}
	default:
		// A later protocol version may add events; this node does nothing on them.
	}
	if ctx.err != nil {
		return nil, fmt.Errorf("%w (handling %s)", ctx.err, truncate(line))
	}
	n.reply = ctx.finish(n.reply[:0], ev.Step)
	return n.reply, nil
}

// Ctx returns the node's context as the last event left it (its id, members, clocks): for
// tests that look at the node from outside a handler.
func (n *Node) Ctx() *Ctx { return &n.ctx }

// truncate shortens an event line for an error message.
func truncate(line []byte) string {
	const max = 300
	if len(line) > 0 && line[len(line)-1] == '\n' {
		line = line[:len(line)-1]
	}
	if len(line) > max {
		return string(line[:max]) + "..."
	}
	return string(line)
}

// newRand is the generator every init seeds afresh, and its source.
func newRand(seed uint64) (*rand.Rand, *rand.PCG) {
	pcg := rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)
	return rand.New(pcg), pcg
}
