package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/netrak/netrak/transport"
	"github.com/netrak/netrak/transport/relay"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintf(os.Stdout, "demo: FAILED: %v\n", err)
		os.Exit(1)
	}
}

// errUsage is returned by run for bad flags, after the flag package has
// printed what was wrong.
var errUsage = errors.New("bad usage")

// config is what the flags set.
type config struct {
	seed uint64

	// Part 1: netcode.
	clients  int
	duration time.Duration
	rate     int // payloads per second per client
	size     int // payload bytes
	link1    transport.Impairment

	// Part 2: RakNet.
	messages int
	link2    transport.Impairment

	// Part 3: session.
	sessClients  int
	sessMessages int           // reliable-ordered events per client
	sessRate     int           // position updates per second per client
	sessDuration time.Duration // how long the updates go on
	link3        transport.Impairment

	parts   [numParts]bool // which parts run
	timeout time.Duration  // per part
}

// numParts is how many parts the demo has.
const numParts = 3

func parseFlags(args []string, out io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprintln(out, "usage: go run ./examples/demo [flags]")
		fmt.Fprintln(out, "")
		fmt.Fprintln(out, "Runs netcode, RakNet and sessions (netcode carrying RakNet reliability) over loopback")
		fmt.Fprintln(out, "UDP through in-process impairment relays")
		fmt.Fprintln(out, "and checks that every byte arrives as it should. Exits 0 on success, 1 on failure.")
		fmt.Fprintln(out, "")
		fs.PrintDefaults()
	}
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the relays' impairment decisions")

	fs.IntVar(&c.clients, "clients", 4, "part 1: netcode clients")
	fs.DurationVar(&c.duration, "duration", 2*time.Second, "part 1: how long each client sends payloads")
	fs.IntVar(&c.rate, "rate", 60, "part 1: payloads per second per client")
	fs.IntVar(&c.size, "size", 100, "part 1: payload size in bytes (16..1200)")
	fs.Float64Var(&c.link1.Loss, "loss", 0.05, "part 1: loss probability each way")
	fs.DurationVar(&c.link1.Latency, "latency", 20*time.Millisecond, "part 1: one-way latency")
	fs.DurationVar(&c.link1.Jitter, "jitter", 5*time.Millisecond, "part 1: latency varies within ± this")
	fs.Float64Var(&c.link1.Duplicate, "dup", 0.01, "part 1: duplication probability each way")

	fs.IntVar(&c.messages, "messages", 300, "part 2: RakNet messages sent and echoed")
	fs.Float64Var(&c.link2.Loss, "rak-loss", 0.10, "part 2: loss probability each way")
	fs.DurationVar(&c.link2.Latency, "rak-latency", 30*time.Millisecond, "part 2: one-way latency")
	fs.DurationVar(&c.link2.Jitter, "rak-jitter", 10*time.Millisecond, "part 2: latency varies within ± this")
	fs.Float64Var(&c.link2.Duplicate, "rak-dup", 0.02, "part 2: duplication probability each way")
	fs.Float64Var(&c.link2.Reorder, "rak-reorder", 0.02, "part 2: probability that a datagram is held back so later ones overtake it")

	fs.IntVar(&c.sessClients, "sess-clients", 4, "part 3: session clients")
	fs.IntVar(&c.sessMessages, "sess-messages", 200, "part 3: reliable-ordered events each client sends and checks")
	fs.IntVar(&c.sessRate, "sess-rate", 60, "part 3: unreliable-sequenced position updates per second per client")
	fs.DurationVar(&c.sessDuration, "sess-duration", 2*time.Second, "part 3: how long each client sends position updates, with the events spread over it")
	fs.Float64Var(&c.link3.Loss, "sess-loss", 0.05, "part 3: loss probability each way")
	fs.DurationVar(&c.link3.Latency, "sess-latency", 20*time.Millisecond, "part 3: one-way latency")
	fs.DurationVar(&c.link3.Jitter, "sess-jitter", 5*time.Millisecond, "part 3: latency varies within ± this")

	parts := fs.String("parts", "1,2,3", "the parts to run, comma-separated: 1 netcode, 2 RakNet, 3 session")
	fs.DurationVar(&c.timeout, "timeout", 30*time.Second, "give up on a part after this long")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, err
		}
		return c, errUsage
	}
	bad := func(format string, a ...any) (config, error) {
		fmt.Fprintf(out, "demo: "+format+"\n", a...)
		fs.Usage()
		return c, errUsage
	}
	switch {
	case fs.NArg() != 0:
		return bad("unexpected arguments %q", fs.Args())
	case c.clients < 1 || c.clients > 64:
		return bad("-clients must be in 1..64")
	case c.duration <= 0 || c.rate < 1 || c.rate > 1000:
		return bad("-duration must be positive and -rate in 1..1000")
	case c.size < payloadHeader || c.size > 1200:
		return bad("-size must be in %d..1200", payloadHeader)
	case c.messages < 1:
		return bad("-messages must be positive")
	case c.sessClients < 1 || c.sessClients > 64:
		return bad("-sess-clients must be in 1..64")
	case c.sessMessages < 1 || c.sessDuration <= 0 || c.sessRate < 1 || c.sessRate > 1000:
		return bad("-sess-messages and -sess-duration must be positive and -sess-rate in 1..1000")
	case c.timeout <= 0:
		return bad("-timeout must be positive")
	}
	for _, f := range strings.Split(*parts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > numParts {
			return bad("-parts: %q is not a part (1..%d)", f, numParts)
		}
		c.parts[n-1] = true
	}
	if err := errors.Join(c.link1.Validate(), c.link2.Validate(), c.link3.Validate()); err != nil {
		return bad("%v", err)
	}
	return c, nil
}

