package raknet

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/netrak/netrak/reliability"
)

// echoSizes are the message sizes of the echo tests: small, one datagram,
// and split over many.
var echoSizes = [...]int{5, 5, 100, 576, 1400, 1500, 5000, 70000}

// echoMessage is message i of the echo tests: 0x86, the index as a LE
// u32, then (i*31 + k*7) mod 256.
func echoMessage(i int) []byte {
	b := make([]byte, echoSizes[i%len(echoSizes)])
	b[0] = IDUserPacketEnum
	binary.LittleEndian.PutUint32(b[1:], uint32(i))
	for k := 5; k < len(b); k++ {
		b[k] = byte(i*31 + k*7)
	}
	return b
}

func listenLoopback(t testing.TB, cfg ListenConfig) *Listener {
	t.Helper()
	l, err := Listen("udp4", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// serveEcho accepts connections and echoes every message back with the
// reliability and channel it came with, until the listener closes.
func serveEcho(l *Listener) {
	for {
		c, err := l.AcceptConn(context.Background())
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			for {
				m, err := c.ReadMessage()
				if err != nil {
					return
				}
				r := m.Reliability
				if r == reliability.Unreliable {
					r = reliability.Reliable // keep the test deterministic
				}
				if _, err := c.WriteMessage(m.Data, r, m.Channel, reliability.Medium); err != nil {
					return
				}
			}
		}()
	}
}

func dialLoopback(t testing.TB, d DialConfig, addr net.Addr) *Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := d.DialContext(ctx, "udp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestConnEchoLoopback(t *testing.T) {
	for _, tt := range []struct {
		name    string
		lc      ListenConfig
		dc      DialConfig
		version uint8
	}{
		{"bedrock-cookies", ListenConfig{}, DialConfig{}, 11},
		{"original-no-cookies", ListenConfig{Protocols: []uint8{6, 10, 11}, DisableCookies: true}, DialConfig{Protocol: 6}, 6},
		{"original-cookies", ListenConfig{Protocols: []uint8{6, 10, 11}}, DialConfig{Protocol: 6}, 6},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := listenLoopback(t, tt.lc)
			go serveEcho(l)
			c := dialLoopback(t, tt.dc, l.Addr())
			defer c.Close()
			if c.RemoteGUID() != l.GUID() {
				t.Errorf("server GUID %#x, listener says %#x", c.RemoteGUID(), l.GUID())
			}
			if c.MTU() != MaxMTU {
				t.Errorf("MTU %d, want %d on loopback", c.MTU(), MaxMTU)
			}
			const n = 200
			go func() {
				for i := range n {
					if _, err := c.Write(echoMessage(i)); err != nil {
						t.Error(err)
						return
					}
				}
			}()
			c.SetReadDeadline(time.Now().Add(20 * time.Second))
			for i := range n {
				m, err := c.ReadMessage()
				if err != nil {
					t.Fatalf("message %d: %v", i, err)
				}
				if !bytes.Equal(m.Data, echoMessage(i)) {
					t.Fatalf("message %d: got %d bytes, want %d", i, len(m.Data), len(echoMessage(i)))
				}
				if m.Reliability != reliability.ReliableOrdered || m.Channel != 0 {
					t.Fatalf("message %d came %v on channel %d", i, m.Reliability, m.Channel)
				}
			}
			if c.RTT() <= 0 {
				t.Errorf("RTT %v after %d round trips", c.RTT(), n)
			}
			if st := c.Stats(); st.MessagesDelivered < n {
				t.Errorf("stats: %d messages delivered", st.MessagesDelivered)
			}
		})
	}
}

func TestConnCloseGivesPeerEOF(t *testing.T) {
	l := listenLoopback(t, ListenConfig{})
	accepted := make(chan *Conn, 1)
	go func() {
		c, err := l.AcceptConn(context.Background())
		if err == nil {
			accepted <- c
		}
	}()
	c := dialLoopback(t, DialConfig{}, l.Addr())
	s := <-accepted
	defer s.Close()
	// Data written just before Close arrives before the EOF.
	msg := echoMessage(7) // split
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	s.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(s)
	if err != nil {
		t.Fatalf("ReadAll: %v", err)
	}
	if !bytes.Equal(got, msg) {
		t.Fatalf("got %d bytes before EOF, want %d", len(got), len(msg))
	}
	if _, err := s.Write([]byte{0x86}); !errors.Is(err, ErrPeerClosed) {
		t.Errorf("write after peer close: %v, want ErrPeerClosed", err)
	}
	if _, err := c.Read(make([]byte, 10)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("read after Close: %v, want net.ErrClosed", err)
	}
	if _, err := c.Write([]byte{0x86}); !errors.Is(err, net.ErrClosed) {
		t.Errorf("write after Close: %v, want net.ErrClosed", err)
	}
}

