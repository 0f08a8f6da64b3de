// The seam for go.etcd.io/raft/v3 (etcd 3.6's raft). Each pin's go.mod requires the exact library
// version and replaces splitbrain.dev/etcdraft/raftlib with this directory; the version
// below is only the lowest one it serves.
module splitbrain.dev/etcdraft/raftlib

go 1.22

require go.etcd.io/raft/v3 v3.6.0
