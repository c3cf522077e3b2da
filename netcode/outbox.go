package netcode

import "net/netip"

// outbox is the queue of datagrams a core (Server or Client) wants sent,
// bounded so that a driver that never calls Outgoing cannot grow it
// forever. Datagrams are written back to back into one buffer; take hands
// them over and swaps in the other set of buffers, so what it returned
// stays valid while the core goes on queueing, and in steady state the
// two sets are reused without allocating.
type outbox struct {
	buf, prevBuf   []byte
	refs, prevRefs []outRef
	view           []Datagram
	max            int // datagrams between two takes
}

type outRef struct {
	off, n int
	to     netip.AddrPort
}

// full reports whether another datagram would pass the bound; the caller
// counts the drop under its own reason.
func (o *outbox) full() bool { return len(o.refs) >= o.max }

// packet seals p with c as one datagram for to and returns its size.
func (o *outbox) packet(p *Packet, c *PacketCipher, to netip.AddrPort) int {
	off := len(o.buf)
	buf, err := p.Append(o.buf, c)
	return o.commit(buf, err, off, to)
}

// request queues r as one datagram for to and returns its size.
func (o *outbox) request(r *RequestPacket, to netip.AddrPort) int {
	off := len(o.buf)
	buf, err := r.Append(o.buf)
	return o.commit(buf, err, off, to)
}

// commit records buf[off:] as one datagram for to. The cores build every
// packet themselves, so an encoding error is a bug in the core, not
// something the network can cause.
func (o *outbox) commit(buf []byte, err error, off int, to netip.AddrPort) int {
	if err != nil {
		panic("netcode: core built an invalid packet: " + err.Error())
	}
	o.buf = buf
	n := len(buf) - off
	o.refs = append(o.refs, outRef{off: off, n: n, to: to})
	return n
}

// take returns the datagrams queued since the last take. The slice and
// the bytes it points to are valid until the next take.
func (o *outbox) take() []Datagram {
	o.view = o.view[:0]
	for _, r := range o.refs {
		o.view = append(o.view, Datagram{Data: o.buf[r.off : r.off+r.n : r.off+r.n], Addr: r.to})
	}
	o.buf, o.prevBuf = o.prevBuf[:0], o.buf
	o.refs, o.prevRefs = o.prevRefs[:0], o.refs
	return o.view
}
