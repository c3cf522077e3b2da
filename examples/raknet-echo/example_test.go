package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
)

// Example runs the server on a loopback port and the client against it
// with 16 messages, two of each size, then interrupts the server.
func Example() {
	ctx, interrupt := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	serverExit := make(chan int, 1)
	go func() {
		serverExit <- run(ctx, []string{"-listen", "127.0.0.1:0", "-pong", "echo example"}, pw, io.Discard)
		pw.Close()
	}()
	server := bufio.NewScanner(pr)
	server.Scan() // "listening on 127.0.0.1:port"
	addr := strings.TrimPrefix(server.Text(), "listening on ")
	go io.Copy(io.Discard, pr)

	// The client's report of the RTT and resends goes to stderr.
	code := run(context.Background(), []string{"-connect", addr, "-count", "16", "-timeout", "20s"}, os.Stdout, io.Discard)
	fmt.Println("client exit:", code)
	interrupt()
	fmt.Println("server exit:", <-serverExit)
	// Output:
	// 16 passed, 0 failed
	// client exit: 0
	// server exit: 0
}
