package reliability

// The receiver holds every message on an ordering channel whose ordering
// index is ahead of the next ordered message it expects (see
// orderingChannels): ordered messages wait for the gap before them, and
// sequenced messages, which carry the index the next ordered message will
// take, wait for the ordered message before them. A Minecraft Bedrock
// client drops a message when more than 4097 wait on one channel, after
// acknowledging it, so the channel stalls for good. Reliable messages are
// bounded by the reliable window (4096 indexes in flight), but unreliable
// sequenced messages carry no reliable index: a sender streaming them on a
// channel while an ordered message on it is lost would pile up any number.
//
// chanBacklog bounds, per channel, the messages the peer may be holding.
// The peer has received, in order, every ordered message before the
// oldest one not yet acknowledged (low), so it expects low or later: only
// a message whose ordering index is past low can be held. Every such
// message is recorded in ahead when it becomes able to be held: an
// unreliable sequenced message when Send accepts it (it will go on the
// wire), a reliable one when its first frame goes on the wire. Once
// acknowledgements move low to or past a recorded index, that message can
// no longer be held and the record goes. ahead is in the order of
// recording, not strictly of index (priorities reorder the wire), so a
// record can outlive its message a little: the count errs on the safe
// side, and empties when no ordered message on the channel is outstanding.
//
// Past maxSequencedWaiting records, Send discards unreliable sequenced
// messages on the channel (they may be lost anyway; Stats counts them in
// Drops.SequencedBacklog); past maxChannelWaiting, reliable messages on it
// wait in the send queue. Records are only added below those counts, so
// the peer never holds more than maxChannelWaiting on a channel. The
// oldest outstanding ordered message itself is never held back, so the
// channel always recovers.
type chanBacklog struct {
	ordered fifo[frameRef] // ordered messages not yet acknowledged, by ordering index
	ahead   fifo[uint32]   // ordering indexes of messages the peer may hold
}

const (
	// maxChannelWaiting bounds the messages a peer may hold on one
	// channel: one under the Bedrock client's 4097.
	maxChannelWaiting = 4096
	// maxSequencedWaiting is the share unreliable sequenced messages may
	// fill, leaving room for reliable ones sent meanwhile.
	maxSequencedWaiting = 3072
)

// backlog returns the oldest ordering index the peer may still expect on
// channel c and how many messages it may hold there.
func (e *Engine) backlog(c uint8) (low uint32, waiting int) {
	b := &e.backlogs[c]
	for b.ordered.len() > 0 && !b.ordered.peek().live() {
		b.ordered.pop() // acknowledged
	}
	low = e.orderingNext[c]
	if b.ordered.len() > 0 {
		low = b.ordered.peek().msg.orderingIndex
	}
	for b.ahead.len() > 0 && seqDiff(*b.ahead.peek(), low) <= 0 {
		b.ahead.pop()
	}
	return low, b.ahead.len()
}

// mayBeHeld reports whether a message on channel c with ordering index
// idx could wait at the peer, and how many may wait there already.
func (e *Engine) mayBeHeld(c uint8, idx uint32) (bool, int) {
	low, n := e.backlog(c)
	return seqDiff(idx, low) > 0, n
}

// backlogBlocks reports whether m, a reliable message with a channel
// whose first frame has not gone out, must wait: the peer may already
// hold maxChannelWaiting messages on its channel.
func (e *Engine) backlogBlocks(m *outMsg) bool {
	held, n := e.mayBeHeld(m.channel, m.orderingIndex)
	return held && n >= maxChannelWaiting
}

// recordSent notes that m's first frame went on the wire.
func (e *Engine) recordSent(m *outMsg) {
	if held, _ := e.mayBeHeld(m.channel, m.orderingIndex); held {
		e.backlogs[m.channel].ahead.push(m.orderingIndex)
	}
}
