package reliability

import (
	"net"
	"time"

	"github.com/rs/zerolog"

	"github.com/netrak/netrak/internal/rakwire"
)

// Engine is RakNet's reliability layer for one connection, as a sans-I/O
// state machine: it opens no socket, starts no goroutine and reads no
// clock. The caller passes every received datagram to Receive, collects
// the datagrams to send with AppendDatagram, drains delivered messages
// with ReadMessage and receipts with ReadEvent, and calls again no later
// than NextTimeout. Every method takes the current time where time
// matters; tests drive it with a fake clock.
//
// An Engine is not safe for concurrent use; a driver serialises calls.
type Engine struct {
	cfg Config
	log zerolog.Logger

	closed   bool
	dead     bool
	lastNow  time.Time
	maxDgram int // largest datagram we produce

	pool    payloadPool
	msgFree []*outMsg

	// Send side.
	queues       [numPriorities]fifo[*outMsg]
	credits      [numPriorities]int
	queuedMsgs   int // accepted, not yet fully on the wire
	liveMsgs     int // accepted, not yet released (acknowledged, lost or done)
	resend       fifo[frameRef]
	sent         sentWindow
	rel          sendRelWindow
	orderingNext [NumOrderingChannels]uint32 // next ordering index per channel
	sequenceNext [NumOrderingChannels]uint32 // next sequencing index per channel
	backlogs     [NumOrderingChannels]chanBacklog
	nextSplitID  uint16
	splitsOut    int
	nextReceipt  uint32
	heldBytes    int
	inFlight     int // bytes
	cc           congestionController
	rtt          rttEstimator
	backoff      uint
	nakWait      fifo[uint32] // NAKed datagrams waiting out the reordering allowance
	nakReo       lateness     // how late datagrams the peer NAKed arrived
	nakPremature float64      // moving fraction of NAKs that proved premature
	lost         lostLog
	progressAt   time.Time // last acknowledgement progress, or start of the outstanding period
	heardAt      time.Time // last datagram from the peer (or first time seen); for IdleTimeout
	paceAt       time.Time // earliest time the pacer lets the next data datagram go
	backlogged   bool      // the last data datagram left data waiting to be sent
	events       fifo[Event]
	ackScratch   rakwire.Ack

	// Receive side.
	rx rxState

	stats Stats
}

// Message is a message delivered by ReadMessage.
type Message struct {
	// Payload is valid until the next call to ReadMessage or Close.
	Payload []byte
	// Reliability is the kind the frame carried on the wire; the receipt
	// kinds arrive as their plain counterparts, and a split unreliable
	// message as its reliable upgrade.
	Reliability Reliability
	// Channel is the ordering channel for ordered and sequenced kinds, 0
	// otherwise.
	Channel uint8
}

// EventKind says what happened to a message sent with a receipt kind.
type EventKind uint8

const (
	// EventAcked: every part of the message was acknowledged by the peer.
	EventAcked EventKind = iota + 1
	// EventLost: the datagram carrying an UnreliableWithAckReceipt message
	// was reported missing or timed out. Reliable kinds are never lost;
	// they are resent until acknowledged or the connection dies.
	EventLost
	// EventDead: the connection was declared dead; Receipt is 0. Receipts
	// still outstanding at that point never fire.
	EventDead
)

func (k EventKind) String() string {
	switch k {
	case EventAcked:
		return "acked"
	case EventLost:
		return "lost"
	case EventDead:
		return "dead"
	}
	return "EventKind(invalid)"
}

// Event is a receipt outcome or a connection event, read with ReadEvent.
type Event struct {
	Kind    EventKind
	Receipt uint32 // as returned by Send
}

const (
	// msgOverhead is the bookkeeping cost charged per message against
	// MaxQueueBytes, so that a flood of tiny messages is bounded too.
	msgOverhead = 64
	// maxInFlightDatagrams bounds the sent window's span.
	maxInFlightDatagrams = 8192
	// lossWeight is the EWMA weight of one datagram outcome in LossRate.
	lossWeight = 1.0 / 32
)

// New returns an Engine for one connection.
func New(cfg Config) (*Engine, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, log: cfg.Logger, maxDgram: cfg.maxDatagramSize()}
	e.cc = newCongestionController(e.maxDgram)
	e.pool = newPayloadPool(max(cfg.MaxQueueBytes, cfg.MaxReceiveBytes))
	e.credits = priorityWeights
	e.rx.pipe = newRecvPipeline(recvConfig{
		split: splitLimits{
			maxParts:    cfg.MaxSplitParts,
			maxMessages: cfg.MaxSplitMessages,
			maxBytes:    cfg.MaxReassemblyBytes,
		},
		order: orderLimits{maxHeldBytes: cfg.MaxReceiveBytes},
		pool:  &e.pool,
	})
	return e, nil
}

