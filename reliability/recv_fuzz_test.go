package reliability

import (
	"testing"

	"github.com/netrak/netrak/internal/rakcapture"
	"github.com/netrak/netrak/internal/rakwire"
)

// fuzzLimits are small so that the fuzzer reaches every limit quickly.
var fuzzLimits = recvConfig{
	reliableWindow: 256,
	split:          splitLimits{maxParts: 64, maxMessages: 4, maxBytes: 16 << 10},
	order:          orderLimits{maxAhead: 128, maxHeld: 16, maxHeldBytes: 8 << 10},
}

// checkRecvBounds asserts the receive side's memory bounds.
func checkRecvBounds(t *testing.T, p *recvPipeline) {
	t.Helper()
	if got := p.split.heldBytes(); got > fuzzLimits.split.maxBytes {
		t.Fatalf("reassembly holds %d bytes, limit %d", got, fuzzLimits.split.maxBytes)
	}
	if p.split.pending() > fuzzLimits.split.maxMessages {
		t.Fatalf("%d split messages, limit %d", p.split.pending(), fuzzLimits.split.maxMessages)
	}
	// A split message completing may enter a hold that is at its limit
	// (its parts were checked, not the whole), so the hold may exceed its
	// limits by one message of at most the reassembly limit.
	_, held := p.order.held()
	if held > fuzzLimits.order.maxHeldBytes+fuzzLimits.split.maxBytes {
		t.Fatalf("ordering holds %d bytes", held)
	}
	total := 0
	for c := range p.order.ch {
		n := len(p.order.ch[c].held)
		if n > fuzzLimits.order.maxHeld+1 {
			t.Fatalf("channel %d holds %d messages, limit %d", c, n, fuzzLimits.order.maxHeld)
		}
		total += n
	}
	if msgs, _ := p.order.held(); msgs != total {
		t.Fatalf("held() counts %d messages, channels hold %d", msgs, total)
	}
	if p.acks.pendingACK() > ackMaxPendingRanges || p.acks.pendingNAK() > ackMaxPendingRanges {
		t.Fatalf("%d ACK and %d NAK ranges pending", p.acks.pendingACK(), p.acks.pendingNAK())
	}
}

// FuzzRecvFrames drives the receive pipeline with well-formed datagrams of
// frames whose fields the fuzzer picks, close to the current windows so
// that they interact: duplicates, gaps, splits with inconsistent parts,
// sequenced and ordered mixes on a few channels, every limit. It checks
// that memory stays within the configured bounds and that no reliable
// index is delivered twice.
func FuzzRecvFrames(f *testing.F) {
	f.Add([]byte{0x63, 0, 0, 0, 0, 0, 5, 0x63, 1, 1, 0, 0, 0, 5})
	f.Add([]byte{0x7b, 0, 0, 0, 1, 3, 20, 0x7b, 1, 0, 0, 1, 2, 20, 0x1b, 2, 0, 0, 1, 1, 20})
	f.Add([]byte{0x21, 0, 0, 0, 0, 0, 3, 0x21, 0, 0, 1, 0, 0, 3, 0x24, 1, 2, 0, 0, 0, 3})
	f.Fuzz(func(t *testing.T, in []byte) {
		p := newRecvPipeline(fuzzLimits)
		var out []recvMessage
		var frames []rakwire.Frame
		var dnum, relBase uint32
		seenRel := map[uint32]bool{}
		payload := make([]byte, 255)
		flush := func() {
			if len(frames) == 0 {
				return
			}
			d := datagram(t, dnum, frames...)
			frames = frames[:0]
			var ok bool
			out, ok = p.receiveDatagram(out[:0], d)
			_ = ok
			for _, m := range out {
				if m.Reliability.IsReliable() && len(m.Payload) >= 4 && m.Payload[0] == 0xfe {
					idx := uint32(m.Payload[1]) | uint32(m.Payload[2])<<8 | uint32(m.Payload[3])<<16
					if seenRel[idx] {
						t.Fatalf("reliable message %d delivered twice", idx)
					}
					seenRel[idx] = true
				}
			}
			checkRecvBounds(t, &p)
			if len(in)%3 == 0 {
				p.acks.appendACK(nil, 1464)
				p.acks.appendNAK(nil, 1464)
			}
		}
		for len(in) >= 7 {
			op, a, b, c, d, e, n := in[0], in[1], in[2], in[3], in[4], in[5], int(in[6])
			in = in[7:]
			if op&0x80 != 0 {
				flush()
				dnum = seqAdd(dnum, uint32(a%8)) // gaps and duplicates
				if op&0x40 != 0 {
					dnum = seqAdd(dnum, uint32(b)<<8) // big jumps
				}
				continue
			}
			fr := rakwire.Frame{Reliability: rakwire.Reliability(op & 7)}
			fr.ReliableIndex = seqAdd(relBase, uint32(int8(a))&seqMask)
			if a == 0 {
				relBase = seqAdd(relBase, 1)
			}
			fr.OrderingIndex = uint32(b) % 64
			fr.SequencingIndex = uint32(c) % 16
			fr.OrderingChannel = d % 4
			if op&0x08 != 0 {
				fr.Split = true
				fr.SplitID = uint16(e % 4)
				fr.SplitCount = uint32(e/4)%70 + 1
				fr.SplitIndex = uint32(c) % fr.SplitCount
				if op&0x10 != 0 {
					fr.SplitCount = uint32(e) << 16 // hostile counts
				}
			}
			n = n%len(payload) + 1
			for i := range payload[:n] {
				payload[i] = byte(i)
			}
			if n >= 4 && !fr.Split && fr.Reliability.IsReliable() {
				payload[0] = 0xfe // tag: check exactly-once delivery
				payload[1], payload[2], payload[3] = byte(fr.ReliableIndex), byte(fr.ReliableIndex>>8), byte(fr.ReliableIndex>>16)
			}
			fr.Payload = append([]byte(nil), payload[:n]...)
			if op&0x20 != 0 || len(frames) >= 6 {
				flush()
				dnum = seqAdd(dnum, 1)
			}
			frames = append(frames, fr)
		}
		flush()
	})
}

// FuzzRecvDatagrams feeds raw datagrams (each prefixed by its length, one
// byte) to a pipeline; seeded with the start of each direction of the
// capture.
func FuzzRecvDatagrams(f *testing.F) {
	c := rakcapture.Load(f)
	for _, from := range []string{"client", "server"} {
		var seed []byte
		n := 0
		for _, d := range c {
			if d.From == from && rakwire.ClassifyDatagram(d.Data) == rakwire.DatagramData && len(d.Data) < 256 && n < 8 {
				seed = append(seed, byte(len(d.Data)))
				seed = append(seed, d.Data...)
				n++
			}
		}
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		p := newRecvPipeline(fuzzLimits)
		var out []recvMessage
		for len(in) > 0 {
			n := min(int(in[0]), len(in)-1)
			d := in[1 : 1+n]
			in = in[1+n:]
			out, _ = p.receiveDatagram(out[:0], d)
			checkRecvBounds(t, &p)
		}
	})
}
