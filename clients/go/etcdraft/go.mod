// The etcd raft adapter's shared source, compiled once per pin: each pin's module
// (pins/<pin>/go.mod) replaces splitbrain.dev/etcdraft/raftlib with its own seam
// (pins/<pin>/raftlib), which names the library at that version. Build and test from a
// pin's directory, never from here (this module alone names no raft library).
module splitbrain.dev/etcdraft

go 1.22

require (
	splitbrain.dev/etcdraft/raftlib v0.0.0
	splitbrain.dev/node v0.0.0
)

replace splitbrain.dev/node => ../