// MaxDatagramSize returns the longest datagram the engine produces:
// Config.MTU minus UDPIPOverhead.
func (e *Engine) MaxDatagramSize() int { return e.maxDgram }

// Send queues msg for delivery to the peer and returns a receipt number,
// nonzero for the three receipt kinds, which later comes back in an Event.
// msg is copied; the caller may reuse it at once. channel is the ordering
// channel for ordered and sequenced kinds and is ignored by the others
// (but must still be below NumOrderingChannels).
//
// An UnreliableSequenced message is discarded without error, and counted
// in Stats().Drops.SequencedBacklog, when an ordered message on its
// channel is still unacknowledged and the peer may already hold 3072
// messages there waiting for it (see Drops.SequencedBacklog): it would
// wait there too, and a Minecraft Bedrock client stalls the channel past
// 4097. It returns receipt 0, as it would have anyway.
//
// Errors: ErrInvalidReliability, ErrInvalidPriority, ErrInvalidChannel,
// ErrEmptyMessage, ErrMessageTooLarge, ErrQueueFull (retry once the peer
// has acknowledged some of the queue), ErrDead, net.ErrClosed. On error
// nothing was queued.
func (e *Engine) Send(msg []byte, r Reliability, channel uint8, prio Priority, now time.Time) (uint32, error) {
	switch {
	case e.closed:
		return 0, net.ErrClosed
	case e.dead:
		return 0, ErrDead
	case !r.Valid():
		return 0, ErrInvalidReliability
	case !prio.Valid():
		return 0, ErrInvalidPriority
	case channel >= NumOrderingChannels:
		return 0, ErrInvalidChannel
	case len(msg) == 0:
		return 0, ErrEmptyMessage
	case len(msg) > e.cfg.MaxMessageSize:
		return 0, ErrMessageTooLarge
	}
	cost := len(msg) + msgOverhead
	if e.heldBytes > 0 && e.heldBytes+cost > e.cfg.MaxQueueBytes {
		return 0, ErrQueueFull
	}
	e.observe(now)
	room := e.maxDgram - rakwire.DataHeaderLen
	seqFits := r == UnreliableSequenced && len(msg) <= room-frameHeaderLen(r, false)
	if seqFits && e.sequencedDiscarded(channel) {
		// The peer may hold too many messages on this channel behind an
		// ordered one not yet acknowledged: an unreliable message may be
		// lost, so this one is, rather than stall the channel.
		e.stats.Drops.SequencedBacklog++
		return 0, nil
	}

	m := e.newMsg()
	m.buf = e.pool.get(len(msg))
	copy(m.buf, msg)
	m.kind = r
	m.prio = prio
	m.cost = cost
	wire := r.WireKind()
	if len(msg) > room-frameHeaderLen(wire, false) {
		wire = r.Reliable().WireKind()
		m.split = true
		m.partSize = room - frameHeaderLen(wire, true)
		m.parts = uint32((len(msg) + m.partSize - 1) / m.partSize)
	} else {
		m.parts = 1
	}
	m.wire = wire
	m.unacked = m.parts
	if wire.IsReliable() {
		words := int(m.parts+63) / 64
		if cap(m.acked) < words {
			m.acked = make([]uint64, words)
		} else {
			m.acked = m.acked[:words]
			clear(m.acked)
		}
	}
	if wire.HasOrderingChannel() {
		m.channel = channel
		if wire.IsOrdered() {
			m.orderingIndex = e.orderingNext[channel]
			e.orderingNext[channel] = seqAdd(e.orderingNext[channel], 1)
			e.sequenceNext[channel] = 0
			e.backlogs[channel].ordered.push(orderedRef{msg: m, gen: m.gen, index: m.orderingIndex})
		} else {
			// A sequenced message rides on the current ordering index:
			// the one the next ordered message will take.
			m.orderingIndex = e.orderingNext[channel]
			m.sequencingIndex = e.sequenceNext[channel]
			e.sequenceNext[channel] = seqAdd(e.sequenceNext[channel], 1)
			if seqFits {
				e.recordSequenced(channel, m.orderingIndex)
			}
		}
	}
	if r.WantsReceipt() {
		e.nextReceipt++
		if e.nextReceipt == 0 {
			e.nextReceipt = 1
		}
		m.receipt = e.nextReceipt
	}
	e.heldBytes += cost
	e.queues[prio].push(m)
	e.queuedMsgs++
	e.liveMsgs++
	e.stats.MessagesSent++
	return m.receipt, nil
}

