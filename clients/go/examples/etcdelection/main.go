// Command etcdelection is etcd's election recipe (clientv3 concurrency.Election) as a
// client of the modeled etcd: lease, Txn, lowest create revision leads, watch the
// predecessor, the create revision as term and fencing token. The code is in
// internal/etcdelection. Run it under ExternalClient, from the repository root:
//
//	splitbrain run scenarios/external/go-etcd-election.ron
//	splitbrain hunt scenarios/external/go-etcd-election.ron --seeds 1000
package main

import "splitbrain.dev/node/internal/etcdelection"

func main() {
	etcdelection.Main(false)
}
