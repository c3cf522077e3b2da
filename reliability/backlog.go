package reliability

// The receiver holds every message on an ordering channel whose ordering
// index is ahead of the next ordered message it expects (see
// orderingChannels): ordered messages wait for the gap before them, and
// sequenced messages, which carry the index the next ordered message will
// take, wait for the ordered message before them. A Minecraft Bedrock
// client drops a message when more than 4097 wait on one channel, after
// acknowledging it, so the channel stalls for good. Reliable messages are
// mostly bounded by the reliable window (4096 indexes in flight), but
// unreliable sequenced messages carry no reliable index: a sender
// streaming them on a channel while an ordered message on it is lost
// would pile up any number.
//
// chanBacklog bounds, per channel, the messages the peer may be holding.
// The peer has received, in order, every ordered message before the
// oldest one not yet acknowledged (low), so it expects low or later: only
// a message whose ordering index is past low can be held. The engine
// counts them, from above:
//
//   - sent: ordered messages on the wire (first frame sent) with an
//     index not below low (less the one at low, when counting exactly).
//     Every ordered message is on the ordered list
//     from Send until acknowledged, in index order; when acknowledgements
//     move low from L to L', the messages L..L'-1 were all acknowledged,
//     hence sent and counted, and leave the count.
//   - ahead: the ordering indexes of sequenced messages, recorded when
//     they become able to be held: an unreliable one when Send accepts it
//     (it will go on the wire), a reliable one when its first frame is
//     sent. A record goes once low reaches its index. ahead is in the
//     order of recording, not strictly of index (priorities reorder the
//     wire), so a record can outlive its message a little; records are
//     also cleaned up only in batches (see record). Both err on the safe
//     side.
//
// Past maxSequencedWaiting, Send discards unreliable sequenced messages
// on the channel (they may be lost anyway; Stats counts them in
// Drops.SequencedBacklog); past maxChannelWaiting, reliable messages on
// it that could be held wait in the send queue. The count only grows
// below those limits, so the peer never holds more than
// maxChannelWaiting on a channel. The oldest outstanding ordered message
// itself is never held back, so the channel always recovers.
type chanBacklog struct {
	ordered fifo[orderedRef] // ordered messages not yet acknowledged, by ordering index
	sent    int              // ordered messages sent whose index is not below low
	ahead   fifo[uint32]     // ordering indexes of sequenced messages the peer may hold
	// acked is set when an ordered message on the channel is
	// acknowledged: only then can the head of ordered be stale, so only
	// then is it looked at (its message is rarely in cache).
	acked bool
}

// orderedRef is an ordered message in chanBacklog.ordered; it is live
// while msg.gen == gen.
type orderedRef struct {
	msg   *outMsg
	gen   uint32
	index uint32 // the message's ordering index
}

const (
	// maxChannelWaiting bounds the messages a peer may hold on one
	// channel: one under the Bedrock client's 4097.
	maxChannelWaiting = 4096
	// maxSequencedWaiting is the count past which unreliable sequenced
	// messages are discarded, leaving room for reliable ones sent
	// meanwhile.
	maxSequencedWaiting = 3072
	// backlogPruneAt is how many records of sequenced messages wait
	// before a cleanup: looking up the oldest unacknowledged ordered
	// message for every frame sent would cost a steady stream more than
	// the occasional batch.
	backlogPruneAt = 512
)

// low returns the ordering index of the oldest ordered message on
// channel c not yet acknowledged, or the next one to assign if none is.
func (e *Engine) low(c uint8) uint32 {
	b := &e.backlogs[c]
	if b.acked {
		b.acked = false
		if b.ordered.len() > 0 {
			from := b.ordered.peek().index
			for b.ordered.len() > 0 {
				if r := b.ordered.peek(); r.msg.gen == r.gen {
					break
				}
				b.ordered.pop()
			}
			to := e.orderingNext[c]
			if b.ordered.len() > 0 {
				to = b.ordered.peek().index
			}
			b.sent -= int(seqDiff(to, from))
		}
	}
	if b.ordered.len() > 0 {
		return b.ordered.peek().index
	}
	return e.orderingNext[c]
}

// backlog returns the oldest ordering index the peer may still expect on
// channel c and how many messages it may hold there, cleaning up the
// records.
func (e *Engine) backlog(c uint8) (low uint32, waiting int) {
	low = e.low(c)
	b := &e.backlogs[c]
	for b.ahead.len() > 0 && seqDiff(*b.ahead.peek(), low) <= 0 {
		b.ahead.pop()
	}
	waiting = b.sent + b.ahead.len()
	if b.ordered.len() > 0 && b.ordered.peek().msg.nextPart > 0 {
		waiting-- // low itself is sent: the peer delivers it, never holds it
	}
	return low, waiting
}

// roughBacklog is at least what backlog would count on channel c, without
// cleaning up: a count below a limit needs no cleanup to prove it.
func (e *Engine) roughBacklog(c uint8) int {
	b := &e.backlogs[c]
	return b.sent + b.ahead.len()
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
	if e.roughBacklog(m.channel) < maxChannelWaiting {
		return false
	}
	held, n := e.mayBeHeld(m.channel, m.orderingIndex)
	return held && n >= maxChannelWaiting
}

// sequencedDiscarded reports whether Send must discard an unreliable
// sequenced message on channel c: it could be held, and the peer may
// hold maxSequencedWaiting messages there already.
func (e *Engine) sequencedDiscarded(c uint8) bool {
	if e.roughBacklog(c) < maxSequencedWaiting {
		return false
	}
	held, n := e.mayBeHeld(c, e.orderingNext[c])
	return held && n >= maxSequencedWaiting
}

// recordSent notes that the first frame of m, a reliable message with a
// channel, went on the wire.
func (e *Engine) recordSent(m *outMsg) {
	if m.wire.IsOrdered() {
		b := &e.backlogs[m.channel]
		if b.acked {
			// Drop the acknowledged ones now and then, so that a channel
			// that never needs an exact count does not pile them up.
			e.low(m.channel)
		}
		b.sent++ // its index is not below low: it is not acknowledged yet
		return
	}
	e.recordSequenced(m.channel, m.orderingIndex)
}

// recordSequenced notes that a sequenced message with ordering index idx
// on channel c is on its way. Records are cleaned up in batches, when
// backlogPruneAt have piled up; until then one whose message cannot be
// held only makes the count err on the safe side. After a cleanup, such a
// message is not recorded at all, so the records never outnumber
// max(backlogPruneAt, maxChannelWaiting) by more than one.
func (e *Engine) recordSequenced(c uint8, idx uint32) {
	b := &e.backlogs[c]
	if b.ahead.len() >= backlogPruneAt {
		if held, _ := e.mayBeHeld(c, idx); !held {
			return
		}
	}
	b.ahead.push(idx)
}
