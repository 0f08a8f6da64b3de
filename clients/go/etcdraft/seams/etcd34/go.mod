// The seam for go.etcd.io/etcd/raft (etcd 3.4, module go.etcd.io/etcd). Each pin's go.mod requires the exact library
// version and replaces splitbrain.dev/etcdraft/raftlib with this directory; the version
// below is only the lowest one it serves.
module splitbrain.dev/etcdraft/raftlib

go 1.22

require go.etcd.io/etcd v0.5.0-alpha.5.0.20200910180754-dd1b699fc489
