package reliability

import (
	"io"
	"testing"

	"github.com/netrak/netrak/internal/rakcapture"
	"github.com/netrak/netrak/internal/rakwire"
)

// connected returns the connected datagrams (valid bit set) of the
// original library's session.
func connected(ds []rakcapture.Datagram) []rakcapture.Datagram {
	var out []rakcapture.Datagram
	for _, d := range ds {
		if rakwire.ClassifyDatagram(d.Data) != rakwire.DatagramOffline {
			out = append(out, d)
		}
	}
	return out
}

// TestCaptureDecodes checks that every datagram of the original library's
// session is either an offline message (ids 0x01, 0x1c, 0x05..0x08) or a
// connected datagram that decodes completely and re-encodes byte for byte.
func TestCaptureDecodes(t *testing.T) {
	counts := map[rakwire.DatagramType]int{}
	frames := 0
	for i, d := range rakcapture.Load(t) {
		typ := rakwire.ClassifyDatagram(d.Data)
		counts[typ]++
		switch typ {
		case rakwire.DatagramOffline:
			switch d.Data[0] {
			case 0x01, 0x1c, 0x05, 0x06, 0x07, 0x08:
			default:
				t.Errorf("datagram %d: unexpected offline id %#x", i, d.Data[0])
			}
		case rakwire.DatagramACK, rakwire.DatagramNAK:
			var a rakwire.Ack
			if _, err := rakwire.ParseAck(d.Data, &a); err != nil {
				t.Fatalf("datagram %d (%s): %v", i, typ, err)
			}
			if len(a.Ranges) == 0 {
				t.Errorf("datagram %d: empty range list", i)
			}
			if got := encodeAck(t, a); string(got) != string(d.Data) {
				t.Errorf("datagram %d: re-encoded\n%x\nwant\n%x", i, got, d.Data)
			}
			if a.Len() != len(d.Data) {
				t.Errorf("datagram %d: Len %d, want %d", i, a.Len(), len(d.Data))
			}
		case rakwire.DatagramData:
			h, r, err := parseDataDatagram(d.Data)
			if err != nil {
				t.Fatalf("datagram %d: %v", i, err)
			}
			var parsed []rakwire.Frame
			if d.Data[0] != 0x84 && d.Data[0] != 0x8c {
				t.Errorf("datagram %d: header %#x, the original library sends 0x84 or 0x8c", i, d.Data[0])
			}
			var f rakwire.Frame
			n := 0
			for {
				err := r.Next(&f)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("datagram %d frame %d: %v", i, n, err)
				}
				if f.Len() > len(d.Data)-rakwire.DataHeaderLen {
					t.Fatalf("datagram %d: frame longer than datagram", i)
				}
				parsed = append(parsed, f)
				n++
			}
			if n == 0 {
				t.Errorf("datagram %d: no frames", i)
			}
			frames += n
			if out := appendDatagram(t, nil, h, parsed...); string(out) != string(d.Data) {
				t.Errorf("datagram %d: re-encoded\n%x\nwant\n%x", i, out, d.Data)
			}
			if len(d.Data) > MaxMTU-28 {
				t.Errorf("datagram %d: %d bytes, over the MTU", i, len(d.Data))
			}
		}
	}
	t.Logf("offline %d, data %d (%d frames), ack %d, nak %d",
		counts[rakwire.DatagramOffline], counts[rakwire.DatagramData], frames, counts[rakwire.DatagramACK], counts[rakwire.DatagramNAK])
	if counts[rakwire.DatagramData] == 0 || counts[rakwire.DatagramACK] == 0 || counts[rakwire.DatagramOffline] != 6 {
		t.Errorf("unexpected mix of datagrams: %v", counts)
	}
}
