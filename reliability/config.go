package reliability

import (
	"time"

	"github.com/rs/zerolog"
)

// RakNet's MTU accounting and limits.
const (
	// MaxMTU is the largest MTU RakNet negotiates.
	MaxMTU = 1492
	// MinMTU is the smallest MTU the engine accepts. RakNet's own probes
	// stop at 576; 400 leaves room for links below the IPv4 minimum.
	MinMTU = 400
	// UDPIPOverhead is the IPv4 + UDP header size RakNet subtracts from the
	// MTU: an MTU of 1492 gives UDP payloads of at most 1464 bytes.
	UDPIPOverhead = 28
)

// Defaults used for zero Config fields.
const (
	DefaultMTU                  = MaxMTU
	DefaultMaxMessageSize       = 4 << 20
	DefaultMaxQueueBytes        = 16 << 20
	DefaultMaxReceiveBytes      = 16 << 20
	DefaultDeadTimeout          = 10 * time.Second
	DefaultRTOMin               = 50 * time.Millisecond
	DefaultRTOMax               = 2 * time.Second
	DefaultInitialRTO           = 500 * time.Millisecond
	DefaultACKDelay             = 10 * time.Millisecond
	DefaultMaxOutstandingSplits = 32
	DefaultMaxSplitParts        = 16384
	DefaultMaxSplitMessages     = 64
	DefaultMaxReassemblyBytes   = 16 << 20
)

// Config configures an Engine. The zero value is valid: every zero field
// takes the default named next to it.
type Config struct {
	// MTU is RakNet's MTU: the IP packet size, UDP and IPv4 headers
	// included, as negotiated by the open-connection handshake. The engine
	// never produces a datagram (UDP payload) longer than MTU-UDPIPOverhead
	// bytes. A carrier that knows its maximum payload P (netcode gives
	// 1200) passes P+UDPIPOverhead. Range MinMTU..MaxMTU; default 1492.
	MTU int

	// MaxMessageSize bounds one message passed to Send. Default 4 MiB, or
	// MaxQueueBytes if that is smaller.
	MaxMessageSize int

	// MaxQueueBytes bounds the bytes the engine holds for sending: queued
	// messages and reliable messages awaiting acknowledgement, each counted
	// as its length plus a fixed overhead of 64 bytes. Send returns
	// ErrQueueFull past it. Default 16 MiB; at least MaxMessageSize.
	MaxQueueBytes int

	// MaxReceiveBytes bounds the bytes delivered but not yet read by
	// ReadMessage. Past it, incoming data datagrams are dropped without
	// being acknowledged, so the peer sends them again later: a slow reader
	// slows the sender instead of growing memory. Messages held back for
	// ordering are bounded by the same amount separately (a message that a
	// channel waits for is always taken). Default 16 MiB.
	//
	// Payload buffers the engine is done with are kept for reuse, so that
	// steady traffic does not allocate, up to the larger of MaxQueueBytes
	// and MaxReceiveBytes.
	MaxReceiveBytes int

	// DeadTimeout is how long reliable data may stay unacknowledged before
	// the connection is declared dead. Default 10 s (RakNet's value).
	//
	// It runs only while something awaits acknowledgement: a peer that
	// vanishes while the connection is idle goes unnoticed. Detecting that
	// is the driver's job (package raknet sends connected pings and times
	// out on silence), or IdleTimeout's.
	DeadTimeout time.Duration

	// IdleTimeout, if nonzero, also declares the connection dead when no
	// datagram has come from the peer for that long, counted from the
	// first call that passes a time, whether or not anything is
	// outstanding. Any datagram with a valid header counts, duplicates
	// and ACKs included; the driver filters out other senders. While it
	// is set, NextTimeout is never zero. Default zero: off.
	IdleTimeout time.Duration

	// RTOMin and RTOMax clamp the retransmission timeout
	// 2·SRTT + 4·RTTVAR + 30 ms, which doubles per consecutive expiry.
	// Defaults 50 ms and 2 s. The ceiling is lowered to DeadTimeout/8
	// when that is smaller, so at least eight attempts precede death.
	RTOMin, RTOMax time.Duration

	// InitialRTO is the retransmission timeout before the first RTT
	// sample. Default 500 ms, clamped to RTOMin..RTOMax.
	InitialRTO time.Duration

	// ACKDelay is the longest a received datagram waits before it is
	// acknowledged, so that ACKs coalesce into range lists. Default 10 ms.
	ACKDelay time.Duration

	// MaxOutstandingSplits bounds the split messages this side has started
	// sending and not yet seen fully acknowledged. Default 32; at most 255
	// (a Minecraft Bedrock client reassembles at most 256 at once).
	MaxOutstandingSplits int

	// Reassembly limits for split messages from the peer: parts per
	// message, messages reassembling at once, and bytes held. Parts beyond
	// them are dropped without acknowledgement. Defaults 16384, 64, 16 MiB.
	MaxSplitParts      int
	MaxSplitMessages   int
	MaxReassemblyBytes int

	// Logger receives debug events (connection death, dropped input). The
	// zero value discards everything. The engine never logs at info level
	// or above on a packet path.
	Logger zerolog.Logger
}

