// Package reliability implements RakNet's reliability layer: the part of
// the protocol that turns unreliable UDP datagrams into messages delivered
// with one of eight guarantees, wire-compatible with the original RakNet C++
// library (4.081) and with Minecraft Bedrock peers.
//
// It is sans-I/O. The package never opens a socket, starts a goroutine or
// reads a clock: the layer above (package raknet for plain RakNet peers,
// package session inside netcode payloads) hands it each received datagram
// together with the current time, asks it for the datagrams to send, and
// collects the messages it delivers. That keeps every behaviour, timeouts
// included, testable deterministically.
//
// # Wire format
//
// A connected datagram starts with a flags byte whose top bit (0x80) is set;
// offline messages, handled by package raknet, never set it. There are three
// kinds, told apart by ClassifyDatagram:
//
//   - data datagrams: a DataHeader (flags and a 24-bit datagram number)
//     followed by frames packed up to the MTU. A Frame is one message, or one
//     part of a split message, with the indexes its Reliability needs.
//   - ACK datagrams: ranges of datagram numbers received (Ack).
//   - NAK datagrams: ranges of datagram numbers found missing (Ack with NAK).
//
// Every wire type has an Append method, a parse function and a length
// function. Parsers are pure, never panic, and never allocate: parsed frames
// alias the datagram (see FrameReader), and ACK ranges are returned as
// ranges, never expanded, so a hostile range naming 2^24 numbers costs no
// more than any other. All counters on the wire are 24 bits wide and wrap;
// they are compared with serial-number arithmetic.
//
// # Delivery
//
// The eight reliabilities are RakNet's: unreliable, unreliable sequenced,
// reliable, reliable ordered, reliable sequenced, and three "with ack
// receipt" kinds that tell the sender the message's fate. Reliable messages
// are resent until acknowledged and deduplicated by a window of reliable
// message indexes; ordered ones are held until the gap before them fills;
// sequenced ones drop anything older than the newest delivered. Each
// direction has 32 ordering channels with their own indexes. Messages larger
// than a datagram are split, and reassembled within configurable limits so
// that a hostile peer cannot exhaust memory.
//
// Malformed input from the network is dropped and counted by reason; it
// never produces an error the peer can observe and never panics.
package reliability
