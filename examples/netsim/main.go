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
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/netrak/netrak/transport"
	"github.com/netrak/netrak/transport/relay"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, nil)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "netsim:", err)
		os.Exit(1)
	}
}

// impairmentFlags are the flags describing one Impairment, registered under
// a name prefix ("", "up-" or "down-").
type impairmentFlags struct {
	prefix    string
	latency   time.Duration
	jitter    time.Duration
	loss      float64
	dup       float64
	reorder   float64
	bandwidth int
	queue     int
	mtu       int
}

func registerImpairment(fs *flag.FlagSet, prefix, scope string) *impairmentFlags {
	f := &impairmentFlags{prefix: prefix}
	fs.DurationVar(&f.latency, prefix+"latency", 0, "one-way delay added to every datagram"+scope)
	fs.DurationVar(&f.jitter, prefix+"jitter", 0, "delay varies uniformly within ±jitter of the latency"+scope)
	fs.Float64Var(&f.loss, prefix+"loss", 0, "probability (0..1) that a datagram is dropped"+scope)
	fs.Float64Var(&f.dup, prefix+"dup", 0, "probability (0..1) that a datagram is delivered twice"+scope)
	fs.Float64Var(&f.reorder, prefix+"reorder", 0, "probability (0..1) that a datagram is held back an extra latency+jitter+1ms, so later ones overtake it"+scope)
	fs.IntVar(&f.bandwidth, prefix+"bandwidth", 0, "bandwidth cap in bytes per second; 0 means unlimited"+scope)
	fs.IntVar(&f.queue, prefix+"queue", 0, fmt.Sprintf("bytes that may wait for the bandwidth cap before tail drop; 0 means %d", transport.DefaultQueueLimit)+scope)
	fs.IntVar(&f.mtu, prefix+"mtu", 0, "largest datagram in bytes; larger ones are dropped; 0 means unlimited"+scope)
	return f
}

func (f *impairmentFlags) impairment() transport.Impairment {
	return transport.Impairment{
		Latency: f.latency, Jitter: f.jitter, Loss: f.loss, Duplicate: f.dup,
		Reorder: f.reorder, Bandwidth: f.bandwidth, QueueLimit: f.queue, MTU: f.mtu,
	}
}

// override copies into imp the fields whose flags were given on the command
// line.
func (f *impairmentFlags) override(fs *flag.FlagSet, imp transport.Impairment) transport.Impairment {
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case f.prefix + "latency":
			imp.Latency = f.latency
		case f.prefix + "jitter":
			imp.Jitter = f.jitter
		case f.prefix + "loss":
			imp.Loss = f.loss
		case f.prefix + "dup":
			imp.Duplicate = f.dup
		case f.prefix + "reorder":
			imp.Reorder = f.reorder
		case f.prefix + "bandwidth":
			imp.Bandwidth = f.bandwidth
		case f.prefix + "queue":
			imp.QueueLimit = f.queue
		case f.prefix + "mtu":
			imp.MTU = f.mtu
		}
	})
	return imp
}

// run parses args, relays until ctx ends, then prints the counters to
// stdout. ready, if not nil, learns the listen address once the relay is up.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, ready func(netip.AddrPort)) error {
	fs := flag.NewFlagSet("netsim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:19000", "UDP address clients send to")
	target := fs.String("target", "127.0.0.1:19132", "UDP address of the server to relay to (host:port)")
	seed := fs.Uint64("seed", 1, "seed for the impairment PRNGs; the same seed and traffic give the same fates")
	maxClients := fs.Int("max-clients", relay.DefaultMaxClients, "most clients (source addresses) relayed at once, each with its own upstream socket")
	idle := fs.Duration("idle", relay.DefaultIdleTimeout, "a client silent this long loses its upstream socket")
	dscp := fs.Int("dscp", 0, "DSCP code point (0..63) to mark relayed datagrams with, e.g. 46 for Expedited Forwarding; 0 leaves them unmarked")
	statsEvery := fs.Duration("stats", 0, "also print the counters at this interval; 0 means only on exit")
	verbose := fs.Bool("v", false, "log clients arriving and expiring")
	both := registerImpairment(fs, "", " (both directions)")
	up := registerImpairment(fs, "up-", " (client to target; overrides the same flag without up-)")
	down := registerImpairment(fs, "down-", " (target to client; overrides the same flag without down-)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: netsim [flags]\n\n"+
			"netsim relays UDP datagrams between clients and a target, impairing each direction.\n"+
			"It prints its counters on SIGINT or SIGTERM.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	}

	targetAddr, err := net.ResolveUDPAddr("udp", *target)
	if err != nil {
		return fmt.Errorf("-target: %w", err)
	}
	base := both.impairment()
	cfg := relay.Config{
		Listen:      *listen,
		Target:      netip.AddrPortFrom(targetAddr.AddrPort().Addr().Unmap(), targetAddr.AddrPort().Port()),
		Up:          up.override(fs, base),
		Down:        down.override(fs, base),
		Seed:        *seed,
		MaxClients:  *maxClients,
		IdleTimeout: *idle,
		UDP:         transport.UDPConfig{DSCP: *dscp},
	}
	if *verbose {
		cfg.Logger = zerolog.New(zerolog.ConsoleWriter{Out: stderr, TimeFormat: time.TimeOnly}).
			Level(zerolog.DebugLevel).With().Timestamp().Logger()
	}
	r, err := relay.New(cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "netsim: relaying %v -> %v\n  up:   %s\n  down: %s\n",
		r.Addr(), cfg.Target, describe(cfg.Up), describe(cfg.Down))
	if ready != nil {
		ready(r.Addr())
	}

	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	var tick <-chan time.Time
	if *statsEvery > 0 {
		t := time.NewTicker(*statsEvery)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-tick:
			fmt.Fprintf(stdout, "%v\n", r.Stats())
		case err := <-done:
			fmt.Fprintf(stdout, "netsim: stopped\n%v\n", r.Stats())
			return err
		}
	}
}

// describe formats an impairment for the start-up banner.
func describe(imp transport.Impairment) string {
	if imp == (transport.Impairment{}) {
		return "no impairment"
	}
	return fmt.Sprintf("latency=%v jitter=%v loss=%g dup=%g reorder=%g bandwidth=%dB/s mtu=%d",
		imp.Latency, imp.Jitter, imp.Loss, imp.Duplicate, imp.Reorder, imp.Bandwidth, imp.MTU)
}
