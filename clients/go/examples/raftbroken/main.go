// Command raftbroken is examples/raft with one deliberate bug (raftnode.Node.Broken): a
// leader that trusts a lease counted from the heartbeats it sent keeps leading when a vote
// request shows a higher term, and claims that term (its fencing token) without winning it.
// When the candidate wins the same term, two leaders claim it (election_safety) and both
// write with the same token (fencing_safety). A pause of the leader is the classic way to get
// there: the lease looks fresh at resume, the vote request has been waiting. Hunt it:
//
//	go build -o bin/raftbroken ./examples/raftbroken
//	splitbrain hunt scenarios/external/go-broken.ron --seeds 2000
package main

import "splitbrain.dev/node/internal/raftnode"

func main() {
	raftnode.Main(true)
}
