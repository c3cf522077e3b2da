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
//     data, and AnswerPing, the pure offline responder that answers it.
//
// Connections (Listen, Dial, Conn) are built on package reliability and are
// not part of the package yet.
//
// # Wire code
//
// Each message is a struct with an Append method that appends its encoding
// to a byte slice, a Len method giving the encoded size, and a Parse
// function that decodes it. Parsers are pure: they never panic, never read
// past the input, and report malformed input with one of the sentinel
// errors (ErrShortMessage, ErrWrongID, ErrBadMagic, ...), so a caller can
// count drops by reason without allocating. Byte slices in parsed messages
// (pong data, a connection request's password) alias the input.
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
