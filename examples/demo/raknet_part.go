package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/netrak/netrak/raknet"
	"github.com/netrak/netrak/reliability"
)

// size is the length of message i. Sizes cycle through 5, 100, 576 and
// 1400 bytes, which fit one datagram; every tenth message is 5000 bytes
// and every hundredth 70000, which the reliability layer splits across
// datagrams (4 and 48 parts at the usual MTU).
func size(i int) int {
	switch {
	case i%100 == 99:
		return 70000
	case i%10 == 9:
		return 5000
	}
	return [...]int{5, 100, 576, 1400}[i%4]
}

// message builds message i: identifier 0x86, the index as a little-endian
// u32, then byte k = (i*31 + k*7) mod 256, as examples/raknet-echo does.
func message(i int) []byte {
	b := make([]byte, size(i))
	b[0] = raknet.IDUserPacketEnum
	binary.LittleEndian.PutUint32(b[1:], uint32(i))
	for k := 5; k < len(b); k++ {
		b[k] = byte(i*31 + k*7)
	}
	return b
}

// endMarker follows the last message. Its echo must come right after the
// last message's: anything in between would be a message delivered twice.
var endMarker = []byte{raknet.IDUserPacketEnum, 'e', 'n', 'd'}

// raknetPart runs part 2: a RakNet client sends messages reliable-ordered
// through a bad link to a server that echoes them, and checks the echoes.
func raknetPart(ctx context.Context, cfg config, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	fmt.Fprintf(out, "== Part 2: RakNet, %d reliable-ordered messages echoed through a worse link\n", cfg.messages)

	l, err := raknet.Listen("udp4", "127.0.0.1:0", raknet.ListenConfig{})
	if err != nil {
		return err
	}
	listenerClosed := false
	closeListener := func() {
		if !listenerClosed {
			listenerClosed = true
			l.Close()
		}
	}
	defer closeListener()
	serverAddr := l.Addr().(*net.UDPAddr).AddrPort()

	r, stopRelay, err := startRelay(ctx, serverAddr, cfg.link2, cfg.seed+1)
	if err != nil {
		return err
	}
	relayStopped := false
	defer func() {
		if !relayStopped {
			stopRelay()
		}
	}()
	fmt.Fprintf(out, "  link: %s, each way\n", describeLink(cfg.link2))
	fmt.Fprintf(out, "  server %v, relay %v in front of it\n", serverAddr, r.Addr())

	// The server echoes every user message of its one connection.
	type serverResult struct {
		echoed int
		stats  reliability.Stats
		err    error
	}
	serverDone := make(chan serverResult, 1)
	go func() {
		var res serverResult
		defer func() { serverDone <- res }()
		c, err := l.AcceptConn(ctx)
		if err != nil {
			res.err = err
			return
		}
		defer c.Close()
		// A context that ends interrupts the read below.
		defer context.AfterFunc(ctx, func() { c.SetReadDeadline(time.Unix(1, 0)) })()
		var buf []byte // messages are read into one reused buffer; WriteMessage copies them
		for {
			m, err := c.ReadMessageInto(buf)
			if err != nil {
				if !errors.Is(err, io.EOF) {
					res.err = err
				}
				res.stats = c.Stats()
				return
			}
			buf = m.Data
			if m.Data[0] < raknet.IDUserPacketEnum {
				continue
			}
			if _, err := c.WriteMessage(m.Data, reliability.ReliableOrdered, 0, reliability.Medium); err != nil {
				res.err = err
				return
			}
			res.echoed++
		}
	}()

	start := time.Now()
	var d raknet.DialConfig
	c, err := d.DialContext(ctx, "udp", r.Addr().String())
	if err != nil {
		return err
	}
	connected := time.Since(start)
	fmt.Fprintf(out, "  connected in %v, MTU %d, protocol %d\n", connected.Round(time.Millisecond), c.MTU(), c.Protocol())
	// A context that ends interrupts blocked reads and writes.
	stopInterrupt := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stopInterrupt()

	start = time.Now()
	writeDone := make(chan error, 1)
	go func() {
		for i := range cfg.messages {
			if _, err := c.WriteMessage(message(i), reliability.ReliableOrdered, 0, reliability.Medium); err != nil {
				writeDone <- err
				return
			}
		}
		_, err := c.WriteMessage(endMarker, reliability.ReliableOrdered, 0, reliability.Medium)
		writeDone <- err
	}()

	var checkErr error
	var payloadBytes int
	var buf []byte // the echoes are read into one reused buffer
	for i := 0; i <= cfg.messages && checkErr == nil; i++ {
		m, err := c.ReadMessageInto(buf)
		if err != nil {
			if ctx.Err() != nil {
				err = ctx.Err()
			}
			checkErr = fmt.Errorf("after %d of %d echoes: %w", i, cfg.messages, err)
			break
		}
		buf = m.Data
		want := endMarker
		if i < cfg.messages {
			want = message(i)
		}
		switch {
		case m.Reliability != reliability.ReliableOrdered || m.Channel != 0:
			checkErr = fmt.Errorf("echo %d arrived %v on channel %d", i, m.Reliability, m.Channel)
		case !bytes.Equal(m.Data, want):
			checkErr = fmt.Errorf("echo %d is wrong: %d bytes %s, want %d bytes %s", i, len(m.Data), describe(m.Data), len(want), describe(want))
		}
		payloadBytes += len(m.Data)
	}
	elapsed := time.Since(start)
	stats, rtt := c.Stats(), c.RTT()
	c.Close() // graceful: waits until the server has acknowledged everything
	writeErr := <-writeDone
	srv := <-serverDone
	closeListener()
	relayStopped = true
	relayStats, relayErr := stopRelay()

	if checkErr == nil {
		fmt.Fprintf(out, "  %d echoes arrived complete, exactly once and in order (%d of them larger than the MTU, so sent split)\n",
			cfg.messages, largerThan(cfg.messages, c.MTU()))
		fmt.Fprintf(out, "  %d KB each way in %v: %.0f KB/s each way\n", payloadBytes/1000,
			elapsed.Round(time.Millisecond), float64(payloadBytes)/1000/elapsed.Seconds())
	}
	fmt.Fprintf(out, "  client: RTT %v (min %v); %d datagrams sent, %d lost and %d frames resent (recent loss rate %s); %d duplicates ignored\n",
		rtt.Round(100*time.Microsecond), stats.MinRTT.Round(100*time.Microsecond), stats.DatagramsSent, stats.DatagramsLost,
		stats.Resends, percent(stats.LossRate), stats.Drops.DuplicateDatagram)
	fmt.Fprintf(out, "  server: %d messages echoed (end marker included); %d datagrams sent, %d lost and %d frames resent (recent loss rate %s); %d duplicates ignored\n",
		srv.echoed, srv.stats.DatagramsSent, srv.stats.DatagramsLost, srv.stats.Resends, percent(srv.stats.LossRate),
		srv.stats.Drops.DuplicateDatagram)
	printRelay(out, relayStats)

	switch {
	case checkErr != nil:
		return checkErr
	case writeErr != nil:
		return fmt.Errorf("write: %w", writeErr)
	case srv.err != nil:
		return fmt.Errorf("server: %w", srv.err)
	case srv.echoed != cfg.messages+1:
		return fmt.Errorf("server echoed %d messages, want %d", srv.echoed, cfg.messages+1)
	case relayErr != nil:
		return fmt.Errorf("relay: %w", relayErr)
	}
	fmt.Fprintln(out, "part 2: ok")
	return nil
}

// largerThan is how many of the first n messages are larger than mtu
// bytes, which the reliability layer must split.
func largerThan(n, mtu int) int {
	count := 0
	for i := range n {
		if size(i) > mtu {
			count++
		}
	}
	return count
}

// describe names a message by its header, for error messages.
func describe(b []byte) string {
	if len(b) >= 5 {
		return fmt.Sprintf("(id 0x%02x, index %d)", b[0], binary.LittleEndian.Uint32(b[1:]))
	}
	return fmt.Sprintf("%q", b)
}
