package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/netrak/netrak/raknet"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// sizes is the cycle of message sizes the client sends.
var sizes = [...]int{5, 5, 100, 576, 1400, 1500, 5000, 70000}

// message builds message i of the client's sequence.
func message(i int) []byte {
	b := make([]byte, sizes[i%len(sizes)])
	b[0] = raknet.IDUserPacketEnum
	binary.LittleEndian.PutUint32(b[1:], uint32(i))
	for k := 5; k < len(b); k++ {
		b[k] = byte(i*31 + k*7)
	}
	return b
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("raknet-echo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "", "server mode: listen on this UDP address")
	pong := fs.String("pong", "", "server mode: unconnected pong data")
	protocols := fs.String("protocols", "6,10,11", "server mode: accepted protocol versions")
	connect := fs.String("connect", "", "client mode: connect to this server")
	count := fs.Int("count", 100, "client mode: messages to send")
	protocol := fs.Uint("protocol", uint(raknet.ProtocolBedrock), "client mode: protocol version offered (6 for the original library)")
	timeout := fs.Duration("timeout", 60*time.Second, "client mode: give up after this long")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: raknet-echo -listen ADDR [-pong TEXT] [-protocols 6,10,11]")
		fmt.Fprintln(stderr, "       raknet-echo -connect ADDR [-count N] [-protocol V] [-timeout D]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	switch {
	case fs.NArg() != 0, (*listen == "") == (*connect == ""):
		fs.Usage()
		return 2
	case *listen != "":
		versions, err := parseProtocols(*protocols)
		if err != nil {
			fmt.Fprintf(stderr, "raknet-echo: -protocols: %v\n", err)
			return 2
		}
		return serve(ctx, *listen, *pong, versions, stdout, stderr)
	}
	if *count < 0 || *protocol == 0 || *protocol > 255 || *timeout <= 0 {
		fs.Usage()
		return 2
	}
	return client(ctx, *connect, *count, uint8(*protocol), *timeout, stdout, stderr)
}

func parseProtocols(s string) ([]uint8, error) {
	var out []uint8
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseUint(strings.TrimSpace(f), 10, 8)
		if err != nil || v == 0 {
			return nil, fmt.Errorf("bad version %q", f)
		}
		out = append(out, uint8(v))
	}
	return out, nil
}

// serve runs the echo server until ctx ends.
func serve(ctx context.Context, addr, pong string, protocols []uint8, stdout, stderr io.Writer) int {
	l, err := raknet.Listen("udp", addr, raknet.ListenConfig{Protocols: protocols, PongData: []byte(pong)})
	if err != nil {
		fmt.Fprintf(stderr, "raknet-echo: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "listening on %s\n", l.Addr())
	go func() {
		<-ctx.Done()
		l.Close()
	}()
	for {
		c, err := l.AcceptConn(ctx)
		if err != nil {
			l.Close()
			return 0
		}
		go echo(c)
	}
}

// echo sends every user message of c back, reliable-ordered on channel 0.
// Messages are read into one reused buffer (Write copies them).
func echo(c *raknet.Conn) {
	defer c.Close()
	var buf []byte
	for {
		m, err := c.ReadMessageInto(buf)
		if err != nil {
			return
		}
		buf = m.Data
		if m.Data[0] < raknet.IDUserPacketEnum {
			continue
		}
		if _, err := c.Write(m.Data); err != nil {
			return
		}
	}
}

// client sends the messages and checks the echoes.
func client(ctx context.Context, addr string, count int, protocol uint8, timeout time.Duration, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	d := raknet.DialConfig{Protocol: protocol}
	c, err := d.DialContext(ctx, "udp", addr)
	if err != nil {
		fmt.Fprintf(stderr, "raknet-echo: %v\n", err)
		fmt.Fprintf(stdout, "0 passed, %d failed\n", count)
		return 1
	}
	defer c.Close()
	deadline, _ := ctx.Deadline()
	c.SetDeadline(deadline)
	go func() {
		for i := range count {
			if _, err := c.Write(message(i)); err != nil {
				return
			}
		}
	}()
	passed := 0
	var readErr error
	var buf []byte // the echoes are read into one reused buffer
	for i := 0; i < count; i++ {
		m, err := c.ReadMessageInto(buf)
		if err != nil {
			readErr = err
			break
		}
		buf = m.Data
		if bytes.Equal(m.Data, message(i)) {
			passed++
		} else {
			fmt.Fprintf(stderr, "raknet-echo: echo %d differs (%d bytes, want %d)\n", i, len(m.Data), len(message(i)))
		}
	}
	if readErr != nil {
		if errors.Is(readErr, os.ErrDeadlineExceeded) {
			fmt.Fprintf(stderr, "raknet-echo: timed out after %v\n", timeout)
		} else {
			fmt.Fprintf(stderr, "raknet-echo: %v\n", readErr)
		}
	}
	fmt.Fprintf(stdout, "%d passed, %d failed\n", passed, count-passed)
	if passed != count {
		return 1
	}
	fmt.Fprintf(stderr, "raknet-echo: RTT %v, %d resends\n", c.RTT(), c.Stats().Resends)
	return 0
}
