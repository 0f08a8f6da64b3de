package etcdraft

import (
	"fmt"
	"strconv"
	"time"

	"splitbrain.dev/etcdraft/raftlib"
)

// Options are the node's settings, from its command line.
type Options struct {
	// ElectionTick is raft.Config.ElectionTick: a follower campaigns after a randomized
	// [ElectionTick, 2*ElectionTick) ticks without hearing from a leader. etcd: the
	// --election-timeout (1000 ms) divided by the --heartbeat-interval (100 ms), 10.
	ElectionTick int
	// HeartbeatTick is raft.Config.HeartbeatTick: the leader's heartbeat every this many
	// ticks. etcd always uses 1 (etcdserver/raft.go).
	HeartbeatTick int
	// Tick is the real time between two RawNode.Tick calls: etcd's --heartbeat-interval,
	// 100 ms by default (embed/config.go, TickMs).
	Tick time.Duration
	// PreVote is raft.Config.PreVote (etcd's --pre-vote).
	PreVote bool
	// CheckQuorum is raft.Config.CheckQuorum (etcd sets it true always).
	CheckQuorum bool
	// Verbose sends the library's Info and Debug lines to stderr too.
	Verbose bool
	// ApplyLagTicks holds committed entries back this many ticks before they are applied
	// (configuration changes) and the RawNode is told so (Advance): etcd's apply runs
	// behind its raft loop (server/etcdserver/raft.go hands each Ready's CommittedEntries
	// to the apply goroutine through applyc, and raft's applied index moves only when
	// the application says so). 0, the default: applied in the step that commits them.
	// Only where raftlib.SupportsApplyLag (3.4, 3.5).
	ApplyLagTicks int
}

// DefaultOptions are etcd's own defaults, except CheckQuorum and PreVote, which are
// flags here so that a scenario can show the library without them.
func DefaultOptions() Options {
	return Options{ElectionTick: 10, HeartbeatTick: 1, Tick: 100 * time.Millisecond}
}

// Usage is printed after a flag error.
const Usage = `usage: etcdraft-node [--election-tick N] [--heartbeat-tick N] [--tick DURATION]
                     [--pre-vote] [--check-quorum] [--apply-lag-ticks N] [--verbose]
  --election-tick N    raft.Config.ElectionTick (default 10: etcd's 1000 ms / 100 ms)
  --heartbeat-tick N   raft.Config.HeartbeatTick (default 1, as etcd)
  --tick DURATION      time between two Tick() calls (default 100ms: etcd's heartbeat-interval)
  --pre-vote           raft.Config.PreVote
  --check-quorum       raft.Config.CheckQuorum
  --apply-lag-ticks N  apply committed entries N ticks after they are handed out (default 0;
                       3.4 and 3.5 only): etcd's apply loop running behind raft
  --verbose            the library's Info and Debug log lines to stderr as well
`

// ParseFlags reads the command line (without the program name). Both "--flag value" and
// "--flag=value" are accepted; anything unknown is an error.
func ParseFlags(args []string) (Options, error) {
	o := DefaultOptions()
	for i := 0; i < len(args); i++ {
		name, value, hasValue := args[i], "", false
		if len(name) > 2 && name[:2] == "--" {
			for j := 2; j < len(name); j++ {
				if name[j] == '=' {
					name, value, hasValue = name[:j], name[j+1:], true
					break
				}
			}
		}
		needValue := func() (string, error) {
			if hasValue {
				return value, nil
			}
			if i+1 >= len(args) {
				return "", fmt.Errorf("flag %s needs a value", name)
			}
			i++
			return args[i], nil
		}
		positiveInt := func() (int, error) {
			v, err := needValue()
			if err != nil {
				return 0, err
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return 0, fmt.Errorf("flag %s: %q is not a positive integer", name, v)
			}
			return n, nil
		}
		noValue := func() error {
			if hasValue {
				return fmt.Errorf("flag %s takes no value", name)
			}
			return nil
		}
		var err error
		switch name {
		case "--election-tick":
			o.ElectionTick, err = positiveInt()
		case "--heartbeat-tick":
			o.HeartbeatTick, err = positiveInt()
		case "--tick":
			var v string
			if v, err = needValue(); err == nil {
				o.Tick, err = time.ParseDuration(v)
				if err == nil && o.Tick <= 0 {
					err = fmt.Errorf("flag --tick: %q is not a positive duration", v)
				}
			}
		case "--pre-vote":
			err = noValue()
			o.PreVote = true
		case "--check-quorum":
			err = noValue()
			o.CheckQuorum = true
		case "--verbose":
			err = noValue()
			o.Verbose = true
		case "--apply-lag-ticks":
			var v string
			if v, err = needValue(); err == nil {
				o.ApplyLagTicks, err = strconv.Atoi(v)
				if err != nil || o.ApplyLagTicks < 0 {
					err = fmt.Errorf("flag --apply-lag-ticks: %q is not a non-negative integer", v)
				}
			}
			if err == nil && o.ApplyLagTicks > 0 && !raftlib.SupportsApplyLag {
				err = fmt.Errorf("flag --apply-lag-ticks: %s cannot hold committed entries back (see raftlib.SupportsApplyLag)", raftlib.Module)
			}
		default:
			err = fmt.Errorf("unknown flag %q", args[i])
		}
		if err != nil {
			return o, err
		}
	}
	if o.HeartbeatTick >= o.ElectionTick {
		// raft.Config.validate refuses it too ("election tick must be greater than
		// heartbeat tick"), but only at the first init: say so before hello.
		return o, fmt.Errorf("--election-tick (%d) must be greater than --heartbeat-tick (%d)", o.ElectionTick, o.HeartbeatTick)
	}
	return o, nil
}
