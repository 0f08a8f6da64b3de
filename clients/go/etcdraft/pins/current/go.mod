// The current raft of the gogo-protobuf API: go.etcd.io/raft/v3 v3.6.0, the raft of etcd
// 3.6 (v3.7.0 moved to google.golang.org/protobuf with pointer fields, another API: see
// ../../README.md). Build: go build .
module splitbrain.dev/etcdraft/pins/current

go 1.23

require splitbrain.dev/etcdraft v0.0.0

require (
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/golang/protobuf v1.5.4 // indirect
	go.etcd.io/raft/v3 v3.6.0 // indirect
	google.golang.org/protobuf v1.33.0 // indirect
	splitbrain.dev/etcdraft/raftlib v0.0.0 // indirect
	splitbrain.dev/node v0.0.0 // indirect
)

replace (
	splitbrain.dev/etcdraft => ../..
	splitbrain.dev/etcdraft/raftlib => ../../seams/raftv3
	splitbrain.dev/node => ../../..
)
