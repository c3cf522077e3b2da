package endpoint

import "github.com/netrak/netrak/reliability"

// Message is a user message received on a connection.
type Message struct {
	// Data is the message. The caller owns it: from ReadMessage it is a
	// fresh buffer, from ReadMessageInto the buffer passed in (or a larger
	// one if that was too small).
	Data []byte
	// Reliability and Channel are what the frame carried on the wire.
	Reliability reliability.Reliability
	Channel     uint8
}