func (e *Engine) newMsg() *outMsg {
	if n := len(e.msgFree); n > 0 {
		m := e.msgFree[n-1]
		e.msgFree = e.msgFree[:n-1]
		return m
	}
	return &outMsg{}
}

// release returns m's storage; every frameRef to it goes stale.
func (e *Engine) release(m *outMsg) {
	e.heldBytes -= m.cost
	e.liveMsgs--
	if m.wire.IsOrdered() {
		e.backlogs[m.channel].acked = true
	}
	if m.split && m.nextPart > 0 && m.wire.IsReliable() {
		e.splitsOut--
	}
	e.pool.put(m.buf)
	acked := m.acked
	*m = outMsg{gen: m.gen + 1, acked: acked[:0]}
	e.msgFree = append(e.msgFree, m)
}

// finish reports m's outcome if it wants a receipt, then releases it.
func (e *Engine) finish(m *outMsg, kind EventKind) {
	if m.kind.WantsReceipt() {
		e.events.push(Event{Kind: kind, Receipt: m.receipt})
	}
	e.release(m)
}

// ReadEvent returns the next receipt or connection event, if any.
func (e *Engine) ReadEvent() (Event, bool) {
	if e.events.len() == 0 {
		return Event{}, false
	}
	return e.events.pop(), true
}

// observe records the latest time seen, so NextTimeout can answer "now".
func (e *Engine) observe(now time.Time) {
	if now.After(e.lastNow) {
		e.lastNow = now
	}
	if e.heardAt.IsZero() {
		e.heardAt = now
	}
}

// Close stops the engine: Send returns net.ErrClosed, nothing more is
// sent or delivered, and queued messages are discarded. It is idempotent.
func (e *Engine) Close() error {
	e.closed = true
	return nil
}

// Dead reports whether the connection has been declared dead: reliable
// data went unacknowledged for Config.DeadTimeout, or, if set, nothing
// came from the peer for Config.IdleTimeout. It checks the timeouts
// against now.
func (e *Engine) Dead(now time.Time) bool {
	e.checkDead(now)
	return e.dead
}

// Outstanding reports the messages accepted by Send that still need the
// peer: queued counts those not yet fully on the wire, unacked those on
// the wire whose acknowledgement is awaited (reliable kinds, and
// UnreliableWithAckReceipt until its receipt is known). Both zero means
// every reliable message sent has been acknowledged and nothing waits to
// be sent, so a graceful close can stop waiting (Idle). Resends do not
// count separately: a message awaiting one is unacked. After Close or
// death the counts freeze at what was left undone. It costs O(1).
func (e *Engine) Outstanding() (queued, unacked int) {
	return e.queuedMsgs, e.liveMsgs - e.queuedMsgs
}

// Idle reports whether Outstanding is (0, 0): everything sent has been
// acknowledged and nothing is queued. It says nothing about the peer's
// traffic; ACKs this side owes the peer may still be pending (FlushACKs).
func (e *Engine) Idle() bool { return e.liveMsgs == 0 }

// FlushACKs makes the acknowledgements this side owes the peer due now
// instead of after Config.ACKDelay: the next AppendDatagram calls emit
// them, and the repeat of the previous ACK, if one is scheduled. A
// connection whose peer is closing uses it to acknowledge the peer's last
// messages at once and finish. Acknowledgements that arrive after the call
// wait as usual once the flushed ones are out. NextTimeout reflects it.
func (e *Engine) FlushACKs(now time.Time) {
	e.observe(now)
	rx := &e.rx
	if rx.pipe.acks.pendingACK() > 0 {
		rx.ackFlush = true
	}
	if !rx.ackRedo.IsZero() && rx.ackRedo.After(now) {
		rx.ackRedo = now
	}
}

func (e *Engine) outstanding() bool { return e.sent.count > 0 || e.resend.len() > 0 }

func (e *Engine) checkDead(now time.Time) {
	if e.dead || e.closed {
		return
	}
	switch {
	case e.outstanding() && now.Sub(e.progressAt) >= e.cfg.DeadTimeout:
		e.log.Debug().Dur("timeout", e.cfg.DeadTimeout).Msg("reliability: peer stopped acknowledging; connection dead")
	case e.cfg.IdleTimeout > 0 && !e.heardAt.IsZero() && now.Sub(e.heardAt) >= e.cfg.IdleTimeout:
		e.log.Debug().Dur("timeout", e.cfg.IdleTimeout).Msg("reliability: peer silent; connection dead")
	default:
		return
	}
	e.die()
}

