package reliability_test

import (
	"fmt"
	"io"

	"github.com/netrak/netrak/reliability"
)

// Encode a data datagram holding two frames, then decode it.
func Example_wire() {
	h := reliability.DataHeader{NeedsBAndAS: true, Number: 7}
	first := reliability.Frame{
		Reliability:     reliability.ReliableOrdered,
		ReliableIndex:   3,
		OrderingIndex:   2,
		OrderingChannel: 0,
		Payload:         []byte("hello"),
	}
	second := reliability.Frame{Reliability: reliability.Unreliable, Payload: []byte{0x86, 1}}

	dgram := h.Append(nil)
	dgram = first.Append(dgram)
	dgram = second.Append(dgram)
	fmt.Printf("% x\n", dgram)

	fmt.Println(reliability.ClassifyDatagram(dgram))
	hdr, frames, err := reliability.ParseDataDatagram(dgram)
	if err != nil {
		panic(err)
	}
	fmt.Println("datagram", hdr.Number)
	var f reliability.Frame
	for {
		if err := frames.Next(&f); err == io.EOF {
			break
		} else if err != nil {
			panic(err)
		}
		fmt.Printf("%v reliable=%d ordering=%d/%d payload=%q\n",
			f.Reliability, f.ReliableIndex, f.OrderingChannel, f.OrderingIndex, f.Payload)
	}
	// Output:
	// 84 07 00 00 60 00 28 03 00 00 02 00 00 00 68 65 6c 6c 6f 00 00 10 86 01
	// data
	// datagram 7
	// RELIABLE_ORDERED reliable=3 ordering=0/2 payload="hello"
	// UNRELIABLE reliable=0 ordering=0/0 payload="\x86\x01"
}
