// Package simnet is an in-memory datagram network for tests: any number of
// endpoints, each with its own address, joined by links that apply a
// transport.Impairment per direction (latency, jitter, loss, duplication,
// reordering, a bandwidth cap, an MTU).
//
// A Network is deterministic for a given seed: each directed link has its
// own PRNG, seeded from the network seed and the two addresses, so the fate
// of the datagrams on one link does not depend on traffic on any other.
// Delivery runs on timers from package time, so a Network created inside a
// testing/synctest bubble runs entirely on the fake clock and a scenario
// covering minutes of network time takes milliseconds. A datagram due at
// time T is delivered by a timer firing at T, so a goroutine that wakes at
// exactly T (say from time.Sleep) may look before it arrives: call
// synctest.Wait first, or read with a blocking ReadFrom.
//
// Endpoints (*Conn) implement transport.Conn. Datagrams are copied on
// write. Each endpoint holds at most a bounded number of datagrams for its
// reader (see SetReceiveQueue); arrivals beyond that are dropped and
// counted, as are datagrams to addresses nobody listens on. At most 65536
// datagrams may be in flight (delayed) across the whole network; more are
// dropped and counted as DroppedQueue.
package simnet
