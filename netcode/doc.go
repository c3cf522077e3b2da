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
// in. ConnectToken, ConnectTokenPrivate and ChallengeToken encode with
// AppendBinary and decode with UnmarshalBinary; TokenCipher and
// ChallengeCipher seal and open the encrypted tokens. RequestPacket is the
// one packet sent in the clear; Packet covers the six encrypted types, with
// Packet.Append to seal and ReadPacket to open.
//
// Readers treat all input as hostile. They never panic, reject on size,
// type, version, protocol id and expiry before any cryptography, and return
// sentinel errors (ErrPacketSize, ErrDecrypt, ...) without allocating.
// ReadPacket follows the reference order: replay check, decryption, replay
// window advance (only after a successful decrypt), then the per-type size
// check. The payload path appends into caller buffers and decrypts in place
// with ciphers built once per key, so it does not allocate.
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