func TestConnPartialRead(t *testing.T) {
	l := listenLoopback(t, ListenConfig{})
	go serveEcho(l)
	c := dialLoopback(t, DialConfig{}, l.Addr())
	defer c.Close()
	msg := echoMessage(2) // 100 bytes
	c.Write(msg)
	c.Write(echoMessage(3))
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 30)
	var got []byte
	for len(got) < len(msg) {
		n, err := c.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		if n > 30 {
			t.Fatalf("read %d into 30 bytes", n)
		}
		got = append(got, buf[:n]...)
	}
	if !bytes.Equal(got, msg) {
		t.Fatal("partial reads do not reassemble the message")
	}
	// A read never spans two messages.
	m, err := c.ReadMessage()
	if err != nil || !bytes.Equal(m.Data, echoMessage(3)) {
		t.Fatalf("next message: %d bytes, %v", len(m.Data), err)
	}
}

// ReadMessageInto fills the caller's buffer when it is large enough,
// hands back a larger one when not, and after a partial Read returns the
// rest of the message, as ReadMessage does.
func TestConnReadMessageInto(t *testing.T) {
	l := listenLoopback(t, ListenConfig{})
	go serveEcho(l)
	c := dialLoopback(t, DialConfig{}, l.Addr())
	defer c.Close()
	for i := 2; i <= 4; i++ { // 100, 576 and 1400 bytes
		if _, err := c.WriteMessage(echoMessage(i), reliability.ReliableOrdered, 3, reliability.High); err != nil {
			t.Fatal(err)
		}
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 600)
	m, err := c.ReadMessageInto(buf)
	if err != nil || !bytes.Equal(m.Data, echoMessage(2)) || &m.Data[0] != &buf[0] {
		t.Fatalf("first message: %d bytes, %v, in the buffer passed: %v", len(m.Data), err, err == nil && &m.Data[0] == &buf[0])
	}
	if m.Reliability != reliability.ReliableOrdered || m.Channel != 3 {
		t.Errorf("first message came as %v on channel %d", m.Reliability, m.Channel)
	}
	if n, err := c.Read(buf[:76]); n != 76 || err != nil {
		t.Fatalf("partial read: %d, %v", n, err)
	}
	m, err = c.ReadMessageInto(buf[:0])
	if err != nil || !bytes.Equal(m.Data, echoMessage(3)[76:]) || &m.Data[0] != &buf[0] {
		t.Fatalf("rest of the second message: %d bytes, %v", len(m.Data), err)
	}
	m, err = c.ReadMessageInto(buf)
	if err != nil || !bytes.Equal(m.Data, echoMessage(4)) {
		t.Fatalf("third message, larger than the buffer: %d bytes, %v", len(m.Data), err)
	}
}

