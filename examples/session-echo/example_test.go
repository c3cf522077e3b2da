package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// Example runs the server on a loopback port and the client against it
// with 24 messages, 18 of them reliable, then interrupts the server.
func Example() {
	ctx, interrupt := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	serverExit := make(chan int, 1)
	go func() {
		serverExit <- run(ctx, []string{"-listen", "127.0.0.1:0"}, pw, io.Discard)
		pw.Close()
	}()
	server := bufio.NewScanner(pr)
	server.Scan() // "listening on 127.0.0.1:port"
	addr := strings.TrimPrefix(server.Text(), "listening on ")

	var out bytes.Buffer
	code := run(context.Background(), []string{"-connect", addr, "-count", "24"}, &out, io.Discard)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	fmt.Printf("client: %s (exit %d)\n", lines[len(lines)-1], code)

	varying := regexp.MustCompile(`, (client id|address) [^,]+`) // random ids, ephemeral ports
	for server.Scan() {
		line := varying.ReplaceAllString(server.Text(), "")
		fmt.Println("server:", line)
		if strings.HasPrefix(line, "client disconnected") {
			break
		}
	}
	interrupt()
	for server.Scan() { // "stopped: ..."
	}
	fmt.Println("server exit:", <-serverExit)
	// Output:
	// client: 18 passed, 0 failed (exit 0)
	// server: client connected: slot 0
	// server: client disconnected: slot 0, reason client disconnected
	// server exit: 0
}
