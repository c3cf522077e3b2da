// Package transporttest checks that an implementation of transport.Conn
// keeps the interface's contract: datagram boundaries, truncation, source
// addresses, Close and deadline semantics, and concurrent writers. netrak
// runs it against UDP and the simulated network; anyone bringing their own
// Conn can run it too.
//
// ProbeLoss measures the loss of a path between real sockets, such as the
// impairment relay, without ever overrunning a socket buffer, so the
// figure does not depend on the machine's speed or its buffer limits.
package transporttest
