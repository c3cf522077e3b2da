package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/netrak/netrak/raknet"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("raknet-ping", flag.ContinueOnError)
	fs.SetOutput(stderr)
	timeout := fs.Duration("timeout", 5*time.Second, "give up when no pong arrives within this time")
	interval := fs.Duration("interval", raknet.DefaultPingInterval, "time between resent pings")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: raknet-ping [flags] HOST:PORT")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 || *timeout <= 0 {
		fs.Usage()
		return 2
	}
	address := fs.Arg(0)

	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	cfg := raknet.PingConfig{Interval: *interval}
	res, err := cfg.PingAddress(ctx, address)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			fmt.Fprintf(stderr, "raknet-ping: no pong from %s within %v\n", address, *timeout)
		} else {
			fmt.Fprintf(stderr, "raknet-ping: %v\n", err)
		}
		return 1
	}
	printResult(stdout, address, res)
	return 0
}

func printResult(w io.Writer, address string, res raknet.PingResult) {
	fmt.Fprintf(w, "pong from %s\n", address)
	fmt.Fprintf(w, "  server GUID: %d (%#016x)\n", res.GUID, res.GUID)
	fmt.Fprintf(w, "  RTT:         %v\n", res.RTT)
	fmt.Fprintf(w, "  data:        %q (%d bytes, %s)\n", res.Data, len(res.Data), res.Encoding)
	m, err := raknet.ParseBedrockMOTD(res.Data)
	if err != nil {
		return
	}
	fmt.Fprintf(w, "Bedrock MOTD\n")
	fmt.Fprintf(w, "  edition:     %s\n", m.Edition)
	fmt.Fprintf(w, "  MOTD:        %s\n", m.MOTD)
	fmt.Fprintf(w, "  sub MOTD:    %s\n", m.SubMOTD)
	fmt.Fprintf(w, "  version:     %s (protocol %d)\n", m.Version, m.Protocol)
	fmt.Fprintf(w, "  players:     %d/%d\n", m.Players, m.MaxPlayers)
	fmt.Fprintf(w, "  game mode:   %s (%d)\n", m.GameMode, m.GameModeNumber)
	fmt.Fprintf(w, "  server GUID: %d\n", m.ServerGUID)
	fmt.Fprintf(w, "  ports:       IPv4 %d, IPv6 %d\n", m.PortV4, m.PortV6)
}
