package netcode

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"hash/crc32"
	"math/rand/v2"
	"net"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/netrak/netrak/transport"
	"github.com/netrak/netrak/transport/simnet"
)

var soakMode = flag.String("netcode.soak", "short", "soak test length: short (10 s of simulated time) or long (10 simulated minutes)")

// soakPayload builds a payload of n bytes (n >= 16): the connection's client
// id, a counter, random filler, and a CRC-32 of everything before it.
func soakPayload(b []byte, rng *rand.Rand, id, counter uint64, n int) []byte {
	b = b[:0]
	b = binary.LittleEndian.AppendUint64(b, id)
	b = binary.LittleEndian.AppendUint32(b, uint32(counter))
	for len(b) < n-4 {
		b = append(b, byte(rng.Uint32()))
	}
	return binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

// soakCheck reports whether p is intact, and its client id and counter.
func soakCheck(p []byte) (id uint64, counter uint32, ok bool) {
	if len(p) < 16 {
		return 0, 0, false
	}
	body := p[:len(p)-4]
	if crc32.ChecksumIEEE(body) != binary.LittleEndian.Uint32(p[len(p)-4:]) {
		return 0, 0, false
	}
	return binary.LittleEndian.Uint64(p), binary.LittleEndian.Uint32(p[8:]), true
}

type soakTally struct {
	dials, dialFails  atomic.Uint64
	sent, echoed      atomic.Uint64
	atServer, atHome  atomic.Uint64 // intact payloads received by servers and back at clients
	corrupt, repeated atomic.Uint64
}

// TestSoak runs 2 servers and 64 clients that connect, send payloads of
// random size at random rates, and disconnect, over and over, on a network
// with 10% loss, 10% duplication and 10% reordering. Servers echo what
// they receive. Every payload that arrives must be intact and arrive once;
// nothing may leak.
func TestSoak(t *testing.T) {
	duration := 10 * time.Second
	switch *soakMode {
	case "short":
	case "long":
		duration = 10 * time.Minute
	default:
		t.Fatalf("-netcode.soak=%q: want short or long", *soakMode)
	}
	var tally soakTally
	var heapMid, heapEnd uint64

	synctest.Test(t, func(t *testing.T) {
		n := simnet.New(42)
		defer n.Close()
		n.SetDefault(transport.Impairment{
			Latency: 20 * time.Millisecond, Jitter: 10 * time.Millisecond,
			Loss: 0.1, Duplicate: 0.1, Reorder: 0.1,
		})
		servers := []netip.AddrPort{netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:40000")}
		var serverWG sync.WaitGroup
		conns := make([]*ServerConn, len(servers))
		for i, addr := range servers {
			l, err := n.Listen(addr)
			if err != nil {
				t.Fatal(err)
			}
			s, err := ListenServer(l, ServerConfig{ProtocolID: testProtocolID, PrivateKey: testServerKey, MaxClients: 40})
			if err != nil {
				t.Fatal(err)
			}
			conns[i] = s
			serverWG.Add(2)
			var mu sync.Mutex // guards seen
			seen := map[uint64]map[uint32]bool{}
			go func() { // echo every intact payload
				defer serverWG.Done()
				for {
					m, err := s.Receive(context.Background())
					if err != nil {
						return
					}
					id, counter, ok := soakCheck(m.Payload)
					if !ok || id != m.ClientID {
						tally.corrupt.Add(1)
						continue
					}
					mu.Lock()
					if seen[id] == nil {
						seen[id] = map[uint32]bool{}
					}
					again := seen[id][counter]
					seen[id][counter] = true
					mu.Unlock()
					if again {
						tally.repeated.Add(1)
						continue
					}
					tally.atServer.Add(1)
					if s.Send(m.ClientIndex, m.Payload) == nil {
						tally.echoed.Add(1)
					}
				}
			}()
			go func() { // forget the bookkeeping of clients that left
				defer serverWG.Done()
				for {
					e, err := s.NextEvent(context.Background())
					if err != nil {
						return
					}
					if e.Kind == EventDisconnected {
						mu.Lock()
						delete(seen, e.ClientID)
						mu.Unlock()
					}
				}
			}()
		}

		end := time.Now().Add(duration)
		var nextID atomic.Uint64
		var clientWG sync.WaitGroup
		for k := range 64 {
			clientWG.Add(1)
			go func() {
				defer clientWG.Done()
				soakClient(t, n, k, servers, end, &nextID, &tally)
			}()
		}
		time.Sleep(duration / 2)
		heapMid = heapInUse()
		clientWG.Wait()
		heapEnd = heapInUse()
		for _, s := range conns {
			s.Close()
		}
		serverWG.Wait()
	})

	t.Logf("%s soak: %d dials (%d failed), %d payloads sent, %d reached a server, %d echoed, %d came back; heap %d KiB mid-run, %d KiB at the end",
		duration, tally.dials.Load(), tally.dialFails.Load(), tally.sent.Load(), tally.atServer.Load(),
		tally.echoed.Load(), tally.atHome.Load(), heapMid>>10, heapEnd>>10)
	if c, r := tally.corrupt.Load(), tally.repeated.Load(); c != 0 || r != 0 {
		t.Errorf("%d corrupt and %d repeated payloads delivered", c, r)
	}
	// With 10% loss each way, about 90% arrive and 81% make the round trip;
	// payloads in flight at each disconnect are lost too.
	sent := tally.sent.Load()
	if sent == 0 || tally.atServer.Load() < sent*8/10 || tally.atHome.Load() < sent*7/10 {
		t.Errorf("too few payloads delivered: %d sent, %d at servers, %d back", sent, tally.atServer.Load(), tally.atHome.Load())
	}
	if tally.dials.Load() < 64*2 {
		t.Errorf("only %d connections made", tally.dials.Load())
	}
	if heapEnd > heapMid+16<<20 {
		t.Errorf("heap grew from %d KiB to %d KiB", heapMid>>10, heapEnd>>10)
	}
	// synctest.Test has already waited for every goroutine of the bubble
	// (and failed on any left blocked); check that none escaped it either.
	// Counting with runtime.NumGoroutine is not reliable here: heapInUse's
	// runtime.GC wakes the finalizer goroutine, which counts as a user
	// goroutine while it runs finalizers.
	if leaked := netrakGoroutines(); len(leaked) > 0 {
		t.Errorf("%d goroutines still running netrak code after the soak:\n%s", len(leaked), strings.Join(leaked, "\n\n"))
	}
}

// netrakGoroutines returns the stacks of the goroutines, other than the
// caller, that are running code of this module.
func netrakGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	// The caller's own stack comes first.
	stacks := strings.Split(string(buf), "\n\n")[1:]
	var out []string
	for _, s := range stacks {
		if strings.Contains(s, "github.com/netrak/netrak/") {
			out = append(out, s)
		}
	}
	return out
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// soakClient connects, talks and disconnects until end.
func soakClient(t *testing.T, n *simnet.Network, k int, servers []netip.AddrPort, end time.Time, nextID *atomic.Uint64, tally *soakTally) {
	rng := rand.New(rand.NewPCG(uint64(k), 7))
	addr := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(k >> 8), byte(k)}), 50000)
	buf := make([]byte, 0, MaxPayloadBytes)
	for time.Now().Before(end) {
		order := []netip.AddrPort{servers[0], servers[1]}
		if rng.IntN(2) == 1 {
			order[0], order[1] = order[1], order[0]
		}
		id := nextID.Add(1)
		tok, err := GenerateConnectToken(&TokenParams{ClientID: id, PublicAddresses: order,
			ProtocolID: testProtocolID, PrivateKey: testServerKey})
		if err != nil {
			t.Error(err)
			return
		}
		l, err := n.Listen(addr)
		if err != nil {
			t.Error(err)
			return
		}
		tally.dials.Add(1)
		c, err := Dial(context.Background(), l, tok, ClientConfig{ProtocolID: testProtocolID})
		if err != nil {
			tally.dialFails.Add(1)
			time.Sleep(time.Duration(rng.IntN(500)) * time.Millisecond)
			continue
		}
		var recvWG sync.WaitGroup
		recvWG.Add(1)
		go func() {
			defer recvWG.Done()
			seen := map[uint32]bool{}
			for {
				m, err := c.Receive(context.Background())
				if err != nil {
					if !errors.Is(err, net.ErrClosed) {
						t.Errorf("client %d: Receive: %v", id, err)
					}
					return
				}
				gotID, counter, ok := soakCheck(m.Payload)
				switch {
				case !ok || gotID != id:
					tally.corrupt.Add(1)
				case seen[counter]:
					tally.repeated.Add(1)
				default:
					seen[counter] = true
					tally.atHome.Add(1)
				}
			}
		}()
		stay := time.Now().Add(time.Duration(500+rng.IntN(3000)) * time.Millisecond)
		for counter := uint64(0); time.Now().Before(stay) && time.Now().Before(end); counter++ {
			p := soakPayload(buf, rng, id, counter, 16+rng.IntN(MaxPayloadBytes-16+1))
			if err := c.Send(p); err != nil {
				t.Errorf("client %d: Send: %v", id, err)
				break
			}
			tally.sent.Add(1)
			time.Sleep(time.Duration(10+rng.IntN(40)) * time.Millisecond)
		}
		// Let the last echoes come home, then leave.
		time.Sleep(200 * time.Millisecond)
		c.Close()
		recvWG.Wait()
		time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
	}
}
