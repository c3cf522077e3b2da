// Package endpoint turns a reliability.Engine into a connection: the part
// of a connection that raknet and session share. A protocol plugs in only
// what is its own (RakNet's online handshake, connected pings and
// disconnection notification; netcode's encryption, keep-alives and
// disconnect packets) through the Protocol interface and the Hooks.
//
// Core is the sans-I/O state of one connection: the engine, the queue of
// received messages waiting for the reader and its buffer pool, receipts,
// dead-peer detection, graceful close and the linger after a peer's
// goodbye. It takes the time as an argument and never blocks.
//
// Conn wraps a Core for goroutines: blocking Read, ReadMessage,
// ReadMessageInto, Write, WriteMessage and ReadReceipt with working
// deadlines, and a graceful Close. A Conn is a driver.Task: the loop that
// drives it runs it at the Core's next wake-up, and received datagrams
// and API calls bring that time forward.
package endpoint
