package reliability

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/netrak/netrak/internal/rakcapture"
	"github.com/netrak/netrak/internal/rakwire"
)

// replayCapture feeds one direction's data datagrams through a receive
// pipeline and returns copies of the messages delivered, and the ranges it
// acknowledged.
func replayCapture(t *testing.T, c []rakcapture.Datagram, from string) ([]recvMessage, []rakwire.Range, *recvPipeline) {
	t.Helper()
	p := newRecvPipeline(recvConfig{})
	var delivered []recvMessage
	var acked []rakwire.Range
	var out []recvMessage
	for _, d := range c {
		if d.From != from || rakwire.ClassifyDatagram(d.Data) != rakwire.DatagramData {
			continue
		}
		var ok bool
		out, ok = p.receiveDatagram(out[:0], d.Data)
		if !ok {
			t.Fatalf("%s datagram refused: %+v", from, p.drops)
		}
		for _, m := range out {
			m.Payload = bytes.Clone(m.Payload)
			delivered = append(delivered, m)
		}
		for p.acks.pendingACK() > 0 {
			var a rakwire.Ack
			if _, err := rakwire.ParseAck(ackDatagram(t, &p.acks, false, MaxMTU-UDPIPOverhead), &a); err != nil {
				t.Fatal(err)
			}
			acked = append(acked, a.Ranges...)
		}
	}
	if p.acks.pendingNAK() != 0 {
		t.Errorf("%s: NAKs for a lossless capture", from)
	}
	if p.drops != (recvDrops{}) {
		t.Errorf("%s: drops %+v", from, p.drops)
	}
	if p.heldBytes() != 0 {
		t.Errorf("%s: %d bytes still held", from, p.heldBytes())
	}
	return delivered, acked, &p
}

// TestCaptureReplayMessages reproduces, from the original library's bytes,
// the messages each side received: the handshake, pings and pongs, the 16
// user messages exactly and in order, and the disconnect.
func TestCaptureReplayMessages(t *testing.T) {
	c := rakcapture.Load(t)
	for _, dir := range []struct {
		from      string
		handshake []byte // message ids before the first user message, in order
		last      byte
	}{
		{"client", []byte{0x09, 0x13, 0x00}, 0x15},
		{"server", []byte{0x10, 0x00, 0x03}, 0},
	} {
		msgs, acked, _ := replayCapture(t, c, dir.from)
		var ids []byte
		user := 0
		for _, m := range msgs {
			ids = append(ids, m.Payload[0])
			if m.Payload[0] != 0x86 {
				continue
			}
			if want := rakcapture.UserMessage(user); !bytes.Equal(m.Payload, want) {
				t.Errorf("from %s: user message %d: %d bytes, want %d (equal %v)", dir.from, user, len(m.Payload), len(want), bytes.Equal(m.Payload, want))
			}
			if m.Reliability != ReliableOrdered || m.Channel != 0 {
				t.Errorf("from %s: user message %d: %v on channel %d", dir.from, user, m.Reliability, m.Channel)
			}
			user++
		}
		t.Logf("from %s: %d messages, ids % x", dir.from, len(msgs), ids)
		if user != rakcapture.UserMessages {
			t.Errorf("from %s: %d user messages, want %d", dir.from, user, rakcapture.UserMessages)
		}
		if !bytes.HasPrefix(ids, dir.handshake) {
			t.Errorf("from %s: ids start % x, want % x", dir.from, ids[:min(len(ids), len(dir.handshake))], dir.handshake)
		}
		if dir.last != 0 && ids[len(ids)-1] != dir.last {
			t.Errorf("from %s: last id %#x, want %#x", dir.from, ids[len(ids)-1], dir.last)
		}
		// What we acknowledge is what the original library acknowledged.
		other := "server"
		if dir.from == "server" {
			other = "client"
		}
		var theirs []rakwire.Range
		for _, d := range c {
			if d.From == other && rakwire.ClassifyDatagram(d.Data) == rakwire.DatagramACK {
				var a rakwire.Ack
				if _, err := rakwire.ParseAck(d.Data, &a); err != nil {
					t.Fatal(err)
				}
				theirs = append(theirs, a.Ranges...)
			}
		}
		if got, want := rangeNumbers(acked), rangeNumbers(theirs); got != want {
			t.Errorf("from %s: we ACK %s, the original library ACKed %s", dir.from, got, want)
		}
	}
}

// rangeNumbers describes the set of numbers in rs as sorted, merged runs.
func rangeNumbers(rs []rakwire.Range) string {
	var nums []uint32
	for _, r := range rs {
		for n := r.Min; n <= r.Max; n++ {
			nums = append(nums, n)
		}
	}
	slices.Sort(nums)
	// Merge runs of consecutive numbers, and duplicates.
	var runs []rakwire.Range
	for _, n := range nums {
		if k := len(runs); k > 0 && n <= runs[k-1].Max+1 {
			runs[k-1].Max = n
			continue
		}
		runs = append(runs, rakwire.Range{Min: n, Max: n})
	}
	return fmt.Sprint(runs)
}
