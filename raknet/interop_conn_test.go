package raknet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	goraknet "github.com/sandertv/go-raknet"
)

// Connections with go-raknet v1.15.0 over loopback UDP, in both
// directions: handshake (protocol 11, cookies), 1000 echoed messages of
// mixed sizes including split ones, and the disconnect.

const interopMessages = 1000

// goraknetEcho echoes every packet of one go-raknet connection.
func goraknetEcho(c *goraknet.Conn) {
	for {
		pk, err := c.ReadPacket()
		if err != nil {
			return
		}
		if _, err := c.Write(pk); err != nil {
			return
		}
	}
}

func TestInteropDialGoRaknetListener(t *testing.T) {
	l, err := goraknet.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	serverConn := make(chan *goraknet.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		gc := c.(*goraknet.Conn)
		serverConn <- gc
		goraknetEcho(gc)
	}()

	c := dialLoopback(t, DialConfig{}, l.Addr())
	if c.RemoteGUID() != uint64(l.ID()) {
		t.Errorf("server GUID %#x, go-raknet says %#x", c.RemoteGUID(), uint64(l.ID()))
	}
	var sc *goraknet.Conn
	select {
	case sc = <-serverConn:
	case <-time.After(5 * time.Second):
		t.Fatal("go-raknet did not accept")
	}
	// The writer reports through written, and the test waits for it on
	// every path, so that a failed read is reported as itself rather than
	// by a writer calling t.Error after the test has ended.
	written := make(chan error, 1)
	go func() {
		for i := range interopMessages {
			if _, err := c.Write(echoMessage(i)); err != nil {
				written <- fmt.Errorf("write %d: %w", i, err)
				return
			}
		}
		written <- nil
	}()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	for i := range interopMessages {
		m, err := c.ReadMessage()
		if err != nil {
			c.Close()
			t.Fatalf("echo %d: %v (writer: %v)", i, err, <-written)
		}
		if !bytes.Equal(m.Data, echoMessage(i)) {
			c.Close()
			<-written
			t.Fatalf("echo %d: %d bytes, want %d", i, len(m.Data), len(echoMessage(i)))
		}
	}
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if c.RTT() <= 0 {
		t.Errorf("RTT %v", c.RTT())
	}
	// Our Close: go-raknet sees the disconnection notification.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sc.Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("go-raknet did not see the disconnect")
	}
}

func TestInteropGoRaknetDialsListener(t *testing.T) {
	l := listenLoopback(t, ListenConfig{})
	accepted := make(chan *Conn, 1)
	go func() {
		c, err := l.AcceptConn(context.Background())
		if err != nil {
			return
		}
		accepted <- c
		for {
			m, err := c.ReadMessage()
			if err != nil {
				return
			}
			if _, err := c.Write(m.Data); err != nil {
				return
			}
		}
	}()
	gc, err := goraknet.DialTimeout(l.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var sc *Conn
	select {
	case sc = <-accepted:
	case <-time.After(5 * time.Second):
		t.Fatal("no connection accepted")
	}
	if sc.Protocol() != ProtocolBedrock {
		t.Errorf("protocol %d", sc.Protocol())
	}
	go func() {
		for i := range interopMessages {
			if _, err := gc.Write(echoMessage(i)); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	got := make(chan error, 1)
	go func() {
		for i := range interopMessages {
			pk, err := gc.ReadPacket()
			if err != nil {
				got <- err
				return
			}
			if !bytes.Equal(pk, echoMessage(i)) {
				got <- errors.New("echo differs")
				return
			}
		}
		got <- nil
	}()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("echoes did not arrive")
	}
	// go-raknet's Close: our side reads io.EOF.
	gc.Close()
	select {
	case <-sc.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("our connection did not end after go-raknet closed")
	}
	if err := sc.Err(); !errors.Is(err, ErrPeerClosed) {
		t.Fatalf("our side: %v, want ErrPeerClosed", err)
	}
	if _, err := sc.Write([]byte{0x86}); !errors.Is(err, ErrPeerClosed) && !errors.Is(err, net.ErrClosed) {
		t.Errorf("write after peer close: %v", err)
	}
}

func TestInteropGoRaknetPingsListener(t *testing.T) {
	l := listenLoopback(t, ListenConfig{PongData: []byte("first")})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	data, err := goraknet.PingContext(ctx, l.Addr().String())
	if err != nil || string(data) != "first" {
		t.Fatalf("go-raknet ping: %q, %v", data, err)
	}
	// Pong data changes at run time.
	if err := l.SetPongData([]byte(interopMOTD)); err != nil {
		t.Fatal(err)
	}
	data, err = goraknet.PingContext(ctx, l.Addr().String())
	if err != nil || string(data) != interopMOTD {
		t.Fatalf("go-raknet ping after SetPongData: %q, %v", data, err)
	}
	res, err := Ping(ctx, l.Addr().String())
	if err != nil || res.GUID != l.GUID() || string(res.Data) != interopMOTD {
		t.Fatalf("our ping: %+v, %v", res, err)
	}
}
