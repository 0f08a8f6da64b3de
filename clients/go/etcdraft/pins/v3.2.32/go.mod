// etcd's raft as of v3.2.32, the last 3.2 release: PreVote's liveness bug #8243 (fixed in
// v3.3.0 by #8288) is still there. Build: go build .
module splitbrain.dev/etcdraft/pins/v3.2.32

go 1.22

replace (
	splitbrain.dev/etcdraft => ../..
	splitbrain.dev/etcdraft/raftlib => ../../seams/coreos
	splitbrain.dev/node => ../../..
)

require splitbrain.dev/etcdraft v0.0.0

require (
	github.com/coreos/etcd v3.2.32+incompatible // indirect
	github.com/golang/protobuf v1.5.4 // indirect
	golang.org/x/net v0.24.0 // indirect
	google.golang.org/protobuf v1.33.0 // indirect
	splitbrain.dev/etcdraft/raftlib v0.0.0 // indirect
	splitbrain.dev/node v0.0.0 // indirect
)
