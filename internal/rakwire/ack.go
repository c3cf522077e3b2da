package rakwire

import (
	"encoding/binary"
	"math"
)

// ACK and NAK datagrams. An ACK is the byte 0xc0 (0xe0 with "has B and
// AS", then a big-endian float32 AS), followed by a range list; a NAK is
// 0xa0 followed by a range list. A range list is a u16 BE record count and,
// per record, a u8 flag (1: single number, 0: range), a u24 LE min, and for
// a range a u24 LE max.
//
// A record can name 2^24 datagram numbers, so nothing here ever expands a
// range: parsers return ranges, and their cost is bounded by the input's
// length (at most one record per 4 bytes).

// Range is an inclusive run of datagram numbers, Min <= Max. Ranges never
// wrap: a run that crosses 0xffffff -> 0 is two ranges.
type Range struct {
	Min, Max uint32
}

// recordLen is the encoded size of r's record.
func (r Range) recordLen() int {
	if r.Min == r.Max {
		return 4
	}
	return 7
}

const (
	// rangeListHeaderLen is the record count.
	rangeListHeaderLen = 2
	// minRecordLen is the size of a single-number record.
	minRecordLen = 4
	// maxRangeRecords is the most records a range list can declare.
	maxRangeRecords = math.MaxUint16
)

// appendRangeList appends a range list holding rs: at most 65535 ranges
// (ErrRangeCount), each with Min <= Max (ErrRangeInverted) < 2^24 (ErrU24).
// On error b is returned unchanged.
func appendRangeList(b []byte, rs []Range) ([]byte, error) {
	if len(rs) > maxRangeRecords {
		return b, ErrRangeCount
	}
	start := len(b)
	b = binary.BigEndian.AppendUint16(b, uint16(len(rs)))
	for _, r := range rs {
		switch {
		case r.Min > r.Max:
			return b[:start], ErrRangeInverted
		case r.Max > maxU24:
			return b[:start], ErrU24
		case r.Min == r.Max:
			b = appendU24(append(b, 1), r.Min)
		default:
			b = appendU24(appendU24(append(b, 0), r.Min), r.Max)
		}
	}
	return b, nil
}

// rangeListLen returns the encoded size of a range list holding rs.
func rangeListLen(rs []Range) int {
	n := rangeListHeaderLen
	for _, r := range rs {
		n += r.recordLen()
	}
	return n
}

// rangesThatFit returns how many leading ranges of rs fit in a range list
// of at most maxLen bytes (and at most 65535 records).
func rangesThatFit(rs []Range, maxLen int) int {
	n := rangeListHeaderLen
	for i, r := range rs {
		n += r.recordLen()
		if n > maxLen || i == maxRangeRecords {
			return i
		}
	}
	return len(rs)
}

// parseRangeList parses a range list from the start of b, appends its
// ranges to dst and returns dst and the bytes used. It rejects a count that
// the remaining bytes could not hold (before reading any record, so the
// work is bounded by len(b)) and any record with min > max.
func parseRangeList(b []byte, dst []Range) ([]Range, int, error) {
	if len(b) < rangeListHeaderLen {
		return dst, 0, ErrTruncated
	}
	count := int(binary.BigEndian.Uint16(b))
	if count > (len(b)-rangeListHeaderLen)/minRecordLen {
		return dst, 0, ErrRangeCount
	}
	p := rangeListHeaderLen
	for range count {
		if len(b)-p < minRecordLen {
			return dst, 0, ErrTruncated
		}
		single := b[p] != 0
		r := Range{Min: u24(b[p+1:])}
		p += 4
		if single {
			r.Max = r.Min
		} else {
			if len(b)-p < 3 {
				return dst, 0, ErrTruncated
			}
			r.Max = u24(b[p:])
			p += 3
			if r.Min > r.Max {
				return dst, 0, ErrRangeInverted
			}
		}
		dst = append(dst, r)
	}
	return dst, p, nil
}

// Ack is an ACK or NAK datagram.
type Ack struct {
	// NAK marks a negative acknowledgement: the ranges were not received.
	NAK bool
	// HasAS (ACK only) adds the sender's arrival-rate estimate AS, a float
	// the original library's sliding-window build never sends.
	HasAS bool
	AS    float32
	// Ranges lists the datagram numbers acknowledged (or missing).
	Ranges []Range
}

// headerLen is the size of a's header: the flags byte and the AS float.
func (a *Ack) headerLen() int {
	if !a.NAK && a.HasAS {
		return 1 + 4
	}
	return 1
}

// Len returns the encoded size of a.
func (a *Ack) Len() int { return a.headerLen() + rangeListLen(a.Ranges) }

// Append appends a as a datagram. HasAS and AS are ignored for a NAK. The
// ranges must be at most 65535 (ErrRangeCount; callers bound the size with
// AckFit), each with Min <= Max (ErrRangeInverted) below 2^24 (ErrU24). On
// error b is returned unchanged.
func (a *Ack) Append(b []byte) ([]byte, error) {
	start := len(b)
	if a.NAK {
		b = append(b, HeaderValid|HeaderNAK)
	} else if a.HasAS {
		b = append(b, HeaderValid|HeaderACK|HeaderHasBAndAS)
		b = binary.BigEndian.AppendUint32(b, math.Float32bits(a.AS))
	} else {
		b = append(b, HeaderValid|HeaderACK)
	}
	b, err := appendRangeList(b, a.Ranges)
	if err != nil {
		return b[:start], err
	}
	return b, nil
}

// AckFit returns how many leading ranges of rs fit in one ACK (or NAK)
// datagram of at most maxLen bytes. The rest go in the next one.
func AckFit(nak, hasAS bool, rs []Range, maxLen int) int {
	a := Ack{NAK: nak, HasAS: hasAS}
	return rangesThatFit(rs, maxLen-a.headerLen())
}

// ParseAck parses an ACK or NAK datagram into a and returns the bytes it
// used. It reuses a.Ranges' storage, so that a caller who keeps one Ack
// parses without allocating. The original library ignores bytes after the
// range list, and so does ParseAck: they are not counted as used. On error
// a.Ranges may hold a partial list.
func ParseAck(b []byte, a *Ack) (int, error) {
	ranges := a.Ranges[:0]
	*a = Ack{Ranges: ranges}
	if len(b) == 0 {
		return 0, ErrTruncated
	}
	p := 1
	switch ClassifyDatagram(b) {
	case DatagramOffline:
		return 0, ErrNotConnected
	case DatagramData:
		return 0, ErrWrongDatagramType
	case DatagramNAK:
		a.NAK = true
	case DatagramACK:
		if b[0]&HeaderHasBAndAS != 0 {
			if len(b) < 5 {
				return 0, ErrTruncated
			}
			a.HasAS = true
			a.AS = math.Float32frombits(binary.BigEndian.Uint32(b[1:]))
			p = 5
		}
	}
	var n int
	var err error
	a.Ranges, n, err = parseRangeList(b[p:], ranges)
	if err != nil {
		return 0, err
	}
	return p + n, nil
}
