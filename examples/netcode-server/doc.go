// Command netcode-server is a netcode 1.02 server that follows the demo
// convention of the reference programs, so it interoperates with the
// reference client and with examples/netcode-client.
//
//	go run ./examples/netcode-server -count 300
//
// By default it listens on 127.0.0.1:40000 for tokens sealed with the test
// key of the netcode README under protocol id 0x1122334455667788. To every
// connected client it sends a 1200-byte payload with byte i = i mod 256,
// 60 times a second, and counts the payloads it receives that carry the
// same pattern. It prints one line per connect and disconnect and, at the
// end, "N passed, M failed".
//
// With -count N it exits 0 once it has received N matching payloads and
// no client is connected any more; without it, it runs until interrupted
// (exit 0). It gives up with exit 1 when -timeout passes first (default
// 30 s; 0 means no limit), and exits 1 on a payload that does not match.
package main
