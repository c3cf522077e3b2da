package raknet_test

import (
	"fmt"

	"github.com/netrak/netrak/raknet"
)

func ExampleParseBedrockMOTD() {
	data := []byte("MCPE;My Server;594;1.20.80;3;20;13253860892328930865;world;Survival;1;19132;19133;")
	m, err := raknet.ParseBedrockMOTD(data)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %d/%d players, version %s, %s\n", m.MOTD, m.Players, m.MaxPlayers, m.Version, m.GameMode)

	m.Players++
	text, _ := m.MarshalText()
	fmt.Println(string(text))
	// Output:
	// My Server: 3/20 players, version 1.20.80, Survival
	// MCPE;My Server;594;1.20.80;4;20;13253860892328930865;world;Survival;1;19132;19133;
}

func ExampleUnconnectedPing() {
	ping := raknet.UnconnectedPing{SendTime: 10, ClientGUID: 0x000660ce784c3da5}
	b, _ := ping.Append(nil) // every ping encodes
	fmt.Printf("%d bytes: %x\n", len(b), b)

	var got raknet.UnconnectedPing
	n, err := raknet.ParseUnconnectedPing(b, &got)
	fmt.Println(got == ping, n, err)
	// Output:
	// 33 bytes: 01000000000000000a00ffff00fefefefefdfdfdfd12345678000660ce784c3da5
	// true 33 <nil>
}

func ExampleParseUnconnectedPong() {
	// Pong data from the original library is raw; from Bedrock and
	// go-raknet it is length-prefixed. The parser reads both.
	var got raknet.UnconnectedPong
	for _, enc := range []raknet.PongEncoding{raknet.PongRaw, raknet.PongPrefixed} {
		pong := raknet.UnconnectedPong{ServerGUID: 7, Data: []byte("hello"), Encoding: enc}
		b, _ := pong.Append(nil)
		raknet.ParseUnconnectedPong(b, &got)
		fmt.Printf("%d bytes, %s: %q\n", len(b), got.Encoding, got.Data)
	}
	// Output:
	// 38 bytes, raw: "hello"
	// 40 bytes, prefixed: "hello"
}
