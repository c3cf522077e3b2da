package rakwire_test

import (
	"fmt"
	"io"

	"github.com/netrak/netrak/internal/rakwire"
)

// Encode a data datagram holding two frames, then decode it.
func Example() {
	h := rakwire.DataHeader{NeedsBAndAS: true, Number: 7}
	first := rakwire.Frame{
		Reliability:     rakwire.ReliableOrdered,
		ReliableIndex:   3,
		OrderingIndex:   2,
		OrderingChannel: 0,
		Payload:         []byte("hello"),
	}
	second := rakwire.Frame{Reliability: rakwire.Unreliable, Payload: []byte{0x86, 1}}

	dgram, err := h.Append(nil)
	if err == nil {
		dgram, err = first.Append(dgram)
	}
	if err == nil {
		dgram, err = second.Append(dgram)
	}
	if err != nil {
		panic(err)
	}
	fmt.Printf("% x\n", dgram)

	fmt.Println(rakwire.ClassifyDatagram(dgram))
	var hdr rakwire.DataHeader
	n, err := rakwire.ParseDataHeader(dgram, &hdr)
	if err != nil {
		panic(err)
	}
	fmt.Println("datagram", hdr.Number)
	frames := rakwire.NewFrameReader(dgram[n:])
	var f rakwire.Frame
	for {
		if err := frames.Next(&f); err == io.EOF {
			break
		} else if err != nil {
			panic(err)
		}
		fmt.Printf("kind %d reliable=%d ordering=%d/%d payload=%q\n",
			f.Reliability, f.ReliableIndex, f.OrderingChannel, f.OrderingIndex, f.Payload)
	}
	// Output:
	// 84 07 00 00 60 00 28 03 00 00 02 00 00 00 68 65 6c 6c 6f 00 00 10 86 01
	// data
	// datagram 7
	// kind 3 reliable=3 ordering=0/2 payload="hello"
	// kind 0 reliable=0 ordering=0/0 payload="\x86\x01"
}
