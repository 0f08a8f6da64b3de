// Package etcdelection is etcd's election recipe (go.etcd.io/etcd/client/v3/concurrency,
// Election.Campaign) as a splitbrain node that is a client of the modeled etcd: the code
// behind examples/etcdelection and, with Broken set, the deliberately broken
// examples/etcdelectionbroken. It runs under
// ExternalClient(command: [...], service: Etcd(...)) and follows the exchange of the built-in
// client (algorithms/src/etcd/client.rs, Revision recipe, etcd's Go client keep-alives) as
// docs/protocol-services.md describes it:
//
//  1. Campaign: LeaseGrant with TTL (5 s); a grant for an older campaign is dropped.
//  2. On LeaseGrantResp: keep the lease alive as clientv3 does (a send loop every 500 ms
//     sends a KeepAlive once a third of the granted TTL has passed since the last answer,
//     the first at once; the lease is believed alive until the arrival of the last answer
//     plus the TTL, checked by a deadline loop every second) and send Txn.
//  3. On TxnResp for the lease held now: create_rev 0 means the lease is gone (revoke it,
//     campaign again). If the own key is first, lead: term and fencing token are its create
//     revision; while leading, write to the fenced resource every 100 ms. Otherwise Watch
//     the predecessor (the highest create revision below the own) from revision+1, and the
//     leader's key too when it is not the predecessor (Election.Observe: who leads).
//  4. On WatchEvent for a watched key: Range, and decide again on RangeResp (a view older
//     than the last one acted on is ignored; a view without the own key means the lease
//     expired: campaign again).
//  5. A KeepAliveResp with TTL 0, or the deadline loop finding the clock past the deadline:
//     step down, Revoke, campaign again. Resign: Revoke, step down, campaign again.
//  6. Retries: an unanswered LeaseGrant or Txn goes again after a third of the TTL, and a
//     waiter re-reads the prefix once per TTL. The built-in client arms these only on the
//     Datagram transport; a node cannot tell the transport, so this one always does (on
//     Stream they are rarely needed and harmless: Txn is idempotent, an extra grant
//     expires unused). After a disconnect from the service, the request the phase waits
//     for goes again (a waiter: Range, then its watches anew).
//  7. On a cluster (Etcd(members: 3), init's services), as clientv3's round-robin balancer:
//     start with member Me % len(services); on a disconnect from it, on its Unavailable
//     (no leader, a timeout) or when a grant or Txn goes unanswered, move to the next
//     member; after Unavailable the request goes again 25 ms later (clientv3's unary retry
//     backoff). Answers from any member count: they read the same replicated state.
//
// The node reports as its term the highest revision it has seen, persisted (with its
// campaign count) so that it never goes back across a restart; a restarted node has lost
// its lease's keep-alives and campaigns with a new lease (the old key goes when the old
// lease expires at the service).
package etcdelection

import (
	"encoding/json"
	"flag"
	"time"

	"splitbrain.dev/node/splitbrain"
)

// Timing. TTL matches the scenarios' Etcd(ttl: "5s"); the loops are clientv3's.
const (
	// TTL is the lease TTL asked for by default (the service may raise it to its minimum);
	// Node.TTL (the command's -ttl) sets another.
	TTL = 5 * time.Second
	// SendLoop is clientv3's keep-alive send loop (sendKeepAliveLoop, retryConnWait).
	SendLoop = 500 * time.Millisecond
	// DeadlineLoop is clientv3's lease deadline check (deadlineLoop).
	DeadlineLoop = time.Second
	// WriteEvery is how often a leader writes to the fenced resource.
	WriteEvery = 100 * time.Millisecond
)

// Spec is what the node sends to its peers (nothing: the service's requests need no
// declaration) and the timers it arms.
var Spec = splitbrain.Spec{
	Messages: []string{},
	Timers:   []string{"keepalive", "deadline", "retry", "write"},
}

type phase int

const (
	granting phase = iota // waiting for LeaseGrantResp of campaign n.campaigns
	creating              // lease held, waiting for TxnResp
	waiting               // own key created, watching the predecessor n.pred
	leading               // own key is the lowest
)

