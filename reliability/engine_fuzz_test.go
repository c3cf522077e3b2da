package reliability

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/netrak/netrak/internal/rakcapture"
	"github.com/netrak/netrak/internal/rakwire"
)

// FuzzEngineReceive drives an engine with arbitrary datagrams (the input
// is cut into datagrams by u16 length prefixes, each followed by a time
// step) and checks that it never panics and that its memory stays within
// the configured limits.
func FuzzEngineReceive(f *testing.F) {
	var seed []byte
	for i, d := range connected(rakcapture.Load(f)) {
		if d.From != "client" {
			continue
		}
		seed = binary.BigEndian.AppendUint16(seed, uint16(len(d.Data)))
		seed = append(seed, d.Data...)
		seed = append(seed, 3)
		if i%8 == 7 {
			f.Add(seed)
			seed = nil
		}
	}
	f.Add(seed)
	f.Add([]byte{0, 3, 0xc0, 0xff, 0xff, 1})
	cfg := Config{
		MTU:                576,
		MaxReceiveBytes:    64 << 10,
		MaxSplitParts:      64,
		MaxSplitMessages:   4,
		MaxReassemblyBytes: 32 << 10,
		MaxQueueBytes:      64 << 10,
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		e, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		now := epoch
		// Something in flight, so ACKs and NAKs have work to do.
		for i := range 4 {
			e.Send(make([]byte, 100+i*400), Reliability(i%8), uint8(i), Priority(i%4), now)
		}
		var out []byte
		for len(in) >= 2 {
			n := int(binary.BigEndian.Uint16(in))
			in = in[2:]
			n = min(n, len(in))
			e.Receive(in[:n], now)
			in = in[n:]
			if len(in) > 0 {
				now = now.Add(time.Duration(in[0]) * time.Millisecond)
				in = in[1:]
			}
			for {
				var ok bool
				out, ok = e.AppendDatagram(out[:0], now)
				if !ok {
					break
				}
				if len(out) > e.MaxDatagramSize() {
					t.Fatalf("datagram of %d bytes", len(out))
				}
				checkOutgoingAck(t, out)
			}
			s := e.Stats()
			// One datagram's worth of frames may land after the check
			// that admits it, plus one reassembled message.
			if s.ReceiveQueueBytes > cfg.MaxReceiveBytes+cfg.MaxReassemblyBytes+e.MaxDatagramSize() {
				t.Fatalf("receive queue %d bytes", s.ReceiveQueueBytes)
			}
			if s.ReassemblyBytes > cfg.MaxReassemblyBytes {
				t.Fatalf("reassembly %d bytes", s.ReassemblyBytes)
			}
			if s.HeldSendBytes > cfg.MaxQueueBytes {
				t.Fatalf("send side holds %d bytes", s.HeldSendBytes)
			}
			if e.pool.bufs.Retained() > cfg.MaxQueueBytes {
				t.Fatalf("pool keeps %d bytes", e.pool.bufs.Retained())
			}
		}
	})
}

// checkOutgoingAck fails unless an ACK or NAK the engine produced parses
// and lists its ranges ascending and merged, as patched RakNet builds
// require; other datagrams pass.
func checkOutgoingAck(t *testing.T, b []byte) {
	t.Helper()
	if c := rakwire.ClassifyDatagram(b); c != rakwire.DatagramACK && c != rakwire.DatagramNAK {
		return
	}
	var a rakwire.Ack
	if _, err := rakwire.ParseAck(b, &a); err != nil {
		t.Fatalf("engine sent a malformed ACK/NAK: %v", err)
	}
	for i := 1; i < len(a.Ranges); i++ {
		if a.Ranges[i].Min <= a.Ranges[i-1].Max+1 {
			t.Fatalf("ranges not ascending and merged: %v", a.Ranges)
		}
	}
}
