package rakcapture

import "testing"

func TestLoad(t *testing.T) {
	ds := Load(t)
	from := map[string]int{}
	for _, d := range ds {
		from[d.From]++
		if len(d.Data) == 0 {
			t.Fatalf("empty datagram at %v s", d.T)
		}
	}
	if from["client"] == 0 || from["server"] == 0 || from["client"]+from["server"] != Datagrams {
		t.Errorf("senders %v", from)
	}
	// Each call decodes afresh.
	ds[0].Data[0] ^= 0xff
	if again := Load(t); again[0].Data[0] == ds[0].Data[0] {
		t.Error("Load returned shared storage")
	}
}

func TestUserMessage(t *testing.T) {
	m := UserMessage(9)
	if len(m) != 5 || m[0] != 0x86 || m[1] != 9 || m[2] != 0 {
		t.Errorf("message 9: % x", m)
	}
	if m := UserMessage(7); len(m) != 70000 || m[5] != byte(7*31+5*7) {
		t.Errorf("message 7: %d bytes, byte 5 %#x", len(m), m[5])
	}
}
