package netcode

// payloadQueue holds received payloads for the application, oldest first,
// up to a fixed count. Buffers are recycled: a popped payload's buffer
// goes back to a spare list that a later push copies into, so a steady
// stream allocates nothing, and a popped payload is valid only until the
// next push. The buffers in use and spare never outnumber the payloads
// ever waiting at once, plus one.
type payloadQueue struct {
	ring    []queuedPayload // allocated on the first push
	head, n int
	spare   [][]byte
}

type queuedPayload struct {
	seq  uint64
	data []byte
}

// push copies p to the back of the queue, which holds at most size
// payloads; it reports false, keeping nothing, when the queue is full.
func (q *payloadQueue) push(size int, seq uint64, p []byte) bool {
	if q.n == size {
		return false
	}
	if q.ring == nil {
		q.ring = make([]queuedPayload, size)
	}
	e := &q.ring[(q.head+q.n)%len(q.ring)]
	e.seq = seq
	var buf []byte
	if k := len(q.spare); k > 0 {
		buf = q.spare[k-1]
		q.spare = q.spare[:k-1]
	}
	e.data = append(buf[:0], p...)
	q.n++
	return true
}

// pop removes the oldest payload.
func (q *payloadQueue) pop() (payload []byte, seq uint64, ok bool) {
	if q.n == 0 {
		return nil, 0, false
	}
	e := &q.ring[q.head]
	q.head = (q.head + 1) % len(q.ring)
	q.n--
	q.spare = append(q.spare, e.data)
	payload, e.data = e.data, nil
	return payload, e.seq, true
}

// discard empties the queue, keeping the buffers for reuse.
func (q *payloadQueue) discard() {
	for q.n > 0 {
		q.pop()
	}
}
