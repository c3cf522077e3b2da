// Package driver holds the goroutine side shared by every protocol of
// netrak: the loop that runs the timers of sans-I/O cores, the loop that
// reads a transport, and the signal that wakes a blocked waiter.
//
// The protocol cores (netcode's Client and Server, the reliability engines
// behind raknet and session connections) never read a clock and never
// block; they say when they next need to run. A Loop is one goroutine that
// sleeps until the earliest of those times across every task it drives,
// runs the tasks that are due, and sleeps again: an idle server costs
// nothing, and a busy one wakes exactly when some timer is due, never on a
// fixed tick. A Reader pulls datagrams from a transport.Conn, riding out
// isolated errors and giving up, with ErrTransportFailed, on a transport
// whose reads keep failing instead of spinning a core.
package driver
