package splitbrain

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strconv"
	"time"
)

// Ctx is what a handler knows of the world and how it acts on it. The fields describe the
// node (set by init) and the current event's clock readings; the methods are the effects,
// written into the reply in the order they are called. A Ctx is only valid inside a handler.
type Ctx struct {
	// Me is this node's id.
	Me int
	// Members is every member's id, Me included, ascending. Do not modify it.
	Members []int
	// Service is the modeled coordination service's id, or -1 if the algorithm has none: its
	// first process, when it runs as several (Services).
	Service int
	// Services is every service process a client may send requests to, ascending: the one
	// service process, each member of a clustered etcd or ZooKeeper, the API servers of a
	// Kubernetes Lease on etcd (docs/protocol-services.md, "Clusters"). Empty without a
	// service. Do not modify it.
	Services []int
	// Seed is this node's random seed for this run.
	Seed uint64
	// Restart is false at the start of a run and true when the node comes back after a
	// crash.
	Restart bool
	// MonoNs is the node's monotonic clock at this event, in nanoseconds: timers run on it.
	MonoNs int64
	// WallNs is the node's wall clock (time of day) at this event, in nanoseconds: clock
	// steps and drift move it.
	WallNs int64
	// Rand is the node's only source of randomness, seeded from Seed at every init. Its
	// state is part of the node's state: a reported digest includes it (SetDigest).
	Rand *rand.Rand

	spec  *Spec
	peers []int
	buf   []byte // the effects so far, comma-separated
	n     int    // how many effects buf holds
	// term and leader for the reply: set in this step or not.
	term      uint64
	termSet   bool
	leader    int
	leaderSet int8 // 0: absent, 1: leader, -1: null
	// digest for the reply: set in this step or not.
	digest    string
	digestSet bool
	// The generator behind Rand as init made it, whose state goes into the digest.
	rand *rand.Rand
	pcg  *rand.PCG
	err  error
}

// IsService reports whether id is one of the service's processes a client may use.
func (c *Ctx) IsService(id int) bool {
	for _, s := range c.Services {
		if s == id {
			return true
		}
	}
	return false
}

// Peers returns the members other than Me, ascending. Do not modify the slice.
func (c *Ctx) Peers() []int { return c.peers }

// Quorum returns the size of a majority of the members.
func (c *Ctx) Quorum() int { return len(c.Members)/2 + 1 }

// begin prepares the context for an event.
func (c *Ctx) begin(mono, wall int64) {
	c.MonoNs, c.WallNs = mono, wall
	c.buf = c.buf[:0]
	c.n = 0
	c.termSet = false
	c.leaderSet = 0
	c.digest, c.digestSet = "", false
	c.err = nil
}

// reset applies an init event.
func (c *Ctx) reset(ev *event) {
	c.Me = ev.Node
	c.Members = ev.Members
	c.Service = ev.Service
	c.Services = ev.Services
	if c.Services == nil && ev.Service >= 0 {
		c.Services = []int{ev.Service}
	}
	c.Seed = ev.Seed
	c.Restart = ev.Restart
	c.rand, c.pcg = newRand(ev.Seed)
	c.Rand = c.rand
	c.peers = make([]int, 0, len(ev.Members))
	for _, m := range ev.Members {
		if m != ev.Node {
			c.peers = append(c.peers, m)
		}
	}
}

// finish appends the reply for this step to dst.
func (c *Ctx) finish(dst []byte, step int64) []byte {
	dst = append(dst, `{"effects":[`...)
	dst = append(dst, c.buf...)
	dst = append(dst, ']')
	if c.termSet {
		dst = append(dst, `,"term":`...)
		dst = strconv.AppendUint(dst, c.term, 10)
	}
	switch c.leaderSet {
	case 1:
		dst = append(dst, `,"leader":`...)
		dst = strconv.AppendInt(dst, int64(c.leader), 10)
	case -1:
		dst = append(dst, `,"leader":null`...)
	}
	if c.digestSet {
		dst = c.appendDigest(dst)
	}
	if step >= 0 {
		// Protocol version 2: the reply names its event, so a stray line cannot pass.
		dst = append(dst, `,"step":`...)
		dst = strconv.AppendInt(dst, step, 10)
	}
	return append(dst, '}')
}