// Requests, in their JSON form (docs/protocol-services.md).
type leaseGrant struct {
	Type     string `json:"type"`
	TTLNs    int64  `json:"ttl_ns"`
	SentAt   int64  `json:"sent_at"`
	Campaign uint64 `json:"campaign"`
}

type keepAlive struct {
	Type   string `json:"type"`
	Lease  uint64 `json:"lease"`
	SentAt int64  `json:"sent_at"`
}

type leaseReq struct { // Txn and Revoke
	Type  string `json:"type"`
	Lease uint64 `json:"lease"`
}

type watch struct {
	Type     string `json:"type"`
	Key      uint64 `json:"key"`
	StartRev uint64 `json:"start_rev"`
}

var rangeReq = json.RawMessage(`{"type":"Range"}`)

// answer is any answer of the service; unknown fields are ignored.
type answer struct {
	Lease     uint64      `json:"lease"`
	TTLNs     int64       `json:"ttl_ns"`
	SentAt    int64       `json:"sent_at"`
	Campaign  uint64      `json:"campaign"`
	CreateRev uint64      `json:"create_rev"`
	Revision  uint64      `json:"revision"`
	Keys      [][2]uint64 `json:"keys"` // [create_rev, node], lowest create_rev first
	Key       uint64      `json:"key"`
}

// durable is what the node persists: the highest revision seen (its term) and the number
// of campaigns started (so that a grant asked for before a crash is not taken for one of
// the new incarnation's).
type durable struct {
	Revision  uint64 `json:"revision"`
	Campaigns uint64 `json:"campaigns"`
}

// Node is one election member, a client of the modeled etcd.
type Node struct {
	// Broken makes the node the deliberately broken variant (see examples/etcdelectionbroken
	// and Node.writeToken): it fences its writes with its wall clock in whole seconds
	// instead of its key's create revision.
	Broken bool
	// TTL is the lease TTL to ask for; 0: the default TTL (5 s).
	TTL time.Duration

	services []int // the members it may use (one entry for the single service)
	endpoint int   // the index of service in services
	service  int   // the member it talks to now
	backoff  bool  // the armed retry is the backoff after Unavailable (it already moved on)
	phase    phase
	lease    uint64 // 0: none
	ttl      time.Duration
	myRev    uint64 // the own key's create revision, 0 until created
	pred     uint64 // waiting: the predecessor's create revision (0: watch to be re-sent)
	// observed is the leader's key a waiter watches when it is not the predecessor (0: none).
	observed uint64
	// deadline: the lease is believed alive until the monotonic clock passes it (the
	// arrival of the last answered keep-alive plus the TTL).
	deadline int64
	// nextKeepAlive: the send loop sends a keep-alive once the clock is past it.
	nextKeepAlive int64
	viewRevision  uint64 // the revision of the newest view acted on
	leaderSeen    int    // -1: unknown
	seen          uint64 // the highest revision seen: the term
	campaigns     uint64
	saved         durable // what was last persisted
}

// Init starts or restarts the node: restore the term and campaign count, campaign anew.
func (n *Node) Init(ctx *splitbrain.Ctx, d json.RawMessage) {
	*n = Node{Broken: n.Broken, TTL: n.TTL, services: ctx.Services, leaderSeen: -1}
	if len(n.services) == 0 {
		panic("etcdelection: no coordination service: run me under ExternalClient(service: Etcd(...))")
	}
	n.endpoint = ctx.Me % len(n.services)
	n.service = n.services[n.endpoint]
	if d != nil {
		if err := json.Unmarshal(d, &n.saved); err != nil {
			panic("etcdelection: unreadable durable state " + string(d) + ": " + err.Error())
		}
		n.seen, n.campaigns = n.saved.Revision, n.saved.Campaigns
	}
	n.campaign(ctx)
	n.report(ctx)
}

