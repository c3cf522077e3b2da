package raknet_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/netrak/netrak/raknet"
	"github.com/netrak/netrak/reliability"
)

// A server that echoes user messages, and a client that sends one.
func ExampleListen() {
	l, err := raknet.Listen("udp4", "127.0.0.1:0", raknet.ListenConfig{
		Protocols: []uint8{raknet.ProtocolOriginal, raknet.ProtocolBedrock},
		PongData:  []byte("MCPE;example;594;1.20.80;0;10;1;example;Survival;1;19132;19133;"),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.AcceptConn(context.Background())
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				for {
					m, err := c.ReadMessage()
					if err != nil {
						return
					}
					c.WriteMessage(m.Data, reliability.ReliableOrdered, 0, reliability.Medium)
				}
			}()
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := raknet.DialContext(ctx, "udp", l.Addr().String())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte{raknet.IDUserPacketEnum, 'h', 'i'}); err != nil {
		log.Fatal(err)
	}
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("echo: %q, protocol %d\n", buf[1:n], c.Protocol())
	// Output: echo: "hi", protocol 11
}
