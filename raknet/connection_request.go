package raknet

import (
	"encoding/binary"
	"net/netip"
)

// The online handshake. Its messages travel inside reliability frames
// once the open-connection handshake is done; only their payload encoding
// lives here.

// ConnectionRequest is the client's first message over the new connection.
// Layout: id, u64 BE client GUID, i64 BE time, u8 security (0), then an
// optional password to the end of the message.
type ConnectionRequest struct {
	ClientGUID uint64
	Time       int64
	// Password is what the original library's Connect call was given; it
	// is empty for Bedrock peers. After parsing it aliases the input.
	Password []byte
}

const connectionRequestLen = 1 + 8 + 8 + 1

// Len is the encoded size of r.
func (r *ConnectionRequest) Len() int { return connectionRequestLen + len(r.Password) }

// Append appends the encoded request to b. Every request encodes; the
// error is always nil.
func (r *ConnectionRequest) Append(b []byte) ([]byte, error) {
	b = append(b, IDConnectionRequest)
	b = appendU64(b, r.ClientGUID)
	b = appendU64(b, uint64(r.Time))
	b = append(b, 0)
	return append(b, r.Password...), nil
}

// ParseConnectionRequest decodes a connection request into r; the
// password runs to the end of b, so it uses all of b. A set security byte
// (libcat proof and identity follow) yields ErrSecurityUnsupported.
func ParseConnectionRequest(b []byte, r *ConnectionRequest) (int, error) {
	if err := checkID(b, IDConnectionRequest, connectionRequestLen); err != nil {
		return 0, err
	}
	if b[17] != 0 {
		return 0, ErrSecurityUnsupported
	}
	*r = ConnectionRequest{
		ClientGUID: binary.BigEndian.Uint64(b[1:]),
		Time:       int64(binary.BigEndian.Uint64(b[9:])),
	}
	if len(b) > connectionRequestLen {
		r.Password = b[connectionRequestLen:len(b):len(b)]
	}
	return len(b), nil
}

// MaxInternalAddresses is the most internal addresses a connection request
// accepted or new incoming connection may carry: Minecraft Bedrock's 20.
const MaxInternalAddresses = 20

// InternalAddressCount is how many internal addresses to send to a peer
// speaking protocol: 10 for the original library (protocol 6), 20 for
// Bedrock (protocol 10 and later).
//
// The count matters because the original library reads exactly its own
// MAXIMUM_NUMBER_OF_INTERNAL_IDS (10) addresses and then the two times, so
// 20 addresses would make it read address bytes as times and corrupt its
// first RTT sample; Bedrock builds use 20. go-raknet reads addresses until
// 16 bytes remain, up to 20, so it takes either count, and so do the
// parsers here.
func InternalAddressCount(protocol uint8) int {
	if protocol < 10 {
		return 10
	}
	return 20
}

// Both connection request accepted and new incoming connection end with
// the sender's internal addresses and two i64 BE times; the functions
// below read and write that end.

// parseAddressesAndTimes reads addresses from b until exactly the 16
// bytes of the two times remain, then the times; it uses all of b. The
// addresses go into list[:0], whose storage grows at most once: no more
// than this many fit, IPv4 being the shortest form.
func parseAddressesAndTimes(b []byte, list []netip.AddrPort) ([]netip.AddrPort, int64, int64, error) {
	if fit := min(MaxInternalAddresses, max(0, len(b)-16)/addressLen4); cap(list) < fit {
		list = make([]netip.AddrPort, 0, fit)
	}
	list = list[:0]
	for len(b) > 16 {
		if len(list) == MaxInternalAddresses {
			return list, 0, 0, ErrTooManyAddresses
		}
		a, n, err := parseAddress(b)
		if err != nil {
			return list, 0, 0, err
		}
		list = append(list, a)
		b = b[n:]
	}
	if len(b) < 16 {
		return list, 0, 0, ErrShortMessage
	}
	return list, int64(binary.BigEndian.Uint64(b)), int64(binary.BigEndian.Uint64(b[8:])), nil
}

func addressesAndTimesLen(list []netip.AddrPort) int {
	n := 16
	for _, a := range list {
		n += addressLen(a)
	}
	return n
}

func appendAddressesAndTimes(b []byte, list []netip.AddrPort, t1, t2 int64) []byte {
	for _, a := range list {
		b = appendAddress(b, a)
	}
	b = appendU64(b, uint64(t1))
	return appendU64(b, uint64(t2))
}

