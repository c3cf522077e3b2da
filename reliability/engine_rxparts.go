package reliability

import "time"

// Receive-side state of the engine. Which datagram numbers arrived is kept
// by an ackQueue and which reliable message indexes were accepted by a
// reliableWindow, split reassembly by a splitAssembler; per-channel
// ordering and sequencing are here.

// orderChannel is one ordering channel's receive state. held[k] holds what
// waits for ordering index next+k: the ordered message with that index and
// the newest sequenced message sent just before it.
type orderChannel struct {
	next       uint32 // next ordering index to deliver
	highestSeq uint32 // next acceptable sequencing index for next
	held       []heldSlot
	heldCount  int
}

type heldMsg struct {
	buf  []byte // nil: empty
	kind Reliability
	seq  uint32
}

type heldSlot struct {
	ord, seq heldMsg
}

// maxOrderAhead bounds how far past the next expected ordering index a
// message is held (the Bedrock client holds 4097).
const maxOrderAhead = 4096

// rxState is the engine's receive side.
type rxState struct {
	track    ackQueue
	ackSince time.Time // when the oldest pending ACK range was queued
	dedup    reliableWindow
	asm      splitAssembler
	ch       [NumOrderingChannels]orderChannel
	out      fifo[Message]
	queued   int    // bytes delivered but unread, plus bytes held for ordering
	last     []byte // payload returned by the previous ReadMessage
}

func (r *rxState) reassemblyBytes() int { return r.asm.heldBytes() }

// ackFlushRanges: this many pending ACK ranges go out without waiting for
// the ACK delay (scattered arrivals, as under heavy loss).
const ackFlushRanges = 64

// ackDue returns when the pending ACKs must go out; zero if none.
func (r *rxState) ackDue(delay time.Duration) time.Time {
	switch n := r.track.pendingACK(); {
	case n == 0:
		return time.Time{}
	case n >= ackFlushRanges:
		return r.ackSince
	}
	return r.ackSince.Add(delay)
}

func (c *orderChannel) slot(idx uint32) *heldSlot {
	return &c.held[int(idx)&(len(c.held)-1)]
}

// ensure makes room to hold index next+d (d < maxOrderAhead).
func (c *orderChannel) ensure(d int) {
	if d < len(c.held) {
		return
	}
	n := max(len(c.held), 16)
	for n <= d {
		n *= 2
	}
	nh := make([]heldSlot, n)
	for k := 0; k < len(c.held); k++ {
		idx := seqAdd(c.next, uint32(k))
		nh[int(idx)&(n-1)] = *c.slot(idx)
	}
	c.held = nh
}
