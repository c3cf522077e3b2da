// Command netcode-client is a netcode 1.02 client that follows the demo
// convention of the reference programs, so it interoperates with the
// reference server and with examples/netcode-server.
//
//	go run ./examples/netcode-client -count 300
//
// Without -token it mints its own connect token, as the reference client
// does: a random client id, the server address from -addr, the test key of
// the netcode README, protocol id 0x1122334455667788, 30 s expiry and a 5 s
// timeout. With -token FILE it reads a 2048-byte token instead, and
// connects to the servers that token lists.
//
// Once connected it sends a 1200-byte payload with byte i = i mod 256, 60
// times a second, and counts the payloads it receives that carry the same
// pattern. It prints one line when it connects (with its slot) and one
// when it disconnects (with the reason), then "N passed, M failed".
//
// With -count N it disconnects cleanly and exits 0 after N matching
// payloads. It exits 1 if it cannot connect, if the connection ends in an
// error (denied, timed out, ...) or, with -count, ends before N payloads,
// on any payload that does not match, and when -timeout passes first
// (default 30 s; 0 means no limit). Without -count it runs until the
// connection ends, it is interrupted (exit 0) or -timeout passes (exit 1).
package main