// fail records the first misuse of an effect, with the caller's position.
func (c *Ctx) fail(op string, format string, args ...any) {
	c.failSkip(1, op, format, args...)
}

// failSkip is fail for a caller skip frames further from the effect method.
func (c *Ctx) failSkip(skip int, op string, format string, args ...any) {
	if c.err != nil {
		return
	}
	where := ""
	if _, file, line, ok := runtime.Caller(3 + skip); ok {
		where = fmt.Sprintf(" at %s:%d", filepath.Base(file), line)
	}
	c.err = fmt.Errorf("splitbrain: %s%s: %s", op, where, fmt.Sprintf(format, args...))
}

// effect starts an effect object: `{"type":"<kind>"` (preceded by a comma if needed).
func (c *Ctx) effect(kind string) {
	if c.n > 0 {
		c.buf = append(c.buf, ',')
	}
	c.n++
	c.buf = append(c.buf, `{"type":"`...)
	c.buf = append(c.buf, kind...)
	c.buf = append(c.buf, '"')
}

func (c *Ctx) declaredTimer(op, name string) bool {
	for _, t := range c.spec.Timers {
		if t == name {
			return true
		}
	}
	c.failSkip(1, op, "timer %q is not declared in Spec.Timers %q", name, c.spec.Timers)
	return false
}

// Send sends body to node to over the simulated network. body must marshal (encoding/json)
// to a JSON object with a string "type"; a json.RawMessage or []byte is taken as the JSON
// text itself. To a member, the type must be one of Spec.Messages; to the coordination
// service (to one of Services, under ExternalClient) it is one of the service's requests
// (docs/protocol-services.md), which the simulator checks, and need not be declared.
func (c *Ctx) Send(to int, body any) {
	if c.err != nil {
		return
	}
	var raw []byte
	var err error
	switch b := body.(type) {
	case json.RawMessage:
		raw, err = compact(b)
	case []byte:
		raw, err = compact(b)
	default:
		raw, err = json.Marshal(body)
	}
	if err != nil {
		c.fail("Send", "cannot marshal the body %T: %v", body, err)
		return
	}
	if len(raw) == 0 || raw[0] != '{' {
		c.fail("Send", "the body must be a JSON object with a \"type\", got %s", truncate(raw))
		return
	}
	typ, ok := objectTypeOK(raw)
	if !ok {
		c.fail("Send", "the body has no string \"type\" field: %s", truncate(raw))
		return
	}
	declared := c.IsService(to)
	for _, m := range c.spec.Messages {
		if m == typ {
			declared = true
			break
		}
	}
	if !declared {
		c.fail("Send", "message type %q is not declared in Spec.Messages %q", typ, c.spec.Messages)
		return
	}
	c.effect("send")
	c.buf = append(c.buf, `,"to":`...)
	c.buf = strconv.AppendInt(c.buf, int64(to), 10)
	c.buf = append(c.buf, `,"body":`...)
	c.buf = append(c.buf, raw...)
	c.buf = append(c.buf, '}')
}

// SetTimer arms (or re-arms) the timer name to fire after `after` of the monotonic clock.
func (c *Ctx) SetTimer(name string, after time.Duration) {
	if c.err != nil || !c.declaredTimer("SetTimer", name) {
		return
	}
	if after < 0 {
		c.fail("SetTimer", "timer %q: negative delay %v", name, after)
		return
	}
	c.effect("set_timer")
	c.buf = append(c.buf, `,"name":`...)
	c.buf = appendString(c.buf, name)
	c.buf = append(c.buf, `,"after_ns":`...)
	c.buf = strconv.AppendInt(c.buf, int64(after), 10)
	c.buf = append(c.buf, '}')
}

// SetWallTimer arms the timer name to fire when the wall clock reads atWallNs.
func (c *Ctx) SetWallTimer(name string, atWallNs int64) {
	if c.err != nil || !c.declaredTimer("SetWallTimer", name) {
		return
	}
	c.effect("set_wall_timer")
	c.buf = append(c.buf, `,"name":`...)
	c.buf = appendString(c.buf, name)
	c.buf = append(c.buf, `,"at_wall_ns":`...)
	c.buf = strconv.AppendInt(c.buf, atWallNs, 10)
	c.buf = append(c.buf, '}')
}