// withDefaults returns c with zero fields replaced by defaults, or an error
// for a field out of range.
func (c Config) withDefaults() (Config, error) {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	defD := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.MTU, DefaultMTU)
	def(&c.MaxQueueBytes, DefaultMaxQueueBytes)
	def(&c.MaxMessageSize, min(DefaultMaxMessageSize, c.MaxQueueBytes))
	def(&c.MaxReceiveBytes, DefaultMaxReceiveBytes)
	defD(&c.DeadTimeout, DefaultDeadTimeout)
	defD(&c.RTOMin, DefaultRTOMin)
	defD(&c.RTOMax, DefaultRTOMax)
	defD(&c.InitialRTO, DefaultInitialRTO)
	defD(&c.ACKDelay, DefaultACKDelay)
	def(&c.MaxOutstandingSplits, DefaultMaxOutstandingSplits)
	def(&c.MaxSplitParts, DefaultMaxSplitParts)
	def(&c.MaxSplitMessages, DefaultMaxSplitMessages)
	def(&c.MaxReassemblyBytes, DefaultMaxReassemblyBytes)

	switch {
	case c.MTU < MinMTU || c.MTU > MaxMTU:
		return c, &ConfigError{"MTU", "must be between 400 and 1492"}
	case c.MaxMessageSize < 0:
		return c, &ConfigError{"MaxMessageSize", "must not be negative"}
	case c.MaxQueueBytes < c.MaxMessageSize:
		return c, &ConfigError{"MaxQueueBytes", "must be at least MaxMessageSize"}
	case c.MaxReceiveBytes < 0:
		return c, &ConfigError{"MaxReceiveBytes", "must not be negative"}
	case c.DeadTimeout < 0:
		return c, &ConfigError{"DeadTimeout", "must not be negative"}
	case c.IdleTimeout < 0:
		return c, &ConfigError{"IdleTimeout", "must not be negative"}
	case c.RTOMin < 0 || c.RTOMax < c.RTOMin:
		return c, &ConfigError{"RTOMin/RTOMax", "must satisfy 0 <= RTOMin <= RTOMax"}
	case c.ACKDelay < 0:
		return c, &ConfigError{"ACKDelay", "must not be negative"}
	case c.MaxOutstandingSplits < 0 || c.MaxOutstandingSplits > 255:
		return c, &ConfigError{"MaxOutstandingSplits", "must be between 1 and 255"}
	case c.MaxSplitParts < 0 || c.MaxSplitMessages < 0 || c.MaxReassemblyBytes < 0:
		return c, &ConfigError{"reassembly limits", "must not be negative"}
	}
	c.InitialRTO = min(max(c.InitialRTO, c.RTOMin), c.RTOMax)
	return c, nil
}

// RTOCeiling returns the longest retransmission timeout of an engine
// configured with c, zero fields taking their defaults: RTOMax, lowered to
// DeadTimeout/8 when that is smaller, but not below RTOMin. A driver that
// waits out the peer's resends (a linger after the peer's goodbye) needs
// it to know how long a resend can take.
func (c Config) RTOCeiling() time.Duration {
	d, _ := c.withDefaults() // an invalid config still has every field filled
	return d.rtoCeiling()
}

// rtoCeiling is RTOCeiling for a config with its defaults filled. The
// ceiling leaves at least eight attempts before the connection is
// declared dead, so a run of losses on a lossy link does not kill it after
// three or four tries.
func (c *Config) rtoCeiling() time.Duration {
	return min(c.RTOMax, max(c.DeadTimeout/8, c.RTOMin))
}

// maxDatagramSize is the longest UDP payload the engine produces.
func (c *Config) maxDatagramSize() int { return c.MTU - UDPIPOverhead }
