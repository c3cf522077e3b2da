package simnet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/netrak/netrak/transport"
	"github.com/netrak/netrak/transport/internal/delay"
)

// DefaultReceiveQueue is the number of datagrams an endpoint holds for its
// reader before it drops new arrivals.
const DefaultReceiveQueue = 1024

// MaxDatagram is the largest datagram WriteTo accepts: the largest UDP
// payload over IPv4.
const MaxDatagram = 65507

// ErrAddrInUse is returned by Listen for an address that already has an
// endpoint.
var ErrAddrInUse = errors.New("simnet: address already in use")

// ErrTooLarge is returned by WriteTo for a datagram over MaxDatagram bytes.
var ErrTooLarge = errors.New("simnet: datagram too large")

// firstEphemeral is where the search for a free port starts when Listen is
// given port 0, as on Linux.
const firstEphemeral = 32768

// Network is a simulated datagram network: a fabric connecting any number
// of endpoints, with an Impairment per direction between each pair. Its
// methods are safe for concurrent use.
type Network struct {
	seed  uint64
	queue *delay.Queue[packet]

	mu           sync.Mutex
	conns        map[netip.AddrPort]*Conn
	links        map[linkKey]*link
	def          transport.Impairment
	receiveQueue int
	nextPort     uint16
}

type linkKey struct{ from, to netip.AddrPort }

type link struct {
	shaper   *transport.Shaper
	counters transport.ImpairmentCounters
	own      bool // has its own impairment, set by SetLink
}

// packet is a datagram in flight.
type packet struct {
	from, to netip.AddrPort
	buf      *[]byte
	link     *link
}

// New returns an empty network whose links draw their fates from seed. Two
// networks with the same seed, given the same writes at the same (fake)
// times, behave identically. Create the network inside the synctest bubble
// that uses it.
func New(seed uint64) *Network {
	n := &Network{
		seed:         seed,
		conns:        make(map[netip.AddrPort]*Conn),
		links:        make(map[linkKey]*link),
		receiveQueue: DefaultReceiveQueue,
		nextPort:     firstEphemeral,
	}
	n.queue = delay.New(0, n.deliver, func(p packet) { delay.Release(p.buf) })
	return n
}

// SetDefault sets the impairment of every link that has none of its own
// from SetLink. It applies to datagrams written from now on.
func (n *Network) SetDefault(imp transport.Impairment) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.def = imp
	for _, l := range n.links {
		if !l.own {
			l.shaper.SetImpairment(imp)
		}
	}
}

// SetLink sets the impairment for datagrams from one address to another
// (one direction only). It may be called at any time, for example with
// Loss: 1 to cut a link in the middle of a test; datagrams already in
// flight keep their fate.
func (n *Network) SetLink(from, to netip.AddrPort, imp transport.Impairment) {
	from, to = normalize(from), normalize(to)
	n.mu.Lock()
	defer n.mu.Unlock()
	l := n.linkLocked(from, to)
	l.own = true
	l.shaper.SetImpairment(imp)
}

// SetReceiveQueue sets how many datagrams each endpoint holds for its
// reader (DefaultReceiveQueue if size <= 0). Arrivals beyond it are dropped
// and counted as DroppedOverflow.
func (n *Network) SetReceiveQueue(size int) {
	if size <= 0 {
		size = DefaultReceiveQueue
	}
	n.mu.Lock()
	n.receiveQueue = size
	n.mu.Unlock()
}

// Stats returns the counters summed over all links.
func (n *Network) Stats() transport.ImpairmentStats {
	n.mu.Lock()
	defer n.mu.Unlock()
	var total transport.ImpairmentStats
	for _, l := range n.links {
		total = total.Add(l.counters.Snapshot())
	}
	return total
}

// LinkStats returns the counters of the link from one address to another
// (one direction). A link that never carried a datagram has zero counters.
func (n *Network) LinkStats(from, to netip.AddrPort) transport.ImpairmentStats {
	n.mu.Lock()
	defer n.mu.Unlock()
	if l, ok := n.links[linkKey{normalize(from), normalize(to)}]; ok {
		return l.counters.Snapshot()
	}
	return transport.ImpairmentStats{}
}

