// Command raft is Raft's leader election as a splitbrain node process (the election part of
// the paper: randomized timeouts, persisted term and vote, heartbeats, step down on a higher
// term). The code is in internal/raftnode. Build and hunt it:
//
//	go build -o bin/raft ./examples/raft
//	splitbrain hunt scenarios/external/go-raft.ron --seeds 2000
package main

import "splitbrain.dev/node/internal/raftnode"

func main() {
	raftnode.Main(false)
}
