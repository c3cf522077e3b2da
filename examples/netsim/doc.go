// Command netsim is a UDP relay that impairs the traffic it carries, so real
// programs, including third-party peers, can be tested under loss, latency,
// jitter, duplication, reordering, a bandwidth cap and an MTU.
//
// Clients send to -listen; netsim forwards to -target from a separate
// socket per client, and relays the replies back. The impairment flags
// apply to both directions; the -up-* flags (client to target) and -down-*
// flags (target to client) override them for one direction. On SIGINT or
// SIGTERM netsim prints its counters and exits.
//
//	go run ./examples/netsim -listen 127.0.0.1:19000 -target 127.0.0.1:19132 \
//	    -loss 0.05 -latency 20ms -jitter 5ms -dup 0.01
package main