// Message handles an answer or event of the service.
func (n *Node) Message(ctx *splitbrain.Ctx, from int, body splitbrain.Body) {
	if !ctx.IsService(from) {
		return // no peer messages in this recipe
	}
	var a answer
	if err := body.Decode(&a); err != nil {
		panic("etcdelection: unreadable answer " + string(body.Raw) + ": " + err.Error())
	}
	n.seen = max(n.seen, a.Revision)
	switch body.Type {
	case "LeaseGrantResp":
		if n.phase != granting || a.Campaign != n.campaigns {
			break // asked for by an abandoned campaign, or already granted: it will expire
		}
		n.lease = a.Lease
		n.ttl = time.Duration(a.TTLNs)
		n.phase = creating
		n.startKeepAlives(ctx)
		ctx.Send(n.service, leaseReq{Type: "Txn", Lease: n.lease})
		ctx.SetTimer("retry", n.keepAliveEvery())
	case "KeepAliveResp":
		if a.Lease != n.lease || n.lease == 0 {
			break
		}
		if a.TTLNs == 0 {
			n.lostLease(ctx)
			break
		}
		n.deadline = ctx.MonoNs + a.TTLNs
		n.nextKeepAlive = ctx.MonoNs + int64(n.keepAliveEvery())
	case "TxnResp":
		// Only the answer for the lease held now: a key on an abandoned lease goes with it.
		if n.phase != creating || a.Lease != n.lease {
			break
		}
		if a.CreateRev == 0 {
			n.lostLease(ctx)
			break
		}
		n.myRev = a.CreateRev
		n.evaluate(ctx, a.Revision, a.Keys)
	case "RangeResp":
		if n.phase == waiting || n.phase == leading {
			n.evaluate(ctx, a.Revision, a.Keys)
		} else {
			n.leaderSeen = firstOwner(a.Keys)
		}
	case "Unavailable":
		if from == n.service { // a failure from a member already left changes nothing
			n.unavailable(ctx)
		}
	case "WatchEvent":
		if n.phase == waiting && (a.Key == n.pred || a.Key == n.observed) {
			if a.Key == n.observed {
				n.observed = 0
			}
			ctx.Send(n.service, rangeReq)
			ctx.SetTimer("retry", n.keepAliveEvery())
		}
	}
	n.report(ctx)
}

// Timer runs the keep-alive send loop, the deadline loop, retries and the leader's writes.
func (n *Node) Timer(ctx *splitbrain.Ctx, name string) {
	switch name {
	case "keepalive":
		n.sendLoopPass(ctx)
	case "deadline":
		if ctx.MonoNs > n.deadline {
			n.lostLease(ctx)
		} else {
			ctx.SetTimer("deadline", DeadlineLoop)
		}
	case "retry":
		backoff := n.backoff
		n.backoff = false
		if !backoff && (n.phase == granting || n.phase == creating) {
			n.failOver()
		}
		switch n.phase {
		case granting:
			n.askForLease(ctx)
		case creating:
			ctx.Send(n.service, leaseReq{Type: "Txn", Lease: n.lease})
			ctx.SetTimer("retry", n.keepAliveEvery())
		case waiting:
			ctx.Send(n.service, rangeReq)
			ctx.SetTimer("retry", n.ttl)
		}
	case "write":
		if n.phase == leading {
			ctx.Write(n.writeToken(ctx))
			ctx.SetTimer("write", WriteEvery)
		}
	}
	n.report(ctx)
}

// Resign hands leadership over: revoke the lease (the next in line hears its key's delete),
// step down, campaign again.
func (n *Node) Resign(ctx *splitbrain.Ctx) {
	if n.phase != leading {
		return
	}
	n.stepDown(ctx)
	ctx.Send(n.service, leaseReq{Type: "Revoke", Lease: n.lease})
	n.leaderSeen = -1
	n.campaign(ctx)
	n.report(ctx)
}

