// Command raknet-echo is a RakNet echo server and a client that checks it.
//
// Server mode echoes every user message (identifier 0x86 or above) back,
// reliable-ordered on channel 0:
//
//	go run ./examples/raknet-echo -listen 0.0.0.0:19132 [-pong TEXT] [-protocols 6,10,11]
//
// Client mode connects, sends -count reliable-ordered user messages whose
// sizes cycle through 5, 5, 100, 576, 1400, 1500, 5000 and 70000 bytes
// (byte 0 is 0x86, bytes 1..4 the index as a little-endian u32, byte k >= 5
// is (index*31 + k*7) mod 256), checks every echo in order and prints
// "N passed, M failed":
//
//	go run ./examples/raknet-echo -connect HOST:PORT [-count 100] [-protocol 11] [-timeout 30s]
//
// The client exits 0 only if every echo came back intact, 1 otherwise
// (also when -timeout passes first), 2 on bad usage. Use -protocol 6 for
// a server built on the original C++ library.
package main