// broken declares the connection dead because a datagram did not encode.
// The engine only builds what encodes (parts of at most a datagram, 24-bit
// numbers, ascending ranges), so this is a bug; but an engine that cannot
// put its queue on the wire would stall for good, and a dead connection
// tells its driver, where a panic would take down every connection of a
// server.
func (e *Engine) broken(err error) {
	e.log.Error().Err(err).Msg("reliability: datagram does not encode; connection dead")
	e.die()
}

func (e *Engine) die() {
	e.dead = true
	e.events.push(Event{Kind: EventDead})
}

// Stats returns a snapshot of the engine's counters.
func (e *Engine) Stats() Stats {
	s := e.stats
	s.SmoothedRTT = e.rtt.srtt
	s.MinRTT = e.rtt.minRTT
	s.RTTVariance = e.rtt.rttvar
	s.LatestRTT = e.rtt.latest
	s.RTO = e.rtt.rto(&e.cfg, e.backoff)
	s.CongestionWindow = e.cc.cwnd
	s.InFlightBytes = e.inFlight
	s.InFlightDatagrams = e.sent.count
	s.QueuedMessages = e.queuedMsgs
	s.HeldSendBytes = e.heldBytes
	s.ReceiveQueueBytes = e.rx.pendingBytes()
	s.ReassemblyBytes = e.rx.pipe.split.heldBytes()
	d := &e.rx.pipe.drops
	s.Drops.MalformedDatagram += d.MalformedDatagram
	s.Drops.DuplicateDatagram += d.DuplicateDatagram + d.StaleDatagram
	s.Drops.DatagramOutOfWindow += d.DatagramTooFarAhead
	s.Drops.ReceiveQueueFull += d.ACKListFull
	s.Drops.RefusedDatagram += d.RefusedDatagram
	s.Drops.InvalidFrame += d.InvalidFrame
	s.Drops.DuplicateMessage += d.DuplicateMessage + d.SplitDuplicate + d.DuplicateOrdered
	s.Drops.StaleSequenced += d.StaleSequenced
	s.Drops.OrderingOverflow += d.ReliableTooFarAhead + d.OrderingTooFarAhead + d.OrderingHoldFull
	s.Drops.SplitRejected += d.SplitInconsistent + d.SplitTooManyParts + d.SplitTooManyMsgs + d.SplitOverBudget
	s.Drops.SplitEvicted += d.SplitEvicted
	return s
}

// NextTimeout returns when the engine next needs AppendDatagram to be
// called: a time not after the latest now passed in when it has something
// to send already, the zero time when it waits for nothing (no pending
// ACK, no data in flight, empty queue, no Config.IdleTimeout). To know
// whether everything sent has been acknowledged, use Outstanding or Idle.
func (e *Engine) NextTimeout() time.Time {
	if e.closed || e.dead {
		return time.Time{}
	}
	var t time.Time
	earliest := func(c time.Time) {
		if !c.IsZero() && (t.IsZero() || c.Before(t)) {
			t = c
		}
	}
	earliest(e.rx.ackDue(e.cfg.ACKDelay))
	earliest(e.rx.ackRedo)
	earliest(e.rx.nakDue(e.nakDelay(), e.lastNow))
	if d := e.sent.oldest(); d != nil {
		earliest(d.sentAt.Add(e.rtt.rto(&e.cfg, e.backoff)))
	}
	if d, due := e.nakWaitHead(); d != nil {
		earliest(due)
	}
	if e.outstanding() {
		earliest(e.progressAt.Add(e.cfg.DeadTimeout))
	}
	if e.cfg.IdleTimeout > 0 && !e.heardAt.IsZero() {
		earliest(e.heardAt.Add(e.cfg.IdleTimeout))
	}
	if e.hasDataToSend() && e.sent.span() < maxInFlightDatagrams && e.cc.canSend(e.inFlight, e.maxDgram) {
		if e.paceAt.After(e.lastNow) {
			earliest(e.paceAt)
		} else {
			earliest(e.lastNow)
		}
	}
	return t
}

func (e *Engine) hasDataToSend() bool {
	if e.resend.len() > 0 {
		return true
	}
	for p := range e.queues {
		if e.queues[p].len() > 0 && e.sendable(*e.queues[p].peek()) {
			return true
		}
	}
	return false
}

// sendable reports whether m's next part may go on the wire now, as far as
// the reliable window, the split limit and the peer's per-channel backlog
// (chanBacklog) are concerned.
func (e *Engine) sendable(m *outMsg) bool {
	if !m.wire.IsReliable() {
		return true // unreliable kinds are never split
	}
	if e.rel.full() {
		return false
	}
	if m.nextPart > 0 {
		return true
	}
	if m.split && e.splitsOut >= e.cfg.MaxOutstandingSplits {
		return false
	}
	return !m.wire.HasOrderingChannel() || !e.backlogBlocks(m)
}
