// Package rakwire encodes and parses RakNet's connected datagrams, as the
// original C++ library (RakNet 4.081) writes them: the wire code of
// package reliability, whose engine is its only user besides tests.
// Offline messages and the online handshake's messages are package
// raknet's.
//
// A connected datagram starts with a flags byte whose top bit (0x80,
// HeaderValid) is set; offline messages never set it. ClassifyDatagram
// tells the three kinds apart, testing the ACK bit (0x40) before the NAK
// bit (0x20), which in an ACK means "has B and AS":
//
//   - Data datagrams: a DataHeader (flags, then the datagram number as a
//     24-bit little-endian integer) followed by frames packed up to the
//     MTU, read with a FrameReader. The flags are valid, packet pair
//     (0x10), continuous send (0x08) and needs B and AS (0x04).
//   - ACK datagrams (Ack): the datagram numbers received, as a range list,
//     optionally preceded by the big-endian float AS.
//   - NAK datagrams (Ack with NAK set): the numbers found missing.
//
// A range list is a u16 BE record count, then per record a flag (1: single
// number), a u24 LE minimum and, for a range, a u24 LE maximum. A Frame is
// one message, or one part of a split message: flags (reliability<<5 |
// split<<4), the payload length in bits, and the reliable message index,
// sequencing index, ordering index and channel, and split count, id and
// index, each present only when its kind needs it (see FrameHeaderLen).
// All counters on the wire are 24 bits wide and wrap.
//
// Every type X here has the shape of docs/architecture.md ("One wire
// shape"): X.Append(b) ([]byte, error) appends the encoding, and a value
// that cannot be encoded (an empty or oversized payload, a number past 24
// bits, an inverted range) is an error, never a panic, with b returned
// unchanged; ParseX(b, *X) (int, error) overwrites every field of *X and
// returns the bytes used; X.Len() is the encoded length. Everything is a
// pure function: no I/O, no clock, no state. Parsers never panic and never
// allocate: parsed frames alias the datagram, and ACK ranges are returned
// as ranges, never expanded, so a hostile range naming 2^24 numbers costs
// no more than any other. Errors are sentinels (ErrTruncated,
// ErrFrameChannel, ...) for errors.Is; none is ever sent to the peer.
package rakwire
