// Package relay is a UDP relay that impairs the traffic it carries. It sits
// between real processes, for example a game client and a server, applies a
// transport.Impairment to each direction (latency, jitter, loss,
// duplication, reordering, a bandwidth cap, an MTU) with the same Shaper as
// the simulated network in transport/simnet, and counts what it did.
//
// Each client source address gets its own upstream socket, so the target
// sees one peer per client. The client table is bounded and idle clients
// expire. The runnable program examples/netsim wraps a Relay.
package relay
