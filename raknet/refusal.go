package raknet

import "encoding/binary"

// Refusal is one of the offline messages a server sends instead of
// accepting a connection: connection attempt failed (0x11), already
// connected (0x12), no free incoming connections (0x14), connection banned
// (0x17) or IP recently connected (0x1a). In the original library (4.081)
// all of them carry the same body: id, magic, u64 BE GUID of the sender.
// It sends 0x11 only as a local notification, but reads it from the wire
// with this layout, so it is handled alike.
type Refusal struct {
	ID   byte
	GUID uint64
}

const refusalLen = 1 + 16 + 8

// IsRefusalID reports whether id is one of the identifiers a Refusal
// carries.
func IsRefusalID(id byte) bool {
	switch id {
	case IDConnectionAttemptFailed, IDAlreadyConnected, IDNoFreeIncomingConnections,
		IDConnectionBanned, IDIPRecentlyConnected:
		return true
	}
	return false
}

// Len is the encoded size of r.
func (r *Refusal) Len() int { return refusalLen }

// Append appends the encoded refusal to b. It fails with ErrWrongID when
// ID is not one IsRefusalID accepts, since no peer would read it as a
// refusal.
func (r *Refusal) Append(b []byte) ([]byte, error) {
	if !IsRefusalID(r.ID) {
		return b, ErrWrongID
	}
	b = append(b, r.ID)
	b = append(b, offlineMagic[:]...)
	return appendU64(b, r.GUID), nil
}

// ParseRefusal decodes a refusal into r; trailing bytes are left unread.
func ParseRefusal(b []byte, r *Refusal) (int, error) {
	if len(b) == 0 {
		return 0, ErrShortMessage
	}
	if !IsRefusalID(b[0]) {
		return 0, ErrWrongID
	}
	if err := checkHeader(b, b[0], 1, refusalLen); err != nil {
		return 0, err
	}
	*r = Refusal{ID: b[0], GUID: binary.BigEndian.Uint64(b[17:])}
	return refusalLen, nil
}

// IncompatibleProtocolVersion answers a request 1 whose protocol the server
// does not speak. Layout: id, u8 server protocol, magic, u64 BE server
// GUID; 26 bytes exactly, as the original library requires.
type IncompatibleProtocolVersion struct {
	Protocol   uint8
	ServerGUID uint64
}

const incompatibleProtocolVersionLen = 1 + 1 + 16 + 8

// Len is the encoded size of m.
func (m *IncompatibleProtocolVersion) Len() int { return incompatibleProtocolVersionLen }

// Append appends the encoded message to b. Every message encodes; the
// error is always nil.
func (m *IncompatibleProtocolVersion) Append(b []byte) ([]byte, error) {
	b = append(b, IDIncompatibleProtocolVersion, m.Protocol)
	b = append(b, offlineMagic[:]...)
	return appendU64(b, m.ServerGUID), nil
}

// ParseIncompatibleProtocolVersion decodes the message into m; any other
// length than 26 bytes is rejected, as the original library does.
func ParseIncompatibleProtocolVersion(b []byte, m *IncompatibleProtocolVersion) (int, error) {
	if err := checkHeader(b, IDIncompatibleProtocolVersion, 2, incompatibleProtocolVersionLen); err != nil {
		return 0, err
	}
	if len(b) != incompatibleProtocolVersionLen {
		return 0, ErrBadLength
	}
	*m = IncompatibleProtocolVersion{Protocol: b[1], ServerGUID: binary.BigEndian.Uint64(b[18:])}
	return incompatibleProtocolVersionLen, nil
}
