package netcode_test

import (
	"bytes"
	"fmt"
	"net/netip"
	"time"

	"github.com/netrak/netrak/netcode"
)

// A backend generates a connect token for an authenticated client; the
// client reads the public part to learn where to connect.
func ExampleGenerateConnectToken() {
	privateKey, _ := netcode.ParseKeyHex("606abe6ec91910ea9a6562f66f2b30e44371d62cd19927266b3c60f4b715aba1")
	token, err := netcode.GenerateConnectToken(&netcode.TokenParams{
		ClientID:        42,
		PublicAddresses: []netip.AddrPort{netip.MustParseAddrPort("203.0.113.5:40000")},
		Expiry:          30 * time.Second,
		Timeout:         5 * time.Second,
		ProtocolID:      0x1122334455667788,
		PrivateKey:      privateKey,
		Now:             time.Unix(1_700_000_000, 0),
		// Fixed randomness makes the output reproducible; leave Rand nil
		// in production to use crypto/rand.
		Rand: bytes.NewReader(make([]byte, 2*netcode.KeyBytes+netcode.ConnectTokenNonceBytes)),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	rest := netcode.EncodeTokenBase64(token) // handed to the client over HTTPS

	raw, _ := netcode.DecodeTokenBase64(rest)
	var tok netcode.ConnectToken
	if err := tok.UnmarshalBinary(raw); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(raw), "bytes")
	fmt.Printf("protocol %#x, valid %d s, timeout %d s\n", tok.ProtocolID, tok.ExpireTimestamp-tok.CreateTimestamp, tok.TimeoutSeconds)
	fmt.Println("servers:", tok.ServerAddresses)
	// Output:
	// 2048 bytes
	// protocol 0x1122334455667788, valid 30 s, timeout 5 s
	// servers: [203.0.113.5:40000]
}
