package raknet

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
)

// TestConnSteadyStateNoAllocs checks that a connection whose reader keeps
// up moves messages without allocating: Write on one side, Read or
// ReadMessageInto on the other, over UDP loopback, every goroutine of
// both connections and the listener counted.
//
// Allocation is counted exactly, over windows of rounds after a warm-up.
// The reliability engines' windows and pools grow to the largest number of
// datagrams in flight they have seen, which on a real socket depends on
// scheduling; that growth is bounded and stops, so the test passes once a
// whole window runs without a single allocation. A per-message allocation
// fails every window.
func TestConnSteadyStateNoAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation count is checked in the full run")
	}
	l := listenLoopback(t, ListenConfig{})
	client := dialLoopback(t, DialConfig{}, l.Addr())
	defer client.Close()
	server, err := l.AcceptConn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	for _, size := range []int{64, 1024} {
		t.Run(fmt.Sprintf("%dB", size), func(t *testing.T) {
			msg := benchMessage(size)
			msg[size-1] = 0xee
			rbuf, mbuf := make([]byte, 2048), make([]byte, 2048)
			// One round: client to server through Write and Read, server
			// to client through Write and ReadMessageInto.
			round := func() {
				if _, err := client.Write(msg); err != nil {
					t.Fatal(err)
				}
				n, err := server.Read(rbuf)
				if err != nil || !bytes.Equal(rbuf[:n], msg) {
					t.Fatalf("server read %d bytes, %v", n, err)
				}
				if _, err := server.Write(msg); err != nil {
					t.Fatal(err)
				}
				m, err := client.ReadMessageInto(mbuf)
				if err != nil || !bytes.Equal(m.Data, msg) || &m.Data[0] != &mbuf[0] {
					t.Fatalf("client read %d bytes, %v", len(m.Data), err)
				}
			}
			const rounds, windows = 500, 20
			for range 4 * rounds {
				round()
			}
			var counts []uint64
			for range windows {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				for range rounds {
					round()
				}
				runtime.ReadMemStats(&after)
				n := after.Mallocs - before.Mallocs
				if n == 0 {
					t.Logf("no allocation in %d rounds after %d windows with %v", rounds, len(counts), counts)
					return
				}
				counts = append(counts, n)
			}
			t.Errorf("every window of %d rounds (%d messages each way) allocated: %v", rounds, rounds, counts)
		})
	}
}
