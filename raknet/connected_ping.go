package raknet

import "encoding/binary"

// ConnectedPing measures RTT over an open connection, inside a reliability
// frame. Layout: id, i64 BE time.
type ConnectedPing struct {
	Time int64
}

const connectedPingLen = 1 + 8

// Len is the encoded size of p.
func (p *ConnectedPing) Len() int { return connectedPingLen }

// Append appends the encoded ping to b. Every ping encodes; the error is
// always nil.
func (p *ConnectedPing) Append(b []byte) ([]byte, error) {
	return appendU64(append(b, IDConnectedPing), uint64(p.Time)), nil
}

// ParseConnectedPing decodes a connected ping into p; like the original
// library it requires the exact length.
func ParseConnectedPing(b []byte, p *ConnectedPing) (int, error) {
	if err := checkExact(b, IDConnectedPing, connectedPingLen); err != nil {
		return 0, err
	}
	p.Time = int64(binary.BigEndian.Uint64(b[1:]))
	return connectedPingLen, nil
}

// ConnectedPong answers a connected ping. Layout: id, i64 BE echoed ping
// time, i64 BE pong time.
type ConnectedPong struct {
	PingTime int64
	PongTime int64
}

const connectedPongLen = 1 + 8 + 8

// Len is the encoded size of p.
func (p *ConnectedPong) Len() int { return connectedPongLen }

// Append appends the encoded pong to b. Every pong encodes; the error is
// always nil.
func (p *ConnectedPong) Append(b []byte) ([]byte, error) {
	b = appendU64(append(b, IDConnectedPong), uint64(p.PingTime))
	return appendU64(b, uint64(p.PongTime)), nil
}

// ParseConnectedPong decodes a connected pong into p; like the original
// library it requires the exact length.
func ParseConnectedPong(b []byte, p *ConnectedPong) (int, error) {
	if err := checkExact(b, IDConnectedPong, connectedPongLen); err != nil {
		return 0, err
	}
	*p = ConnectedPong{
		PingTime: int64(binary.BigEndian.Uint64(b[1:])),
		PongTime: int64(binary.BigEndian.Uint64(b[9:])),
	}
	return connectedPongLen, nil
}