// ConnectionRequestAccepted is the server's answer to a connection
// request. Layout: id, client address, u16 BE system index, N internal
// addresses, i64 BE request time (echoed), i64 BE reply time.
type ConnectionRequestAccepted struct {
	ClientAddress netip.AddrPort
	SystemIndex   uint16
	// InternalAddresses are the server's own addresses, padded with
	// 0.0.0.0:0; see InternalAddressCount for how many to send. At most
	// MaxInternalAddresses.
	InternalAddresses []netip.AddrPort
	RequestTime       int64
	ReplyTime         int64
}

// Len is the encoded size of m.
func (m *ConnectionRequestAccepted) Len() int {
	return 1 + addressLen(m.ClientAddress) + 2 + addressesAndTimesLen(m.InternalAddresses)
}

// Append appends the encoded message to b, with every internal address in
// m.InternalAddresses. It fails with ErrTooManyAddresses past
// MaxInternalAddresses.
func (m *ConnectionRequestAccepted) Append(b []byte) ([]byte, error) {
	if len(m.InternalAddresses) > MaxInternalAddresses {
		return b, ErrTooManyAddresses
	}
	b = append(b, IDConnectionRequestAccepted)
	b = appendAddress(b, m.ClientAddress)
	b = appendU16(b, m.SystemIndex)
	return appendAddressesAndTimes(b, m.InternalAddresses, m.RequestTime, m.ReplyTime), nil
}

// ParseConnectionRequestAccepted decodes the message into m, reading
// internal addresses until the 16 bytes of the two times remain, so 10 and
// 20 addresses are both understood; it uses all of b. The addresses go
// into m.InternalAddresses' storage, which a caller parsing into the same
// m again reuses.
func ParseConnectionRequestAccepted(b []byte, m *ConnectionRequestAccepted) (int, error) {
	if err := checkID(b, IDConnectionRequestAccepted, 1); err != nil {
		return 0, err
	}
	addr, n, err := parseAddress(b[1:])
	if err != nil {
		return 0, err
	}
	rest := b[1+n:]
	if len(rest) < 2 {
		return 0, ErrShortMessage
	}
	list, t1, t2, err := parseAddressesAndTimes(rest[2:], m.InternalAddresses)
	if err != nil {
		return 0, err
	}
	*m = ConnectionRequestAccepted{
		ClientAddress:     addr,
		SystemIndex:       binary.BigEndian.Uint16(rest),
		InternalAddresses: list,
		RequestTime:       t1,
		ReplyTime:         t2,
	}
	return len(b), nil
}

// NewIncomingConnection is the client's last handshake message. Layout:
// id, server address, N internal addresses, i64 BE time, i64 BE time.
type NewIncomingConnection struct {
	ServerAddress netip.AddrPort
	// InternalAddresses are the client's own addresses; see
	// ConnectionRequestAccepted.InternalAddresses.
	InternalAddresses []netip.AddrPort
	// PingTime echoes ConnectionRequestAccepted.ReplyTime and PongTime is
	// the client's clock when it sent this message, so the server gets a
	// first RTT sample.
	PingTime int64
	PongTime int64
}

// Len is the encoded size of m.
func (m *NewIncomingConnection) Len() int {
	return 1 + addressLen(m.ServerAddress) + addressesAndTimesLen(m.InternalAddresses)
}

// Append appends the encoded message to b. It fails with
// ErrTooManyAddresses past MaxInternalAddresses.
func (m *NewIncomingConnection) Append(b []byte) ([]byte, error) {
	if len(m.InternalAddresses) > MaxInternalAddresses {
		return b, ErrTooManyAddresses
	}
	b = append(b, IDNewIncomingConnection)
	b = appendAddress(b, m.ServerAddress)
	return appendAddressesAndTimes(b, m.InternalAddresses, m.PingTime, m.PongTime), nil
}

// ParseNewIncomingConnection decodes the message into m, reading internal
// addresses until 16 bytes remain, into m.InternalAddresses' storage as
// ParseConnectionRequestAccepted does.
func ParseNewIncomingConnection(b []byte, m *NewIncomingConnection) (int, error) {
	if err := checkID(b, IDNewIncomingConnection, 1); err != nil {
		return 0, err
	}
	addr, n, err := parseAddress(b[1:])
	if err != nil {
		return 0, err
	}
	list, t1, t2, err := parseAddressesAndTimes(b[1+n:], m.InternalAddresses)
	if err != nil {
		return 0, err
	}
	*m = NewIncomingConnection{ServerAddress: addr, InternalAddresses: list, PingTime: t1, PongTime: t2}
	return len(b), nil
}
