package reliability

import "github.com/netrak/netrak/internal/rakwire"

// Reliability is one of RakNet's eight delivery guarantees. The numeric
// values are the ones carried in the top three bits of a frame's flags byte.
type Reliability uint8

const (
	// Unreliable messages may be lost, duplicated or reordered.
	Unreliable Reliability = 0
	// UnreliableSequenced messages may be lost; an older message is never
	// delivered after a newer one on the same channel.
	UnreliableSequenced Reliability = 1
	// Reliable messages arrive exactly once, in any order.
	Reliable Reliability = 2
	// ReliableOrdered messages arrive exactly once, in send order per channel.
	ReliableOrdered Reliability = 3
	// ReliableSequenced messages are resent until acknowledged, but an older
	// message is never delivered after a newer one on the same channel.
	ReliableSequenced Reliability = 4
	// UnreliableWithAckReceipt is Unreliable, and the sender learns whether
	// the datagram carrying it was acknowledged or lost.
	UnreliableWithAckReceipt Reliability = 5
	// ReliableWithAckReceipt is Reliable, and the sender learns when it was
	// acknowledged.
	ReliableWithAckReceipt Reliability = 6
	// ReliableOrderedWithAckReceipt is ReliableOrdered, and the sender learns
	// when it was acknowledged.
	ReliableOrderedWithAckReceipt Reliability = 7
)

// NumOrderingChannels is the number of ordering channels per direction.
// A frame from the peer that names another is dropped.
const NumOrderingChannels = 32

// Valid reports whether r is one of the eight defined kinds.
func (r Reliability) Valid() bool { return r <= ReliableOrderedWithAckReceipt }

// IsReliable reports whether frames of this kind carry a reliable message
// index and are resent until acknowledged.
func (r Reliability) IsReliable() bool { return rakwire.Reliability(r).IsReliable() }

// IsSequenced reports whether frames of this kind carry a sequencing index.
func (r Reliability) IsSequenced() bool { return rakwire.Reliability(r).IsSequenced() }

// IsOrdered reports whether frames of this kind are held until every
// earlier message on their channel has been delivered.
func (r Reliability) IsOrdered() bool {
	return r == ReliableOrdered || r == ReliableOrderedWithAckReceipt
}

// HasOrderingChannel reports whether frames of this kind carry an ordering
// index and channel: every sequenced or ordered kind.
func (r Reliability) HasOrderingChannel() bool {
	return rakwire.Reliability(r).HasOrderingChannel()
}

// frameHeaderLen is the size of the header of a frame of kind r.
func frameHeaderLen(r Reliability, split bool) int {
	return rakwire.FrameHeaderLen(rakwire.Reliability(r), split)
}

// WantsReceipt reports whether the sender is told about this message's fate.
func (r Reliability) WantsReceipt() bool { return r >= UnreliableWithAckReceipt && r.Valid() }

// WireKind is the kind the original library puts on the wire: receipts are
// tracked by the sender only, so kinds 5, 6 and 7 travel as 0, 2 and 3.
func (r Reliability) WireKind() Reliability { return Reliability(rakwire.Reliability(r).WireKind()) }

// Reliable returns the kind a split message of kind r is upgraded to:
// every part of a split message must arrive for it to be useful.
func (r Reliability) Reliable() Reliability {
	switch r {
	case Unreliable:
		return Reliable
	case UnreliableSequenced:
		return ReliableSequenced
	case UnreliableWithAckReceipt:
		return ReliableWithAckReceipt
	}
	return r
}

// String returns the kind's name as RakNet spells it.
func (r Reliability) String() string {
	switch r {
	case Unreliable:
		return "UNRELIABLE"
	case UnreliableSequenced:
		return "UNRELIABLE_SEQUENCED"
	case Reliable:
		return "RELIABLE"
	case ReliableOrdered:
		return "RELIABLE_ORDERED"
	case ReliableSequenced:
		return "RELIABLE_SEQUENCED"
	case UnreliableWithAckReceipt:
		return "UNRELIABLE_WITH_ACK_RECEIPT"
	case ReliableWithAckReceipt:
		return "RELIABLE_WITH_ACK_RECEIPT"
	case ReliableOrderedWithAckReceipt:
		return "RELIABLE_ORDERED_WITH_ACK_RECEIPT"
	}
	return "Reliability(invalid)"
}
