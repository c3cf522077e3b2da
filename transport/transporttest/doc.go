// Package transporttest checks that an implementation of transport.Conn
// keeps the interface's contract: datagram boundaries, truncation, source
// addresses, Close and deadline semantics, and concurrent writers. netrak
// runs it against UDP and the simulated network; anyone bringing their own
// Conn can run it too.
package transporttest
