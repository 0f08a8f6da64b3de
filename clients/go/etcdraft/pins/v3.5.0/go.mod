// etcd's raft as of v3.5.0 (module go.etcd.io/etcd/raft/v3), kept for the safety bug
// #12133. Build: go build .
module splitbrain.dev/etcdraft/pins/v3.5.0

go 1.22

require splitbrain.dev/etcdraft v0.0.0

require (
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/golang/protobuf v1.5.2 // indirect
	go.etcd.io/etcd/raft/v3 v3.5.0 // indirect
	google.golang.org/protobuf v1.26.0 // indirect
	splitbrain.dev/etcdraft/raftlib v0.0.0 // indirect
	splitbrain.dev/node v0.0.0 // indirect
)

replace (
	splitbrain.dev/etcdraft => ../..
	splitbrain.dev/etcdraft/raftlib => ../../seams/etcd35
	splitbrain.dev/node => ../../..
)