// Listen creates an endpoint at addr. Port 0 picks a free port. It fails
// with ErrAddrInUse if the address is taken.
func (n *Network) Listen(addr netip.AddrPort) (*Conn, error) {
	addr = normalize(addr)
	if !addr.Addr().IsValid() {
		return nil, fmt.Errorf("simnet: listen %v: invalid address", addr)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if addr.Port() == 0 {
		found := false
		for range 1 << 16 {
			p := n.nextPort
			n.nextPort++
			if n.nextPort == 0 {
				n.nextPort = firstEphemeral
			}
			candidate := netip.AddrPortFrom(addr.Addr(), p)
			if _, taken := n.conns[candidate]; !taken && p != 0 {
				addr, found = candidate, true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("simnet: listen %v: %w", addr.Addr(), ErrAddrInUse)
		}
	} else if _, taken := n.conns[addr]; taken {
		return nil, fmt.Errorf("simnet: listen %v: %w", addr, ErrAddrInUse)
	}
	c := &Conn{net: n, addr: addr}
	c.cond.L = &c.mu
	n.conns[addr] = c
	return c, nil
}

// Close closes every endpoint and discards datagrams in flight.
func (n *Network) Close() error {
	n.mu.Lock()
	conns := make([]*Conn, 0, len(n.conns))
	for _, c := range n.conns {
		conns = append(conns, c)
	}
	n.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
	n.queue.Close()
	return nil
}

// linkLocked returns the link from -> to, creating it on first use. Its
// PRNG stream is derived from the two addresses, not from creation order,
// so which link is used first cannot change any link's fates.
func (n *Network) linkLocked(from, to netip.AddrPort) *link {
	k := linkKey{from, to}
	if l, ok := n.links[k]; ok {
		return l
	}
	l := &link{}
	l.shaper = transport.NewShaper(n.def, n.seed, streamID(from, to), &l.counters)
	n.links[k] = l
	return l
}

// streamID is a stable 64-bit name for a directed pair of addresses.
func streamID(from, to netip.AddrPort) uint64 {
	// FNV-1a: stable across processes, unlike maphash.
	var b [2 * 18]byte
	f16, t16 := from.Addr().As16(), to.Addr().As16()
	copy(b[0:16], f16[:])
	binary.BigEndian.PutUint16(b[16:], from.Port())
	copy(b[18:34], t16[:])
	binary.BigEndian.PutUint16(b[34:], to.Port())
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

func (n *Network) send(from, to netip.AddrPort, p []byte) {
	now := time.Now()
	n.mu.Lock()
	l := n.linkLocked(from, to)
	n.mu.Unlock()
	fate := l.shaper.Decide(now, len(p))
	for i := range fate.Copies {
		pkt := packet{from: from, to: to, buf: delay.Copy(p), link: l}
		if !n.queue.Schedule(now.Add(fate.Delay[i]), pkt) {
			delay.Release(pkt.buf)
			l.counters.DroppedQueue.Add(1)
		}
	}
}

// deliver runs when a datagram is due, with the delay queue locked.
func (n *Network) deliver(p packet) {
	n.mu.Lock()
	c := n.conns[p.to]
	limit := n.receiveQueue
	n.mu.Unlock()
	if c == nil {
		delay.Release(p.buf)
		p.link.counters.DroppedUnreachable.Add(1)
		return
	}
	c.enqueue(p, limit)
}

func (n *Network) unbind(c *Conn) {
	n.mu.Lock()
	if n.conns[c.addr] == c {
		delete(n.conns, c.addr)
	}
	n.mu.Unlock()
}

// normalize makes IPv4-mapped IPv6 addresses plain IPv4, so both spellings
// name the same endpoint.
func normalize(a netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
}

// Conn is an endpoint on a Network. It implements transport.Conn.
type Conn struct {
	net  *Network
	addr netip.AddrPort

	mu       sync.Mutex
	cond     sync.Cond
	queue    []packet // ring buffer
	head     int
	count    int
	closed   bool
	deadline time.Time
	timer    *time.Timer
}

var _ transport.Conn = (*Conn)(nil)

// LocalAddr returns the endpoint's address.
func (c *Conn) LocalAddr() netip.AddrPort { return c.addr }

// WriteTo sends p as one datagram to the endpoint at to. Delivery is subject
// to the link's impairment; a datagram to an address nobody listens on is
// dropped silently and counted.
func (c *Conn) WriteTo(p []byte, to netip.AddrPort) error {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return c.opError("write", net.ErrClosed)
	}
	if len(p) > MaxDatagram {
		return c.opError("write", ErrTooLarge)
	}
	if !to.Addr().IsValid() || to.Port() == 0 {
		return c.opError("write", fmt.Errorf("simnet: invalid destination %v", to))
	}
	c.net.send(c.addr, normalize(to), p)
	return nil
}

// ReadFrom waits for a datagram and copies it into p. A datagram longer than
// p is truncated to len(p).
func (c *Conn) ReadFrom(p []byte) (int, netip.AddrPort, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if c.closed {
			return 0, netip.AddrPort{}, c.opError("read", net.ErrClosed)
		}
		if c.count > 0 {
			pkt := c.queue[c.head]
			c.queue[c.head] = packet{}
			c.head = (c.head + 1) % len(c.queue)
			c.count--
			n := copy(p, *pkt.buf)
			delay.Release(pkt.buf)
			return n, pkt.from, nil
		}
		if !c.deadline.IsZero() && !time.Now().Before(c.deadline) {
			return 0, netip.AddrPort{}, c.opError("read", os.ErrDeadlineExceeded)
		}
		c.cond.Wait()
	}
}

// SetReadDeadline sets the time after which ReadFrom fails with
// os.ErrDeadlineExceeded; a zero t means no deadline. It affects reads in
// progress.
func (c *Conn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.opError("set deadline", net.ErrClosed)
	}
	c.deadline = t
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	if !t.IsZero() {
		if d := time.Until(t); d > 0 {
			c.timer = time.AfterFunc(d, func() {
				c.mu.Lock()
				c.cond.Broadcast()
				c.mu.Unlock()
			})
		}
	}
	c.cond.Broadcast()
	return nil
}

