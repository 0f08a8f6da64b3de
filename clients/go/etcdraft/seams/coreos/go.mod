// The seam for github.com/coreos/etcd/raft (etcd 3.2 and 3.3). Each pin's go.mod requires
// the exact library version and replaces splitbrain.dev/etcdraft/raftlib with this
// directory; the version below is only the lowest one it serves.
module splitbrain.dev/etcdraft/raftlib

go 1.22

require github.com/coreos/etcd v3.2.32+incompatible