// run runs both parts of the demo, writing the report to out. It returns
// nil only if everything checked out.
func run(ctx context.Context, args []string, out io.Writer) error {
	cfg, err := parseFlags(args, out)
	if err != nil {
		return err
	}
	start := time.Now()
	fmt.Fprintln(out, "netrak demo: the protocol stack over loopback UDP, through impairment relays")
	fmt.Fprintln(out)
	for i, p := range []struct {
		name string
		run  func(context.Context, config, io.Writer) error
	}{
		{"netcode", netcodePart},
		{"RakNet", raknetPart},
		{"session", sessionPart},
	} {
		if !cfg.parts[i] {
			continue
		}
		if err := p.run(ctx, cfg, out); err != nil {
			return fmt.Errorf("part %d (%s): %w", i+1, p.name, err)
		}
		fmt.Fprintln(out)
	}
	fmt.Fprintf(out, "demo: ok (%v)\n", time.Since(start).Round(100*time.Millisecond))
	return nil
}

// startRelay starts an impairment relay on loopback in front of target,
// applying link in both directions. stop ends it and returns its final
// counters.
func startRelay(ctx context.Context, target netip.AddrPort, link transport.Impairment, seed uint64) (r *relay.Relay, stop func() (relay.Stats, error), err error) {
	r, err = relay.New(relay.Config{Listen: "127.0.0.1:0", Target: target, Up: link, Down: link, Seed: seed})
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	return r, func() (relay.Stats, error) {
		cancel()
		err := <-done
		if errors.Is(err, net.ErrClosed) {
			err = nil
		}
		return r.Stats(), err
	}, nil
}

// describeLink is a one-line description of an impairment.
func describeLink(l transport.Impairment) string {
	s := fmt.Sprintf("latency %v ± %v, loss %s, duplication %s", l.Latency, l.Jitter, percent(l.Loss), percent(l.Duplicate))
	if l.Reorder > 0 {
		s += ", reordering " + percent(l.Reorder)
	}
	return s
}

func percent(p float64) string { return fmt.Sprintf("%.3g%%", 100*p) }

// printRelay prints a relay's counters, one line per direction.
func printRelay(out io.Writer, s relay.Stats) {
	dir := func(name string, d transport.ImpairmentStats) {
		fmt.Fprintf(out, "  relay %s: %d datagrams in, %d delivered; dropped %d (loss), duplicated %d, reordered %d\n",
			name, d.Sent, d.Delivered, d.DroppedLoss, d.Duplicated, d.Reordered)
	}
	dir("client->server", s.Up)
	dir("server->client", s.Down)
}
