package reliability

import (
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"testing"
)

// capturedDatagram is one UDP payload of testdata/raknet_cpp_session.json,
// a loopback session between two peers built on the original RakNet C++
// library (4.081, protocol 6).
type capturedDatagram struct {
	T          float64 `json:"t"`
	From       string  `json:"from"` // "client" or "server"
	ClientPort int     `json:"client_port"`
	Hex        string  `json:"hex"`
	Data       []byte  `json:"-"`
}

type capture struct {
	Description string             `json:"description"`
	ServerPort  int                `json:"server_port"`
	Datagrams   []capturedDatagram `json:"datagrams"`
}

func loadCapture(tb testing.TB) *capture {
	tb.Helper()
	raw, err := os.ReadFile("testdata/raknet_cpp_session.json")
	if err != nil {
		tb.Fatal(err)
	}
	var c capture
	if err := json.Unmarshal(raw, &c); err != nil {
		tb.Fatal(err)
	}
	for i := range c.Datagrams {
		d := &c.Datagrams[i]
		if d.Data, err = hex.DecodeString(d.Hex); err != nil {
			tb.Fatalf("datagram %d: %v", i, err)
		}
	}
	if len(c.Datagrams) != 262 {
		tb.Fatalf("capture holds %d datagrams, want 262", len(c.Datagrams))
	}
	return &c
}

// connected returns the capture's connected datagrams (valid bit set).
func (c *capture) connected() []capturedDatagram {
	var out []capturedDatagram
	for _, d := range c.Datagrams {
		if ClassifyDatagram(d.Data) != DatagramOffline {
			out = append(out, d)
		}
	}
	return out
}

// TestCaptureDecodes checks that every datagram of the original library's
// session is either an offline message (ids 0x01, 0x1c, 0x05..0x08) or a
// connected datagram that decodes completely and re-encodes byte for byte.
func TestCaptureDecodes(t *testing.T) {
	c := loadCapture(t)
	counts := map[DatagramType]int{}
	frames := 0
	for i, d := range c.Datagrams {
		typ := ClassifyDatagram(d.Data)
		counts[typ]++
		switch typ {
		case DatagramOffline:
			switch d.Data[0] {
			case 0x01, 0x1c, 0x05, 0x06, 0x07, 0x08:
			default:
				t.Errorf("datagram %d: unexpected offline id %#x", i, d.Data[0])
			}
		case DatagramACK, DatagramNAK:
			var a Ack
			if err := ParseAck(d.Data, &a); err != nil {
				t.Fatalf("datagram %d (%s): %v", i, typ, err)
			}
			if len(a.Ranges) == 0 {
				t.Errorf("datagram %d: empty range list", i)
			}
			if got := a.Append(nil); string(got) != string(d.Data) {
				t.Errorf("datagram %d: re-encoded\n%x\nwant\n%x", i, got, d.Data)
			}
			if a.Len() != len(d.Data) {
				t.Errorf("datagram %d: Len %d, want %d", i, a.Len(), len(d.Data))
			}
		case DatagramData:
			h, r, err := ParseDataDatagram(d.Data)
			if err != nil {
				t.Fatalf("datagram %d: %v", i, err)
			}
			if d.Data[0] != 0x84 && d.Data[0] != 0x8c {
				t.Errorf("datagram %d: header %#x, the original library sends 0x84 or 0x8c", i, d.Data[0])
			}
			out := h.Append(nil)
			var f Frame
			n := 0
			for {
				err := r.Next(&f)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("datagram %d frame %d: %v", i, n, err)
				}
				if f.Len() > len(d.Data)-DataHeaderLen {
					t.Fatalf("datagram %d: frame longer than datagram", i)
				}
				out = f.Append(out)
				n++
			}
			if n == 0 {
				t.Errorf("datagram %d: no frames", i)
			}
			frames += n
			if string(out) != string(d.Data) {
				t.Errorf("datagram %d: re-encoded\n%x\nwant\n%x", i, out, d.Data)
			}
			if len(d.Data) > MaxMTU-28 {
				t.Errorf("datagram %d: %d bytes, over the MTU", i, len(d.Data))
			}
		}
	}
	t.Logf("offline %d, data %d (%d frames), ack %d, nak %d",
		counts[DatagramOffline], counts[DatagramData], frames, counts[DatagramACK], counts[DatagramNAK])
	if counts[DatagramData] == 0 || counts[DatagramACK] == 0 || counts[DatagramOffline] != 6 {
		t.Errorf("unexpected mix of datagrams: %v", counts)
	}
}
