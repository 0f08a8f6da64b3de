// Command etcdraft-node: etcd's raft at this pin's version as a splitbrain external node.
package main

import "splitbrain.dev/etcdraft"

func main() { etcdraft.Main() }
