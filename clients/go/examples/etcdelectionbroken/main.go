// Command etcdelectionbroken is examples/etcdelection with one deliberate bug
// (etcdelection.Node.Broken): the leader fences its writes with its wall clock in whole
// seconds instead of its key's create revision. Two leaders that overlap (the old one still
// trusts its lease after a pause) or whose clocks disagree write with the same token, and
// the resource accepts both (fencing_safety). Hunt it, from the repository root:
//
//	splitbrain hunt scenarios/external/go-etcd-election-broken.ron --seeds 1000
package main

import "splitbrain.dev/node/internal/etcdelection"

func main() {
	etcdelection.Main(true)
}
