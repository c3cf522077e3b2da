// Package transport moves datagrams. Every protocol layer in netrak reads
// and writes through a Conn instead of opening sockets itself, so the same
// protocol code runs over real UDP (ListenUDP), over the in-memory simulated
// network in transport/simnet, or through the impairment relay in
// transport/relay. ReadContext lets a context stop a blocked read, and
// transport/transporttest checks any Conn against the contract.
//
// The package also holds what the simulator and the relay share: Impairment,
// the description of what one direction of a path does to datagrams
// (latency, jitter, loss, duplication, reordering, a bandwidth cap, an MTU);
// Shaper, which turns an Impairment and a seeded PRNG into a deterministic
// fate per datagram; and ImpairmentCounters and ImpairmentStats, which
// record what happened to them.
package transport