// The original library keeps idle connections alive with a reliable
// one-byte ID_DETECT_LOST_CONNECTIONS and discards it on receipt; so does
// a Conn, instead of handing it to the application.
func TestConnDiscardsLostConnectionKeepAlive(t *testing.T) {
	l := listenLoopback(t, ListenConfig{})
	go serveEcho(l)
	c := dialLoopback(t, DialConfig{}, l.Addr())
	defer c.Close()
	for _, msg := range [][]byte{{IDDetectLostConnections}, echoMessage(0), {IDDetectLostConnections}, echoMessage(1)} {
		if _, err := c.WriteMessage(msg, reliability.ReliableOrdered, 0, reliability.Medium); err != nil {
			t.Fatal(err)
		}
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for i := range 2 {
		m, err := c.ReadMessage()
		if err != nil || !bytes.Equal(m.Data, echoMessage(i)) {
			t.Fatalf("message %d: % x, %v", i, m.Data, err)
		}
	}
}

func TestConnDeadlines(t *testing.T) {
	l := listenLoopback(t, ListenConfig{})
	go serveEcho(l)
	c := dialLoopback(t, DialConfig{}, l.Addr())
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := c.Read(make([]byte, 10))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past deadline: %v", err)
	}
	c.SetDeadline(time.Time{})
	if _, err := c.Write([]byte{0x86, 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(make([]byte, 10)); err != nil {
		t.Fatalf("read after clearing the deadline: %v", err)
	}
}

func TestConnWriteMessageReceipts(t *testing.T) {
	l := listenLoopback(t, ListenConfig{})
	go serveEcho(l)
	c := dialLoopback(t, DialConfig{}, l.Addr())
	defer c.Close()
	want := map[uint32]bool{}
	for ch := range uint8(4) {
		r, err := c.WriteMessage([]byte{0x90, ch}, reliability.ReliableOrderedWithAckReceipt, ch, reliability.High)
		if err != nil {
			t.Fatal(err)
		}
		if r == 0 {
			t.Fatal("no receipt number")
		}
		want[r] = true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for len(want) > 0 {
		ev, err := c.ReadReceipt(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind != reliability.EventAcked || !want[ev.Receipt] {
			t.Fatalf("unexpected event %+v", ev)
		}
		delete(want, ev.Receipt)
	}
	if _, err := c.WriteMessage([]byte{0x90}, reliability.Reliable, 32, reliability.High); !errors.Is(err, reliability.ErrInvalidChannel) {
		t.Errorf("channel 32: %v", err)
	}
}

func TestDialRefusals(t *testing.T) {
	t.Run("incompatible", func(t *testing.T) {
		l := listenLoopback(t, ListenConfig{})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		d := DialConfig{Protocol: 6}
		_, err := d.DialContext(ctx, "udp", l.Addr().String())
		var ip *IncompatibleProtocolError
		if !errors.As(err, &ip) || !errors.Is(err, ErrIncompatibleProtocol) || ip.Server != 11 || ip.Offered != 6 {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("full", func(t *testing.T) {
		l := listenLoopback(t, ListenConfig{MaxConnections: 1})
		c := dialLoopback(t, DialConfig{}, l.Addr())
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := DialContext(ctx, "udp", l.Addr().String())
		var re *RefusedError
		if !errors.As(err, &re) || !errors.Is(err, ErrNoFreeIncomingConnections) || re.ServerGUID != l.GUID() {
			t.Fatalf("err %v", err)
		}
		if l.Stats().RefusedFull != 1 {
			t.Errorf("stats %+v", l.Stats())
		}
	})
	t.Run("duplicate-guid", func(t *testing.T) {
		l := listenLoopback(t, ListenConfig{})
		c := dialLoopback(t, DialConfig{GUID: 77}, l.Addr())
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		d := DialConfig{GUID: 77}
		_, err := d.DialContext(ctx, "udp", l.Addr().String())
		if !errors.Is(err, ErrAlreadyConnected) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("nobody", func(t *testing.T) {
		l := listenLoopback(t, ListenConfig{})
		addr := l.Addr().String()
		l.Close()
		d := DialConfig{ConnectAttempts: 3, ConnectInterval: 10 * time.Millisecond}
		_, err := d.DialContext(context.Background(), "udp", addr)
		if !errors.Is(err, ErrConnectionAttemptFailed) {
			t.Fatalf("err %v", err)
		}
	})
}

func TestListenerCloseEndsConnections(t *testing.T) {
	l, err := Listen("udp4", "127.0.0.1:0", ListenConfig{})
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan *Conn, 1)
	go func() {
		c, err := l.AcceptConn(context.Background())
		if err == nil {
			accepted <- c
		}
	}()
	c := dialLoopback(t, DialConfig{}, l.Addr())
	defer c.Close()
	<-accepted
	l.Close()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(make([]byte, 10)); err != io.EOF {
		t.Fatalf("client read after listener close: %v, want EOF", err)
	}
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("accept after close: %v", err)
	}
}

func TestConnIPv6Loopback(t *testing.T) {
	l, err := Listen("udp6", "[::1]:0", ListenConfig{})
	if err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	defer l.Close()
	go serveEcho(l)
	c := dialLoopback(t, DialConfig{}, l.Addr())
	defer c.Close()
	msg := echoMessage(5) // 1500 bytes: split at the IPv6 MTU
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	m, err := c.ReadMessage()
	if err != nil || !bytes.Equal(m.Data, msg) {
		t.Fatalf("echo over IPv6: %v", err)
	}
	if ra := c.RemoteAddr().String(); ra != l.Addr().String() {
		t.Errorf("remote %s, listener %s", ra, l.Addr())
	}
}