// CancelTimer disarms the timer name.
func (c *Ctx) CancelTimer(name string) {
	if c.err != nil || !c.declaredTimer("CancelTimer", name) {
		return
	}
	c.effect("cancel_timer")
	c.buf = append(c.buf, `,"name":`...)
	c.buf = appendString(c.buf, name)
	c.buf = append(c.buf, '}')
}

// Persist writes state (marshalled with encoding/json; a json.RawMessage is taken as is) to
// the node's disk and fsyncs it. Sends after it wait for the write; a crash before it
// completes loses it; the next init's durable gives back the last completed one.
func (c *Ctx) Persist(state any) {
	if c.err != nil {
		return
	}
	var raw []byte
	var err error
	switch s := state.(type) {
	case json.RawMessage:
		raw, err = compact(s)
	default:
		raw, err = json.Marshal(state)
	}
	if err != nil {
		c.fail("Persist", "cannot marshal the state %T: %v", state, err)
		return
	}
	c.effect("persist")
	c.buf = append(c.buf, `,"state":`...)
	c.buf = append(c.buf, raw...)
	c.buf = append(c.buf, '}')
}

// Lead says that this node now believes it leads term and fences its writes with token
// (checked: at most one leader per term).
func (c *Ctx) Lead(term, token uint64) {
	if c.err != nil {
		return
	}
	c.effect("lead")
	c.buf = append(c.buf, `,"term":`...)
	c.buf = strconv.AppendUint(c.buf, term, 10)
	c.buf = append(c.buf, `,"token":`...)
	c.buf = strconv.AppendUint(c.buf, token, 10)
	c.buf = append(c.buf, '}')
}

// StepDown says that this node no longer believes it leads.
func (c *Ctx) StepDown() {
	if c.err != nil {
		return
	}
	c.effect("step_down")
	c.buf = append(c.buf, '}')
}

// Write writes to the fenced resource with token (checked: fencing at the resource).
func (c *Ctx) Write(token uint64) {
	if c.err != nil {
		return
	}
	c.effect("write")
	c.buf = append(c.buf, `,"token":`...)
	c.buf = strconv.AppendUint(c.buf, token, 10)
	c.buf = append(c.buf, '}')
}

// Campaign says that this node started an election for term (counted as an election).
func (c *Ctx) Campaign(term uint64) {
	if c.err != nil {
		return
	}
	c.effect("campaign")
	c.buf = append(c.buf, `,"term":`...)
	c.buf = strconv.AppendUint(c.buf, term, 10)
	c.buf = append(c.buf, '}')
}

// PreCampaign says that this node started a pre-vote for term (Raft's PreVote: a probe
// that does not raise its term; counted as a pre-vote, not as an election).
func (c *Ctx) PreCampaign(term uint64) {
	if c.err != nil {
		return
	}
	c.effect("pre_campaign")
	c.buf = append(c.buf, `,"term":`...)
	c.buf = strconv.AppendUint(c.buf, term, 10)
	c.buf = append(c.buf, '}')
}

// RoundFailed declares that this node's election for term ended without a winner (a split
// vote, a timeout while a candidate): counted as a failed round.
func (c *Ctx) RoundFailed(term uint64) {
	if c.err != nil {
		return
	}
	c.effect("round_failed")
	c.buf = append(c.buf, `,"term":`...)
	c.buf = strconv.AppendUint(c.buf, term, 10)
	c.buf = append(c.buf, '}')
}

