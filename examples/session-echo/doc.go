// Command session-echo is an echo server for the session layer (netcode
// 1.02 connections carrying RakNet's reliability layer) and a client that
// checks it. Both sides use the netcode reference programs' demo key and
// protocol id (examples/internal/refdemo), so the client mints its own
// connect tokens as a web backend would.
//
// Server mode echoes every message back with the reliability and channel
// it arrived with, and prints a line for each client that connects or
// disconnects:
//
//	go run ./examples/session-echo -listen 127.0.0.1:40000 [-max-clients 256]
//
// It runs until interrupted (SIGINT or SIGTERM), or for -timeout if that
// is given, and exits 0. Behind a wildcard address it needs -public, the
// address the clients' tokens name:
//
//	go run ./examples/session-echo -listen 0.0.0.0:40000 -public 192.0.2.7:40000
//
// Client mode dials with a fresh token, sends -count messages and checks
// the echoes:
//
//	go run ./examples/session-echo -connect 127.0.0.1:40000 [-count 100] [-timeout 30s]
//
// Message i travels as the i mod 8'th entry of: reliable-ordered on
// channel 0, reliable, reliable-ordered on channel 1, unreliable-sequenced
// on channel 4, reliable-ordered on channel 2, unreliable, reliable-ordered
// on channel 3, reliable. Reliable messages cycle through 11 sizes from
// 1 byte to 64 KiB, so that some are split across many datagrams;
// unreliable ones cycle through 4 to 1000 bytes and always fit one
// datagram (a split unreliable message would travel reliably). A message
// of 4 bytes or more starts with its index as a little-endian u32; every
// other byte k is (i*31 + k*7 + 1) mod 256.
//
// Every reliable message must come back byte for byte, with the
// reliability and channel it was sent with, and the reliable-ordered ones
// in the order they were sent on their channel. The client's last line is
// "N passed, M failed": N counts the reliable messages whose echo checked
// out, M those whose echo did not (or never came), plus any reliable echo
// that matches nothing sent. Unreliable echoes may be lost; the line
// before says how many came back, and that the sequenced ones never went
// backwards.
//
// The client exits 0 only if every reliable echo checked out and no
// unreliable echo was malformed or out of sequence; 1 otherwise, also when
// the connection fails or -timeout passes first; 2 on bad usage. -h lists
// the flags.
//
// To see the reliability layer at work, put examples/netsim in between and
// name the server's own address with -internal (the token's internal
// address, which the server checks against its own):
//
//	go run ./examples/netsim -listen 127.0.0.1:19000 -target 127.0.0.1:40000 -loss 0.05 -latency 20ms
//	go run ./examples/session-echo -connect 127.0.0.1:19000 -internal 127.0.0.1:40000 -count 500
package main
