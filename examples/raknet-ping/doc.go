// Command raknet-ping sends RakNet unconnected pings to a server and prints
// its GUID, the round-trip time and its pong data, with the fields of a
// Minecraft Bedrock MOTD when the data is one.
//
//	go run ./examples/raknet-ping [-timeout 5s] HOST:PORT
//
// It exits 1 when no pong arrives within the timeout, 2 on bad usage.
package main
