package raknet

import "errors"

// ErrNotAccepting is returned by AnswerPing for an "open connections only"
// ping (0x02) while the server accepts no connections: the original
// library leaves such pings unanswered.
var ErrNotAccepting = errors.New("raknet: not accepting connections")

// PongResponse is what a server answers unconnected pings with.
type PongResponse struct {
	ServerGUID uint64
	// Data is the advertisement, at most MaxPongDataLen bytes on the wire
	// (two of them taken by the length prefix with PongPrefixed).
	Data     []byte
	Encoding PongEncoding
	// NotAccepting makes the server ignore 0x02 pings, which ask for an
	// answer only from servers that accept connections.
	NotAccepting bool
}

// AnswerPing is the offline responder: if ping is an unconnected ping it
// appends the pong that answers it to dst. It returns the parse error for
// anything else, ErrNotAccepting for a 0x02 ping that gets no answer, and
// ErrPongDataTooLong if r.Data does not fit.
//
// A pong is inherently larger than the 33-byte ping it answers (33 bytes
// of header plus the data), so a spoofed ping makes a server send more than
// it received. MaxPongDataLen bounds that: the largest pong is 432 bytes,
// about 13 times the ping. A listener should rate-limit pongs per source on
// top of this.
func AnswerPing(dst, ping []byte, r *PongResponse) ([]byte, error) {
	var p UnconnectedPing
	if _, err := ParseUnconnectedPing(ping, &p); err != nil {
		return dst, err
	}
	if p.OpenConnectionsOnly && r.NotAccepting {
		return dst, ErrNotAccepting
	}
	pong := UnconnectedPong{SendTime: p.SendTime, ServerGUID: r.ServerGUID, Data: r.Data, Encoding: r.Encoding}
	return pong.Append(dst)
}