// Disconnect: the connection to the service broke and what was in flight on it is lost.
// The request the phase waits for goes again, as clientv3's retrying interceptor re-sends a
// unary call; a waiter re-reads the prefix and re-creates its watches from the new view.
// An unanswered keep-alive goes again at the send loop's next pass.
func (n *Node) Disconnect(ctx *splitbrain.Ctx, peer int) {
	if peer != n.service {
		return
	}
	n.failOver()
	switch n.phase {
	case granting:
		n.askForLease(ctx)
	case creating:
		ctx.Send(n.service, leaseReq{Type: "Txn", Lease: n.lease})
	case waiting:
		n.pred, n.observed = 0, 0 // no key has create revision 0: the next view re-watches
		ctx.Send(n.service, rangeReq)
	}
	n.report(ctx)
}

// failOver moves to the next member (clientv3's round-robin balancer); nothing with one.
func (n *Node) failOver() {
	n.endpoint = (n.endpoint + 1) % len(n.services)
	n.service = n.services[n.endpoint]
}

// unavailable: the member failed the request (no leader, ErrNotPrimary, a timeout). Move to
// the next member and retry 25 ms later; a waiter re-creates its watches there. An
// unanswered keep-alive goes again at the send loop's next pass.
func (n *Node) unavailable(ctx *splitbrain.Ctx) {
	n.failOver()
	if n.phase == waiting {
		n.pred, n.observed = 0, 0
	}
	if n.phase != leading {
		n.backoff = true
		ctx.SetTimer("retry", 25*time.Millisecond)
	}
}

// keepAliveEvery is a third of the TTL (granted, or asked for before the grant).
func (n *Node) keepAliveEvery() time.Duration {
	if n.ttl > 0 {
		return n.ttl / 3
	}
	return n.askedTTL() / 3
}

// askedTTL is the TTL a campaign asks for: Node.TTL, or the default.
func (n *Node) askedTTL() time.Duration {
	if n.TTL > 0 {
		return n.TTL
	}
	return TTL
}

// campaign starts a campaign from nothing: a new lease.
func (n *Node) campaign(ctx *splitbrain.Ctx) {
	n.lease, n.myRev, n.pred, n.observed, n.ttl = 0, 0, 0, 0, 0
	ctx.CancelTimer("keepalive")
	ctx.CancelTimer("deadline")
	ctx.CancelTimer("write")
	n.campaigns++
	n.phase = granting
	n.askForLease(ctx)
}

func (n *Node) askForLease(ctx *splitbrain.Ctx) {
	ctx.Send(n.service, leaseGrant{Type: "LeaseGrant", TTLNs: int64(n.askedTTL()), SentAt: ctx.MonoNs, Campaign: n.campaigns})
	ctx.SetTimer("retry", n.keepAliveEvery())
}

// startKeepAlives registers a granted lease with the keep-alive loops, as clientv3 does: a
// keep-alive due at once, the deadline the grant's arrival plus the TTL until the first
// answer.
func (n *Node) startKeepAlives(ctx *splitbrain.Ctx) {
	n.deadline = ctx.MonoNs + int64(n.ttl)
	n.nextKeepAlive = ctx.MonoNs - 1
	n.sendLoopPass(ctx)
	ctx.SetTimer("deadline", DeadlineLoop)
}

// sendLoopPass is one pass of clientv3's send loop: a keep-alive if one is due (an
// unanswered one goes again at every pass), then the next pass.
func (n *Node) sendLoopPass(ctx *splitbrain.Ctx) {
	if n.lease != 0 && ctx.MonoNs > n.nextKeepAlive {
		ctx.Send(n.service, keepAlive{Type: "KeepAlive", Lease: n.lease, SentAt: ctx.MonoNs})
	}
	ctx.SetTimer("keepalive", SendLoop)
}

// lostLease leaves leadership (if held), revokes the old lease so that a lease the service
// still honours does not block the new key, and campaigns again.
func (n *Node) lostLease(ctx *splitbrain.Ctx) {
	if n.phase == leading {
		n.stepDown(ctx)
	}
	if n.lease != 0 {
		ctx.Send(n.service, leaseReq{Type: "Revoke", Lease: n.lease})
	}
	n.campaign(ctx)
}

