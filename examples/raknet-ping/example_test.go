package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/netrak/netrak/raknet"
)

// Example pings a RakNet listener on a loopback port that advertises a
// Bedrock MOTD. The server's port and the RTT vary from run to run and
// are left out.
func Example() {
	motd := raknet.BedrockMOTD{
		MOTD: "Example server", Protocol: 594, Version: "1.20.80", Players: 3, MaxPlayers: 20,
		ServerGUID: 0x5eed, SubMOTD: "world", GameMode: "Survival", GameModeNumber: 1, PortV4: 19132,
	}
	data, _ := motd.MarshalText()
	l, err := raknet.Listen("udp4", "127.0.0.1:0", raknet.ListenConfig{GUID: 0x5eed, PongData: data})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()

	var out bytes.Buffer
	code := run(context.Background(), []string{"-timeout", "5s", l.Addr().String()}, &out, io.Discard)
	for line := range strings.Lines(out.String()) {
		if strings.HasPrefix(line, "pong from") || strings.HasPrefix(line, "  RTT:") {
			continue
		}
		fmt.Print(line)
	}
	fmt.Println("exit:", code)
	// Output:
	//   server GUID: 24301 (0x0000000000005eed)
	//   data:        "MCPE;Example server;594;1.20.80;3;20;24301;world;Survival;1;19132;0;" (68 bytes, prefixed)
	// Bedrock MOTD
	//   edition:     MCPE
	//   MOTD:        Example server
	//   sub MOTD:    world
	//   version:     1.20.80 (protocol 594)
	//   players:     3/20
	//   game mode:   Survival (1)
	//   server GUID: 24301
	//   ports:       IPv4 19132, IPv6 0
	// exit: 0
}
