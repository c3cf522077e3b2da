// Package reliability implements RakNet's reliability layer: the part of
// the protocol that turns unreliable UDP datagrams into messages delivered
// with one of eight guarantees, wire-compatible with the original RakNet C++
// library (4.081), its patched descendants, and Minecraft Bedrock peers.
//
// It is sans-I/O. The package never opens a socket, starts a goroutine or
// reads a clock: the layer above (package raknet for plain RakNet peers,
// package session inside netcode payloads) hands it each received datagram
// together with the current time, asks it for the datagrams to send, and
// collects the messages it delivers. That keeps every behaviour, timeouts
// included, testable deterministically.
//
// Everything here is the state machine of one connection, Engine, and the
// types of its API. The wire codecs it is built on are pure functions in
// the module-internal package internal/rakwire.
//
// # Wire format
//
// A connected datagram starts with a flags byte whose top bit (0x80) is
// set; offline messages, handled by package raknet, never set it. After
// it, a data datagram carries a 24-bit datagram number and frames packed up
// to the MTU: each frame is one message, or one part of a split message,
// with its kind, its length and the indexes the kind needs. An ACK or NAK
// datagram carries a list of ranges of datagram numbers received or found
// missing. All counters on the wire are 24 bits wide and wrap; they are
// compared with serial-number arithmetic.
//
// Earlier versions exported the codecs (Frame, FrameReader,
// NewFrameReader, ParseFrame, FrameHeaderLen, MaxFramePayload,
// MaxFrameHeaderLen, DataHeader, DataHeaderLen, ParseDataHeader,
// ParseDataDatagram, Ack, ParseAck, AckFit, Range, AppendRangeList,
// ParseRangeList, RangeListLen, RangesThatFit, CoalesceRanges,
// ClassifyDatagram, DatagramType and its constants, the Header* bits and
// the parse errors ErrTruncated, ErrNotConnected, ErrWrongDatagramType,
// ErrZeroLength, ErrFrameTooLong, ErrFrameChannel, ErrFrameSplit,
// ErrRangeInverted and ErrRangeCount). Nothing outside the module used
// them, and an application or a protocol built on the engine needs none
// of them: they moved to internal/rakwire, where every message type has
// one shape, Append(b) ([]byte, error), ParseX(b, *X) (int, error) and
// Len(), and a value that cannot be encoded is an error rather than a
// panic. ParseDataDatagram (ParseDataHeader, then NewFrameReader),
// FrameReader.Remaining, CoalesceRanges, MaxFrameHeaderLen and the
// range-list functions did not survive the move.
//
// # Delivery
//
// The eight reliabilities are RakNet's: Unreliable, UnreliableSequenced,
// Reliable, ReliableOrdered, ReliableSequenced, and three "with ack
// receipt" kinds that tell the sender the message's fate (ReadEvent). The
// receipt kinds travel on the wire as their plain counterparts, as the
// original library sends them; a receiver accepts either. Each direction
// has NumOrderingChannels (32) ordering channels with their own ordering
// and sequencing indexes: an ordered send takes the channel's next
// ordering index and restarts its sequencing index; a sequenced send
// carries the current ordering index and the next sequencing index.
//
// A message larger than one datagram is split into parts of the largest
// size that fits, and an unreliable kind is upgraded to its reliable
// counterpart (every part must arrive for the message to be of use).
//
// # Receive pipeline
//
// A data datagram from the peer goes through, in order:
//
//  1. the datagram tracker: a duplicate, a number too old to tell, or one
//     implausibly far ahead is dropped; the others are queued for an ACK,
//     and a jump in numbers queues the gap for a NAK;
//  2. per frame, the reliable window: a reliable message index already
//     received is a duplicate and is dropped, so a reliable message is never
//     delivered twice;
//  3. the ordering check: a sequenced message older than the newest
//     delivered on its channel is dropped, an ordered one already delivered
//     is dropped, and one too far ahead, or with no room to hold it, is
//     refused;
//  4. reassembly of split parts, within limits on parts per message,
//     messages at once and bytes held; parts that contradict their
//     message's earlier parts are dropped;
//  5. the ordering channels: an ordered message waits until the gap before
//     it fills; a sequenced one is delivered at once, or held in place if
//     it belongs after an ordered message not yet delivered.
//
// A reliable frame refused for lack of room (steps 2 to 5) leaves no trace,
// and its datagram is not acknowledged, so the peer resends it after its
// retransmission timeout: limits slow a sender down and never lose a
// reliable message. Malformed and hostile input is dropped and counted by
// reason in Stats().Drops; it never produces an error the peer can observe
// and never panics.
//
// # Engine
//
// Engine is one connection. Send copies a message into the send queue (a
// full queue is ErrQueueFull, and nothing is lost: retry after
// acknowledgements free room); AppendDatagram hands out the next datagram
// to send: a due ACK, then a due NAK, then data, resent frames before new
// ones; Receive takes a datagram from the peer; ReadMessage returns
// delivered messages and ReadEvent receipts and connection events.
// For a graceful close, Outstanding (or Idle) says when everything sent
// has been acknowledged and nothing is queued, and FlushACKs makes the
// acknowledgements owed to the peer go out at once rather than after the
// ACK delay.
//
// Sending follows RakNet with a few improvements that stay on the wire
// format:
//
//   - Priorities: Immediate goes first; High, Medium and Low share the rest
//     4:2:1 by weighted round robin, so bulk data never starves High and is
//     never starved itself.
//   - Acknowledgement: received datagrams are ACKed within Config.ACKDelay
//     (10 ms), coalesced into range lists that go out in ascending numeric
//     order and merged, as patched RakNet builds require. Each ACK also
//     repeats the previous one's ranges, so one lost ACK does not cause
//     spurious resends. Each gap in the datagram numbers is NAKed once it
//     has been open for the reordering allowance: twice the ACK delay, or
//     more when the path has recently delivered datagrams later than that
//     (an eighth over the latest lateness seen, held 10 s, at most 250 ms
//     and one smoothed RTT), so reordering does not cause resends. A NAK
//     makes the sender resend at once, unless NAKs have lately proved
//     premature (over a quarter of them: a peer that reports gaps at
//     once, as the original library does, on a path that reorders); then
//     a NAKed datagram is resent only once it has stayed missing as long
//     as late datagrams have been arriving after their NAK. A datagram
//     declared lost and acknowledged afterwards is a spurious loss
//     (Stats.SpuriousLosses): the congestion controller takes it back,
//     undoing the cut it caused.
//   - Retransmission: every datagram gets a new number, so resent frames
//     travel in new datagrams and every ACK gives an unambiguous RTT
//     sample. The RTO is RakNet's 2·SRTT + 4·RTTVAR + 30 ms, clamped to
//     RTOMin..RTOMax and doubled per consecutive expiry. A reliable frame is
//     resent until acknowledged, or until nothing has been acknowledged for
//     Config.DeadTimeout and the connection is declared dead (EventDead,
//     ErrDead). That timeout runs only while something awaits
//     acknowledgement: an idle connection has nothing to time out, so
//     noticing a peer that vanished while idle is the driver's job
//     (package raknet sends connected pings and times out on silence).
//     A driver without keep-alives of its own can set Config.IdleTimeout
//     (off by default): no datagram from the peer for that long, busy or
//     idle, and the connection is declared dead the same way.
//   - Congestion control: a byte-counting window with slow start and
//     additive increase, like RakNet's sliding window, which halves on
//     every NAK and so collapses on Wi-Fi and mobile links, where loss is
//     mostly random. Instead loss cuts the window only when it looks like
//     congestion. The queueing signal is the minimum RTT over the last
//     window or two of at least one smoothed RTT and 8 samples, standing
//     more than an eighth plus half the ACK delay above the base RTT (the
//     minimum of the last 10 s): a filling bottleneck queue raises every
//     sample, jitter only spreads them. Loss
//     with queueing halves the window, at most once per round trip; loss
//     without it is resent and otherwise ignored, unless the loss rate over
//     the last 64 datagrams exceeds 20% (a queue too shallow to show
//     delay), which takes 30%. Queueing also ends slow start before the
//     queue overflows, with the window cut to the bandwidth-delay product
//     (window × base RTT / smoothed RTT) so that the queue drains. Sending is paced by a token bucket, so a full
//     window never leaves as one burst.
//   - In flight: at most 4096 reliable message indexes between the lowest
//     unacknowledged one and the next, 8192 datagrams, and
//     Config.MaxOutstandingSplits split messages, inside a Minecraft Bedrock
//     client's limits (it drops messages more than 32768 past the lowest
//     missing one or more than 4097 waiting on a channel, after
//     acknowledging them, and reassembles at most 256 split messages).
//   - Per channel: the receiver holds every message whose ordering index
//     is past a missing ordered message, and unreliable sequenced messages
//     carry no reliable index to bound them. The engine counts, per
//     channel, the messages sent whose ordering index is past the oldest
//     ordered message not yet acknowledged (the peer may be holding
//     those). Past 3072, Send discards UnreliableSequenced messages on
//     that channel (Stats.Drops.SequencedBacklog), as an unreliable
//     message may be; past 4096, reliable messages on it wait in the
//     queue. The oldest unacknowledged ordered message is never held
//     back, so the channel recovers when its loss is repaired.
//
// # Time model
//
// Every method that depends on time takes now, and the engine never reads
// a clock. After each Receive, and whenever NextTimeout passes, the driver
// calls AppendDatagram until it returns false and writes each datagram
// out; NextTimeout says when the engine next needs a call (a pending ACK or
// NAK, a retransmission timeout, the pacer, the dead-connection check) and
// is zero when it waits for nothing. Tests drive engines with a fake clock;
// a real driver passes time.Now and arms a timer or a read deadline:
//
//	for {
//		for {
//			out, ok = e.AppendDatagram(out[:0], time.Now())
//			if !ok { break }
//			conn.Write(out)
//		}
//		conn.SetReadDeadline(e.NextTimeout())
//		n, err := conn.Read(buf)
//		if err == nil { e.Receive(buf[:n], time.Now()) }
//		for m, ok := e.ReadMessage(); ok; m, ok = e.ReadMessage() { use(m) }
//	}
//
// An Engine is not safe for concurrent use; the driver serialises calls.
//
// # Limits
//
// Memory is bounded whatever the peer sends. Configurable (Config; zero
// means the default): the MTU (400..1492, default 1492; datagrams are at
// most MTU-28 bytes, so a carrier giving 1200-byte payloads uses 1228),
// MaxMessageSize (4 MiB), MaxQueueBytes (16 MiB of queued and
// unacknowledged messages), MaxReceiveBytes (16 MiB delivered but unread or
// held for ordering), MaxSplitParts (16384), MaxSplitMessages (64),
// MaxReassemblyBytes (16 MiB), MaxOutstandingSplits (32). Fixed: a
// reliable window of 32768 indexes, ordering indexes up to 32768 ahead and
// 4096 held messages per channel, duplicate detection over the last 8192
// datagram numbers, datagram numbers up to 32768 ahead, 4096 pending ACK
// and NAK ranges each, and ACK processing work of at most twice the
// in-flight window per ACK datagram.
//
// Steady traffic does not allocate: payload buffers (the send queue's
// copies, reassembled messages, messages held for ordering, delivered
// messages once the next one is read) are recycled through a per-engine
// pool that keeps at most the larger of MaxQueueBytes and MaxReceiveBytes.
package reliability
