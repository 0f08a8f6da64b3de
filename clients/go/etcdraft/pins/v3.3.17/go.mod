// etcd's raft as of v3.3.17: #8243 and #8334/#9586 fixed (v3.3.14 itself is not served by
// the module proxy). Build: go build .
module splitbrain.dev/etcdraft/pins/v3.3.17

go 1.22

require splitbrain.dev/etcdraft v0.0.0

require (
	github.com/coreos/etcd v3.3.17+incompatible // indirect
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/golang/protobuf v1.5.4 // indirect
	google.golang.org/protobuf v1.33.0 // indirect
	splitbrain.dev/etcdraft/raftlib v0.0.0 // indirect
	splitbrain.dev/node v0.0.0 // indirect
)

replace (
	splitbrain.dev/etcdraft => ../..
	splitbrain.dev/etcdraft/raftlib => ../../seams/coreos
	splitbrain.dev/node => ../../..
)
