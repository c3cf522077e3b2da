package reliability

import "time"

// Stats is a snapshot of an Engine's counters and state. Counters only
// grow; gauges (queue depth, in-flight bytes, RTT) describe the moment
// Stats was called.
type Stats struct {
	// Round-trip time from acknowledgements. ACKs wait up to the peer's
	// ACK delay (about 10 ms), which these values include.
	SmoothedRTT time.Duration
	MinRTT      time.Duration
	RTTVariance time.Duration
	LatestRTT   time.Duration
	RTO         time.Duration // current retransmission timeout, backoff included

	// LossRate is a moving average (weight 1/32 per datagram) of the
	// fraction of data datagrams declared lost by NAK or timeout.
	LossRate      float64
	DatagramsLost uint64
	// SpuriousLosses counts datagrams declared lost that the peer
	// acknowledged afterwards: they were only reordered or late.
	SpuriousLosses uint64

	DatagramsSent     uint64 // every datagram handed out, ACK and NAK included
	DatagramsReceived uint64 // every datagram passed to Receive
	BytesSent         uint64
	BytesReceived     uint64
	MessagesSent      uint64 // messages accepted by Send
	MessagesDelivered uint64 // messages returned by ReadMessage
	FramesSent        uint64 // frames put on the wire, resends included
	Resends           uint64 // frames sent again after loss
	ACKsSent          uint64 // ACK datagrams
	ACKsReceived      uint64
	NAKsSent          uint64 // NAK datagrams
	NAKsReceived      uint64

	CongestionWindow  int // bytes
	InFlightBytes     int // bytes of data datagrams not yet acknowledged or lost
	InFlightDatagrams int
	QueuedMessages    int // accepted, not yet fully on the wire
	HeldSendBytes     int // counted against MaxQueueBytes (queued or unacknowledged)
	ReceiveQueueBytes int // delivered but unread, plus held for ordering
	ReassemblyBytes   int // split parts held for reassembly

	Drops Drops
}

// Drops counts what the engine discarded, by reason: input from the peer,
// and (SequencedBacklog) unreliable messages it chose not to send. None of
// these is reported to the peer.
type Drops struct {
	MalformedDatagram   uint64 // header or frame list did not parse
	MalformedACK        uint64 // ACK/NAK range list did not parse
	ACKWorkExceeded     uint64 // ACK/NAK whose ranges overlapped beyond the in-flight window
	InvalidFrame        uint64 // a frame with a bad channel or inconsistent fields
	DuplicateDatagram   uint64 // a datagram number already received, or too old to tell
	DatagramOutOfWindow uint64 // a datagram number implausibly far ahead
	DuplicateMessage    uint64 // a reliable message index already delivered
	StaleSequenced      uint64 // a sequenced message older than one already delivered
	OrderingOverflow    uint64 // a reliable or ordered message too far ahead of its window, or no room to hold it
	SplitRejected       uint64 // a split part refused by the reassembly limits or inconsistent
	SplitEvicted        uint64 // an incomplete unreliable split message given up to make room for another
	ReceiveQueueFull    uint64 // a data datagram refused because MaxReceiveBytes was reached, or ACKs piled up
	RefusedDatagram     uint64 // left unacknowledged: a reliable frame in it found no room (reassembly, ordering limits)
	DeadInput           uint64 // input after the connection was declared dead or closed

	// SequencedBacklog counts UnreliableSequenced messages Send accepted
	// without error and discarded: behind an ordered message on their
	// channel not yet acknowledged, the peer might already hold 3072
	// messages there, and a Minecraft Bedrock client stalls the channel
	// for good past 4097. Reliable messages wait in the queue instead.
	SequencedBacklog uint64
}