// Observe records an observation for a property of your own. value must be a bool, an
// integer (any Go integer type whose value fits in an int64) or nil.
func (c *Ctx) Observe(name string, value any) {
	if c.err != nil {
		return
	}
	var v []byte
	switch x := value.(type) {
	case nil:
		v = append(v, "null"...)
	case bool:
		v = strconv.AppendBool(v, x)
	case int:
		v = strconv.AppendInt(v, int64(x), 10)
	case int8:
		v = strconv.AppendInt(v, int64(x), 10)
	case int16:
		v = strconv.AppendInt(v, int64(x), 10)
	case int32:
		v = strconv.AppendInt(v, int64(x), 10)
	case int64:
		v = strconv.AppendInt(v, x, 10)
	case uint8:
		v = strconv.AppendUint(v, uint64(x), 10)
	case uint16:
		v = strconv.AppendUint(v, uint64(x), 10)
	case uint32:
		v = strconv.AppendUint(v, uint64(x), 10)
	case uint:
		if uint64(x) > 1<<63-1 {
			c.fail("Observe", "%q: %d does not fit in an int64", name, x)
			return
		}
		v = strconv.AppendUint(v, uint64(x), 10)
	case uint64:
		if x > 1<<63-1 {
			c.fail("Observe", "%q: %d does not fit in an int64", name, x)
			return
		}
		v = strconv.AppendUint(v, x, 10)
	default:
		c.fail("Observe", "%q: the value must be a bool, an integer or nil, got %T", name, value)
		return
	}
	c.effect("observe")
	c.buf = append(c.buf, `,"name":`...)
	c.buf = appendString(c.buf, name)
	c.buf = append(c.buf, `,"value":`...)
	c.buf = append(c.buf, v...)
	c.buf = append(c.buf, '}')
}

// Disconnect closes the Stream connection to peer.
func (c *Ctx) Disconnect(peer int) {
	if c.err != nil {
		return
	}
	c.effect("disconnect")
	c.buf = append(c.buf, `,"peer":`...)
	c.buf = strconv.AppendInt(c.buf, int64(peer), 10)
	c.buf = append(c.buf, '}')
}

// SetTerm reports the node's current term in this step's reply (checked: term_monotonic).
// Without it the reply leaves the term unchanged.
func (c *Ctx) SetTerm(term uint64) {
	c.term, c.termSet = term, true
}

// SetLeader reports, in this step's reply, the leader this node recognises (itself
// included). Without SetLeader or ClearLeader the reply leaves it unchanged.
func (c *Ctx) SetLeader(id int) {
	c.leader, c.leaderSet = id, 1
}

// ClearLeader reports, in this step's reply, that this node recognises no leader
// ("leader": null).
func (c *Ctx) ClearLeader() {
	c.leaderSet = -1
}

// SetDigest reports, in this step's reply, a digest of the node's whole state after the
// step, for a systematic search (`splitbrain hunt --search systematic`, docs/hunting.md):
// a state already explored is not explored again. Two states with equal digests (and equal
// term and leader) must go on alike: cover everything that decides what the node does next
// (role, votes, vote counts, anything a later event reads), and leave out, or write as an
// age, what only names the time (a deadline: the simulator digests the armed timers
// itself). Without SetDigest the reply leaves the digest as the node last reported it, so
// a node that reports one must report it in every step that changes its state: call it at
// the end of every handler. A restart clears it on the simulator's side.
//
// The reply's "digest" is the JSON object {"state":digest,"rand":"<hex>"}: the state of Rand
// is part of the node's state, and the package adds it as the step ends. Replacing Rand with
// another generator makes SetDigest an error. Write numbers exactly (strconv, fmt's %d); a
// struct marshalled with encoding/json is a good digest too (its map keys are sorted).
func (c *Ctx) SetDigest(digest string) {
	if c.err != nil {
		return
	}
	if c.pcg == nil {
		c.fail("SetDigest", "no init yet: the node has no state to digest")
		return
	}
	if c.Rand != c.rand {
		c.fail("SetDigest", "ctx.Rand was replaced: the state of the node's generator cannot be digested")
		return
	}
	c.digest, c.digestSet = digest, true
}

// appendDigest appends the reply's digest field: the reported state and Rand's state.
func (c *Ctx) appendDigest(dst []byte) []byte {
	dst = append(dst, `,"digest":{"state":`...)
	dst = appendString(dst, c.digest)
	dst = append(dst, `,"rand":"`...)
	state, err := c.pcg.MarshalBinary()
	if err != nil {
		// PCG.MarshalBinary cannot fail (Go 1.22-1.26): a later Go that makes it fail
		// breaks the package, not a run.
		panic("splitbrain: the state of Rand: " + err.Error())
	}
	for _, b := range state[len(state)-16:] {
		dst = append(dst, hexDigits[b>>4], hexDigits[b&0xf])
	}
	return append(dst, `"}`...)
}