// Close releases the address, drops queued datagrams and unblocks readers.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	for ; c.count > 0; c.count-- {
		delay.Release(c.queue[c.head].buf)
		c.queue[c.head] = packet{}
		c.head = (c.head + 1) % len(c.queue)
	}
	c.queue = nil
	c.cond.Broadcast()
	c.mu.Unlock()
	c.net.unbind(c)
	return nil
}

func (c *Conn) enqueue(p packet, limit int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		delay.Release(p.buf)
		p.link.counters.DroppedUnreachable.Add(1)
		return
	}
	if c.count >= limit {
		delay.Release(p.buf)
		p.link.counters.DroppedOverflow.Add(1)
		return
	}
	if c.count == len(c.queue) {
		c.grow(limit)
	}
	c.queue[(c.head+c.count)%len(c.queue)] = p
	c.count++
	p.link.counters.Delivered.Add(1)
	p.link.counters.DeliveredBytes.Add(uint64(len(*p.buf)))
	c.cond.Signal()
}

// grow enlarges the ring buffer, up to limit, keeping its order.
func (c *Conn) grow(limit int) {
	size := min(max(2*len(c.queue), 16), max(limit, c.count+1))
	q := make([]packet, size)
	for i := range c.count {
		q[i] = c.queue[(c.head+i)%len(c.queue)]
	}
	c.queue, c.head = q, 0
}

func (c *Conn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "simnet", Addr: net.UDPAddrFromAddrPort(c.addr), Err: err}
}
