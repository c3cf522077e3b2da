// Package netcode implements netcode 1.02, the secure client/server
// connection protocol of netcode.io, wire-compatible with the C reference
// implementation.
//
// A web backend that has authenticated a player calls GenerateConnectToken
// with the private key it shares with the game servers, and hands the
// 2048-byte token to the client (EncodeTokenBase64 suits a REST API). The
// client sends the token's sealed private part in a connection request; the
// server opens it, answers with a challenge, and once the client echoes the
// challenge the two exchange encrypted keep-alive, payload and disconnect
// packets under the per-connection keys the token carried.
//
// # Wire layer
//
// The wire layer is pure: no I/O, no clock, no state beyond what is passed
// in. Every wire type X has the same three functions: (*X).Append(b, ...)
// appends its encoding and returns an error for a value that cannot be
// encoded; ParseX(b, ..., x) parses into x, overwriting every field, and
// returns the bytes it used; (*X).Len() is the encoded size. What a type
// needs besides its bytes comes after b: Packet.Append takes the
// PacketCipher, ParsePacket the cipher, the accepted types and the replay
// window, and ParseRequestPacket the protocol id and the current unix time.
//
// RequestPacket is the one packet sent in the clear; Packet covers the six
// encrypted types, which Append seals and ParsePacket opens. A packet is a
// whole datagram, so the parsers take exactly one. ConnectToken is what a
// backend hands a client. ConnectTokenPrivate and ChallengeToken are, as
// in the reference, encoded as plaintext and then sealed: TokenCipher and
// ChallengeCipher seal and open them. Addresses appear only inside tokens
// and have no wire type of their own.
//
// Parsers treat all input as hostile. They never panic, reject on size,
// type, version, protocol id and expiry before any cryptography, and return
// sentinel errors (ErrPacketSize, ErrDecrypt, ...) without allocating.
// ParsePacket follows the reference order: replay check, decryption,
// replay window advance (only after a successful decrypt), then the
// per-type size check. The payload path appends into caller buffers and
// decrypts in place with ciphers built once per key, so it does not
// allocate.
//
// # Server
//
// Server is the sans-I/O server core for game loops: Receive(datagram,
// from, now) for each datagram, Update(now) every tick, then send what
// Outgoing returns and drain Events and each slot's ReceivePayload. It
// takes the time as an argument and never touches a socket, so every rule
// is testable with explicit times. A driver without a tick calls Update
// at NextTimeout instead, which says, in constant time, when the next
// keep-alive or timeout is due. ListenServer wraps it for services: a
// ServerConn runs it over a transport.Conn with its own goroutines and
// offers blocking, context-aware Receive and NextEvent. It runs Update
// only when NextTimeout comes, so an idle server does not wake at all,
// rides out isolated read errors such as ICMP errors reported on a UDP
// socket, backs off when reads keep failing, and gives up after about 5 s
// of failures with an error wrapping ErrTransportFailed rather than spin.
//
// The server processes connection requests in the standard's order and
// answers with packets smaller than the request. It keeps a connect-token
// history with one session per token (a pending token accepts retries only
// from its address; a consumed one nothing more until it expires), refuses
// tokens minted before its last Start (the restart rule, see
// ServerConfig.MaxTokenLifetime), draws a new challenge key and resets its
// global sequence to 1<<63 at every Start, prefixes payloads with
// keep-alives until a client is confirmed, sends keep-alives at 10 Hz,
// times clients out when last receive + timeout <= now (never if the
// token's timeout is zero or negative), and counts every dropped packet by
// reason.
// Slots are found by address and by client id through maps, so thousands of
// clients cost no more per packet than a few.
//
// # Client
//
// Client is the sans-I/O client core. Connect(token, now) validates the
// public connect token and starts the handshake; then Receive, Update and
// Outgoing drive it exactly as they drive a Server. It walks the standard's
// ten states (ClientState, from ClientConnectTokenExpired at -6 to
// ClientConnected at 3): it sends connection requests, then responses, at
// 10 Hz, fails over to the token's next server address when one denies it
// or stays silent, measures token expiry as the token's lifetime counted
// from the start of Connect, keeps the connection alive with keep-alives,
// and sends ten redundant disconnect packets on Disconnect. A terminal
// state maps to a sentinel error through ClientState.Err.
//
// Dial wraps a Client for services: it blocks until the client is
// connected, fails, or the context ends, and returns a goroutine-safe
// ClientConn whose Receive blocks with a context and whose Close
// disconnects cleanly. Like ServerConn it runs Update when the client's
// NextTimeout comes, and treats read errors the same way.
//
// # Server addresses
//
// A token holds two address lists. The public part lists the addresses the
// client dials (TokenParams.PublicAddresses). The private part lists the
// addresses the servers know themselves by (TokenParams.InternalAddresses,
// the same list when nil), and a server accepts a token only if its
// configured public address is among them. That address is not necessarily
// the one the server binds: a server bound to 0.0.0.0:40000 and reached at
// 203.0.113.5:40000 is configured with the latter, which the backend puts in
// its tokens.
package netcode
