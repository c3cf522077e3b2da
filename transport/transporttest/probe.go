package transporttest

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/netrak/netrak/transport"
)

// probeRound is how many datagrams ProbeLoss has in flight at most. A
// burst larger than a socket's receive buffer would be cut short by the
// kernel, not by the path under test: 64 small datagrams fit the smallest
// default Linux buffer (rmem_default, 208 KiB) with room to spare.
const probeRound = 64

// probeMarkerWait is how long ProbeLoss waits for a round's end marker
// before sending another. It only paces resends: a marker that was not lost
// but slow just arrives twice, and the copy is ignored.
const probeMarkerWait = 50 * time.Millisecond

// probeGiveUp bounds the resends of one marker, so that a broken path
// fails the test instead of hanging it.
const probeGiveUp = 400 // 20 s

// Probe is what ProbeLoss counted.
type Probe struct {
	// Sent and Received count the numbered datagrams.
	Sent, Received int
	// MarkersSent and MarkersReceived count the end-of-round markers,
	// which cross the path too and so are subject to its loss.
	MarkersSent, MarkersReceived int
}

// LossRate is the fraction of numbered datagrams that did not arrive.
func (p Probe) LossRate() float64 { return 1 - float64(p.Received)/float64(p.Sent) }

// ProbeLoss sends total numbered datagrams from src to the address via,
// which must lead to dst through a path that keeps their order and does not
// duplicate them (a relay with loss and a fixed latency, say), and counts
// how many reach dst. It sends in rounds of probeRound datagrams, each
// closed by a marker that is resent until it arrives; as the path keeps
// order, the marker's arrival means the whole round has been delivered or
// dropped. So no socket buffer ever overflows, and every
// datagram missing was dropped by the path, however slow the machine.
// Nothing else may write to dst meanwhile.
func ProbeLoss(t testing.TB, src, dst transport.Conn, via netip.AddrPort, total int) Probe {
	t.Helper()
	var p Probe
	out := make([]byte, 9)
	buf := make([]byte, 64)
	defer dst.SetReadDeadline(time.Time{})
	for round := uint32(0); p.Sent < total; round++ {
		for range min(probeRound, total-p.Sent) {
			out[0] = 'd'
			binary.BigEndian.PutUint64(out[1:], uint64(p.Sent))
			if err := src.WriteTo(out, via); err != nil {
				t.Fatalf("ProbeLoss: write: %v", err)
			}
			p.Sent++
		}
		marker := binary.BigEndian.AppendUint32([]byte{'m'}, round)
		for tries := 1; ; tries++ {
			if err := src.WriteTo(marker, via); err != nil {
				t.Fatalf("ProbeLoss: write marker: %v", err)
			}
			p.MarkersSent++
			if p.awaitMarker(t, dst, buf, round) {
				break
			}
			if tries >= probeGiveUp {
				t.Fatalf("ProbeLoss: no end marker for round %d after %d tries (%d of %d datagrams received)",
					round, tries, p.Received, p.Sent)
			}
		}
	}
	return p
}

// awaitMarker reads from dst, counting numbered datagrams, until the marker
// of round arrives (true) or none has come for probeMarkerWait (false).
// Markers of earlier rounds are resent copies and only counted.
func (p *Probe) awaitMarker(t testing.TB, dst transport.Conn, buf []byte, round uint32) bool {
	t.Helper()
	dst.SetReadDeadline(time.Now().Add(probeMarkerWait))
	for {
		n, _, err := dst.ReadFrom(buf)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return false
		}
		if err != nil {
			t.Fatalf("ProbeLoss: read: %v", err)
		}
		switch {
		case n == 9 && buf[0] == 'd':
			p.Received++
		case n == 5 && buf[0] == 'm':
			p.MarkersReceived++
			if binary.BigEndian.Uint32(buf[1:]) == round {
				return true
			}
		default:
			t.Fatalf("ProbeLoss: unexpected datagram %q at the destination", buf[:n])
		}
	}
}