func (n *Node) stepDown(ctx *splitbrain.Ctx) {
	ctx.StepDown()
	ctx.CancelTimer("write")
}

// evaluate is the recipe's decision on a view of the prefix.
func (n *Node) evaluate(ctx *splitbrain.Ctx, revision uint64, keys [][2]uint64) {
	if revision < n.viewRevision {
		return // stale: answered before the view acted on, delivered after
	}
	n.viewRevision = revision
	n.leaderSeen = firstOwner(keys)
	own := false
	for _, k := range keys {
		if k[0] == n.myRev {
			own = true
		}
	}
	if !own {
		// The own key is gone (the lease expired at the service): whatever the
		// predecessor did, this client must not lead with it.
		n.lostLease(ctx)
		return
	}
	if keys[0][0] == n.myRev {
		if n.phase != leading {
			n.phase = leading
			ctx.CancelTimer("retry")
			ctx.Lead(n.myRev, n.writeToken(ctx))
			ctx.Write(n.writeToken(ctx))
			ctx.SetTimer("write", WriteEvery)
		}
		return
	}
	if n.phase == leading {
		// A lower key cannot appear after the own one: step down rather than lead on a
		// view that disagrees.
		n.lostLease(ctx)
		return
	}
	var pred uint64
	for _, k := range keys {
		if k[0] < n.myRev && k[0] > pred {
			pred = k[0]
		}
	}
	if n.phase != waiting || n.pred != pred {
		n.phase, n.pred = waiting, pred
		ctx.Send(n.service, watch{Type: "Watch", Key: pred, StartRev: revision + 1})
	}
	// Election.Observe: watch the leader's key too, to learn when the leadership changes.
	if leader := keys[0][0]; leader != n.observed {
		n.observed = leader
		if leader != pred {
			ctx.Send(n.service, watch{Type: "Watch", Key: leader, StartRev: revision + 1})
		}
	}
	ctx.SetTimer("retry", n.ttl)
}

// writeToken is the fencing token of the leader's writes: its key's create revision, which
// the service makes unique and increasing across leaderships.
func (n *Node) writeToken(ctx *splitbrain.Ctx) uint64 {
	if n.Broken {
		// THE BUG (Broken only): the wall clock as the fencing token ("a timestamp is
		// unique and increasing enough"). Whole seconds, as a Unix time would be: two
		// leaders that overlap (the old one still believes in its lease after a pause, for
		// up to a deadline-loop pass) or whose clocks disagree write with the same token in
		// the same second, and the resource accepts both.
		return uint64(max(ctx.WallNs, 0) / int64(time.Second))
	}
	return n.myRev
}

// report sets the reply's term (the highest revision seen, persisted when it grew) and
// leader (the node itself when leading, else the owner of the lowest key it last saw).
func (n *Node) report(ctx *splitbrain.Ctx) {
	if cur := (durable{Revision: n.seen, Campaigns: n.campaigns}); cur != n.saved {
		// After this step's sends: the service, not this disk, is the source of truth; a
		// crash before the write completes restarts the node at the term it had persisted.
		ctx.Persist(cur)
		n.saved = cur
	}
	ctx.SetTerm(n.seen)
	switch {
	case n.phase == leading:
		ctx.SetLeader(ctx.Me)
	case n.leaderSeen >= 0:
		ctx.SetLeader(n.leaderSeen)
	default:
		ctx.ClearLeader()
	}
}

func firstOwner(keys [][2]uint64) int {
	if len(keys) == 0 {
		return -1
	}
	return int(keys[0][1])
}

// Main runs the node as a process (see examples/etcdelection and
// examples/etcdelectionbroken). Its flag -ttl sets the lease TTL asked for (default 5s), to
// match a scenario's Etcd(ttl: ...).
func Main(broken bool) {
	ttl := flag.Duration("ttl", TTL, "the lease TTL to ask for")
	flag.Parse()
	splitbrain.Run(Spec, &Node{Broken: broken, TTL: *ttl})
}
