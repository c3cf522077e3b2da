package reliability_test

import (
	"fmt"
	"time"

	"github.com/netrak/netrak/reliability"
)

// Two engines wired back to back: the driver moves datagrams between them
// and passes the time explicitly, here a fake clock.
func ExampleEngine() {
	client, err := reliability.New(reliability.Config{MTU: 1200 + reliability.UDPIPOverhead})
	if err != nil {
		panic(err)
	}
	server, err := reliability.New(reliability.Config{MTU: 1200 + reliability.UDPIPOverhead})
	if err != nil {
		panic(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

	big := make([]byte, 3000) // larger than one datagram: sent in parts
	client.Send([]byte("hello"), reliability.ReliableOrdered, 0, reliability.High, now)
	client.Send(big, reliability.ReliableOrdered, 0, reliability.Low, now)
	receipt, _ := client.Send([]byte("ping"), reliability.UnreliableWithAckReceipt, 0, reliability.Medium, now)

	// exchange delivers every datagram one side wants to send to the other.
	var buf []byte
	exchange := func(from, to *reliability.Engine) {
		for {
			var ok bool
			buf, ok = from.AppendDatagram(buf[:0], now)
			if !ok {
				return
			}
			to.Receive(buf, now)
		}
	}
	exchange(client, server)
	for {
		m, ok := server.ReadMessage()
		if !ok {
			break
		}
		fmt.Printf("server got %d bytes, %v on channel %d\n", len(m.Payload), m.Reliability, m.Channel)
	}

	// The server acknowledges after its ACK delay; the driver learns when
	// from NextTimeout.
	now = server.NextTimeout()
	exchange(server, client)
	for {
		ev, ok := client.ReadEvent()
		if !ok {
			break
		}
		fmt.Printf("receipt %d: %v (ours: %d)\n", ev.Receipt, ev.Kind, receipt)
	}
	s := client.Stats()
	fmt.Println("in flight:", s.InFlightBytes, "held:", s.HeldSendBytes)
	// Output:
	// server got 5 bytes, RELIABLE_ORDERED on channel 0
	// server got 4 bytes, UNRELIABLE on channel 0
	// server got 3000 bytes, RELIABLE_ORDERED on channel 0
	// receipt 1: acked (ours: 1)
	// in flight: 0 held: 0
}
