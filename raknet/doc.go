// Package raknet speaks RakNet, the UDP protocol of the original C++
// RakNet library (protocol 6) and of Minecraft Bedrock (protocol 11).
//
// This package currently holds:
//
//   - the wire code for every offline message (unconnected ping and pong,
//     open connection request and reply 1 and 2, the refusals) and for the
//     online handshake messages that travel inside reliability frames
//     (connection request, connection request accepted, new incoming
//     connection, connected ping and pong, disconnection notification);
//   - the Bedrock MOTD pong-data format (BedrockMOTD);
//   - Ping, which asks a server for its GUID, round-trip time and pong
//     data, and AnswerPing, the pure offline responder that answers it;
//   - connections: Listen returns a Listener (a net.Listener) and Dial or
//     DialContext a Conn (a net.Conn), built on package reliability.
//
// # Connections
//
// A client probes the path MTU with open connection request 1 (1492, then
// 1200, then 576 bytes, four attempts each, 500 ms apart, as the original
// library does), echoes the server's cookie in request 2, and then runs the
// online handshake over the reliability engine: connection request,
// connection request accepted, new incoming connection. Refusals end a
// dial with a *RefusedError or *IncompatibleProtocolError that match
// sentinels such as ErrNoFreeIncomingConnections with errors.Is.
//
// A Listener answers pings with pong data that can change at run time
// (SetPongData), accepts a configured set of protocol versions (11 by
// default; add 6 for the original library), and by default sends a cookie
// in reply 1: a keyed hash of the source address and offered protocol
// under a rotating key, so that no state exists for a source before its
// request 2 proves it receives at its address. Offline messages are
// rate-limited per source, sources that send garbage are blocked for a
// while, and pending handshakes and connections are bounded; every drop
// is counted in ListenerStats. One goroutine reads the socket and hands
// datagrams to connections by source address; each connection has one
// goroutine for its timers.
//
// The protocol logic is sans-I/O, as in package reliability: the client
// and server handshake cores, the listener's admission rules (rate limit,
// block list, cookies, bounds, duplicates) and the per-connection session
// take the time as an argument and never touch a socket; the goroutine
// drivers around them are thin. Scenario tests run them on transport/simnet under
// testing/synctest (ListenConfig.Conn, DialConfig.Conn).
//
// A Conn carries user messages: Read and Write use reliable-ordered
// messages on channel 0; WriteMessage and ReadMessage choose the
// reliability, channel and priority, with receipts (ReadReceipt). In steady
// state Write, Read and ReadMessageInto allocate nothing per message: the
// engine copies what is written, and received messages wait for the reader
// in recycled buffers. ReadMessage hands each message over in a buffer of
// its own. Close
// sends a disconnection notification after the data already written and
// waits, boundedly, until the peer has acknowledged everything; the peer
// reads io.EOF. The peer acknowledges the notification at once and then
// lingers briefly to acknowledge resends, should that ACK be lost.
// Connected pings measure the RTT and keep idle connections alive; a peer
// silent for the dead-connection timeout (10 s) is lost.
//
// # Wire code
//
// Every message X, and the Address encoding, has the same three
// functions: (*X).Append(b) ([]byte, error) appends its encoding to b,
// failing only for a value no peer would read (pong data over
// MaxPongDataLen, more than MaxInternalAddresses, a refusal with another
// identifier); ParseX(b, &x) (int, error) decodes one X from the start of
// b into x, overwriting every field, and returns the bytes it used; and
// (*X).Len() is the encoded size. What a parse needs besides the bytes
// (ParseOpenConnectionRequest2's CookieMode) comes right after b.
// Parsers are pure: they never panic, never read past the input, allocate
// nothing, and report malformed input with one of the sentinel errors
// (ErrShortMessage, ErrWrongID, ErrBadMagic, ...), so a caller can count
// drops by reason. Byte slices in parsed messages (pong data, a connection
// request's password) alias the input, and internal address lists reuse
// the storage of the message parsed into.
//
// Where peers disagree, the parsers accept every known variant:
//
//   - Pong data is raw to the end of the datagram in the original library
//     and u16-length-prefixed in Bedrock and go-raknet; ParseUnconnectedPong
//     tells them apart (see its documentation) and reports which it found,
//     and UnconnectedPong.Encoding chooses how to write it.
//   - Open connection request 2 carries a cookie only when the server sent
//     one; ParseOpenConnectionRequest2 can be told which to expect or
//     detect it from the length.
//   - Connection request accepted and new incoming connection carry 10
//     internal addresses in the original library and 20 in Bedrock; the
//     parsers read addresses until the two trailing times remain.
//   - IPv6 addresses carry the sender's AF_INET6 value, which differs
//     between operating systems; all common values are accepted.
//
// The original library's optional libcat security (public keys,
// challenges, encryption) is not implemented; messages that ask for it
// yield ErrSecurityUnsupported.
package raknet
