// Command demo shows netrak's transport layer at work: it starts the
// impairment relay (transport/relay, the engine of examples/netsim) on
// loopback with loss, latency, jitter, duplication and reordering, lets a
// client and a server exchange a few hundred datagrams through it for about
// two seconds, and prints what each side received and the relay's counters.
//
//	go run ./examples/demo
//
// It needs no flags and exits 0 when the exchange ran.
package main
