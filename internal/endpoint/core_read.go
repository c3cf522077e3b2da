package endpoint

import "github.com/netrak/netrak/reliability"

// HasMessage reports whether a user message waits for the reader.
func (c *Core) HasMessage() bool { return c.qhead < len(c.queue) }

// Queued is the bytes of user messages waiting for the reader.
func (c *Core) Queued() int { return c.queued }

// Read copies the head message into b, keeping what does not fit for the
// next read.
func (c *Core) Read(b []byte) int {
	m := &c.queue[c.qhead]
	n := copy(b, m.Data[c.partial:])
	c.partial += n
	if c.partial == len(m.Data) {
		c.pop(true)
	}
	return n
}

// ReadMessage removes the head message, after a partial read the rest of
// it, and gives its buffer to the caller.
func (c *Core) ReadMessage() Message {
	m := c.queue[c.qhead]
	m.Data = m.Data[c.partial:len(m.Data):len(m.Data)]
	c.pop(false)
	return m
}

// ReadMessageInto is ReadMessage copying into buf[:0] (grown if too
// small), so that the queue's buffer can be recycled.
func (c *Core) ReadMessageInto(buf []byte) Message {
	m := c.queue[c.qhead]
	m.Data = append(buf[:0], m.Data[c.partial:]...)
	c.pop(true)
	return m
}

// pop removes the head message; recycle says its buffer is free again.
func (c *Core) pop(recycle bool) {
	if recycle {
		c.bufs.put(c.queue[c.qhead].Data)
	}
	c.queued -= len(c.queue[c.qhead].Data)
	c.queue[c.qhead] = Message{}
	c.qhead++
	c.partial = 0
	if c.qhead == len(c.queue) {
		c.queue, c.qhead = c.queue[:0], 0
	} else if c.qhead > 1024 && c.qhead*2 > len(c.queue) {
		n := copy(c.queue, c.queue[c.qhead:])
		clear(c.queue[n:])
		c.queue, c.qhead = c.queue[:n], 0
	}
}

// NextEvent removes the oldest receipt, if any.
func (c *Core) NextEvent() (reliability.Event, bool) {
	if len(c.events) == 0 {
		return reliability.Event{}, false
	}
	ev := c.events[0]
	c.events = c.events[1:]
	return ev, true
}

// EventsDropped counts receipts dropped because nobody read them.
func (c *Core) EventsDropped() uint64 { return c.eventsDropped }
