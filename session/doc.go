// Package session is the combined stack: netcode 1.02's secure
// connections carrying RakNet's reliability layer. A game that admits
// players with connect tokens from its web backend gets encrypted,
// authenticated packets, replay protection and client slots from netcode,
// and RakNet's eight delivery guarantees, 32 ordering channels,
// priorities and split messages of up to 4 MiB from the reliability
// engine.
//
// # Wire
//
// Each netcode payload packet carries exactly one RakNet datagram (data,
// ACK or NAK), encrypted and signed by netcode. The engine's MTU is set so
// that its longest datagram fills netcode's 1200-byte payload exactly
// (EngineMTU); a datagram is never fragmented across payloads. Netcode's
// handshake, keep-alives and disconnect packets travel outside the
// engine, and keep-alives go out only while no payload (data or ACK) has
// been sent to the peer for a tenth of a second, so a busy connection
// carries none. docs/protocols.md counts the bytes each layer adds.
//
// # Server and client
//
// Listen serves on a transport.Conn (ListenUDP on an address) and returns
// a Listener, a net.Listener whose Accept yields a *Conn per client that
// completed netcode's handshake, with its client id, slot and the 256
// bytes of user data from its token. NextEvent reports connects and
// disconnects with their reason. Dial connects with a connect token,
// trying the token's servers in turn, and returns a *Conn; it fails with
// netcode's errors (denied, token expired, request or response timed out,
// invalid token), which errors.Is matches.
//
// A server runs one goroutine reading its socket and one running every
// timer (netcode's keep-alives and timeouts, each engine's resends, ACKs
// and pacing) at the earliest deadline, never on a fixed tick, all under
// one lock. A client does the same for its one connection.
//
// # Connections
//
// Conn has the shape of raknet.Conn: WriteMessage with a reliability,
// channel and priority; receipts with ReadReceipt; ReadMessage and the
// allocation-free ReadMessageInto; and Read and Write as a net.Conn on
// reliable-ordered channel 0, with deadlines. Close is graceful: it waits
// until the peer has acknowledged everything written, then sends
// netcode's disconnect packets, and the peer reads io.EOF after the last
// message. A silent peer times out after the token's timeout
// (ErrTimedOut); reliable data left unacknowledged for the engine's dead
// timeout ends the connection with ErrConnectionLost.
package session
