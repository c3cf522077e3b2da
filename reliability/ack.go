package reliability

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

// AppendRangeList appends a range list holding rs. Numbers are reduced to 24
// bits. It writes at most 65535 records (the count is a u16) and returns how
// many it wrote; use RangesThatFit to respect a size limit.
func AppendRangeList(b []byte, rs []Range) ([]byte, int) {
	n := min(len(rs), maxRangeRecords)
	b = binary.BigEndian.AppendUint16(b, uint16(n))
	for _, r := range rs[:n] {
		if r.Min&seqMask == r.Max&seqMask {
			b = appendU24(append(b, 1), r.Min)
		} else {
			b = appendU24(appendU24(append(b, 0), r.Min), r.Max)
		}
	}
	return b, n
}

// RangeListLen returns the encoded size of a range list holding rs.
func RangeListLen(rs []Range) int {
	n := rangeListHeaderLen
	for _, r := range rs {
		n += r.recordLen()
	}
	return n
}

// RangesThatFit returns how many leading ranges of rs fit in a range list
// of at most maxLen bytes (and at most 65535 records).
func RangesThatFit(rs []Range, maxLen int) int {
	n := rangeListHeaderLen
	for i, r := range rs {
		n += r.recordLen()
		if n > maxLen || i == maxRangeRecords {
			return i
		}
	}
	return len(rs)
}

// ParseRangeList parses a range list from the start of b, appends its
// ranges to dst and returns dst and the bytes used. It rejects a count that
// the remaining bytes could not hold (before reading any record, so the
// work is bounded by len(b)) and any record with min > max.
func ParseRangeList(b []byte, dst []Range) ([]Range, int, error) {
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

// ackHeaderLen is the size of a's header: the flags byte and the AS float.
func (a *Ack) headerLen() int {
	if !a.NAK && a.HasAS {
		return 1 + 4
	}
	return 1
}

// Len returns the encoded size of a.
func (a *Ack) Len() int { return a.headerLen() + RangeListLen(a.Ranges) }

// Append appends a as a datagram. HasAS and AS are ignored for a NAK. At
// most 65535 ranges are written; callers bound the size with AckFit.
func (a *Ack) Append(b []byte) []byte {
	if a.NAK {
		b = append(b, HeaderValid|HeaderNAK)
	} else if a.HasAS {
		b = append(b, HeaderValid|HeaderACK|HeaderHasBAndAS)
		b = binary.BigEndian.AppendUint32(b, math.Float32bits(a.AS))
	} else {
		b = append(b, HeaderValid|HeaderACK)
	}
	b, _ = AppendRangeList(b, a.Ranges)
	return b
}

// AckFit returns how many leading ranges of rs fit in one ACK (or NAK)
// datagram of at most maxLen bytes. The rest go in the next one.
func AckFit(nak, hasAS bool, rs []Range, maxLen int) int {
	a := Ack{NAK: nak, HasAS: hasAS}
	return RangesThatFit(rs, maxLen-a.headerLen())
}

// ParseAck parses an ACK or NAK datagram into a, reusing a.Ranges' storage,
// so that a caller who keeps one Ack parses without allocating. Bytes after
// the range list are ignored, as the original library ignores them. On error
// a.Ranges may hold a partial list.
func ParseAck(b []byte, a *Ack) error {
	ranges := a.Ranges[:0]
	*a = Ack{Ranges: ranges}
	if len(b) == 0 {
		return ErrTruncated
	}
	p := 1
	switch ClassifyDatagram(b) {
	case DatagramOffline:
		return ErrNotConnected
	case DatagramData:
		return ErrWrongDatagramType
	case DatagramNAK:
		a.NAK = true
	case DatagramACK:
		if b[0]&HeaderHasBAndAS != 0 {
			if len(b) < 5 {
				return ErrTruncated
			}
			a.HasAS = true
			a.AS = math.Float32frombits(binary.BigEndian.Uint32(b[1:]))
			p = 5
		}
	}
	var err error
	a.Ranges, _, err = ParseRangeList(b[p:], ranges)
	return err
}

// CoalesceRanges appends to dst the ranges covering nums, which must be
// sorted in ascending numeric order (not serial order: a run crossing the
// 24-bit wrap is sorted as two runs). Duplicates are merged.
func CoalesceRanges(dst []Range, nums []uint32) []Range {
	for i := 0; i < len(nums); {
		r := Range{Min: nums[i], Max: nums[i]}
		i++
		for i < len(nums) && (nums[i] == r.Max || nums[i] == r.Max+1) {
			r.Max = nums[i]
			i++
		}
		dst = append(dst, r)
	}
	return dst
}
