// Package refdemo holds the demo convention of the netcode reference
// programs, shared by examples/netcode-server and examples/netcode-client
// so that both sides, and the C reference's own client and server, agree on
// key, protocol id, address, token lifetimes and traffic.
package refdemo
