package netcode

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net/netip"
	"time"
)

// Defaults of TokenParams.
const (
	DefaultTokenExpiry  = 30 * time.Second
	DefaultTokenTimeout = 5 * time.Second
)

// ConnectTokenPrivate is the private part of a connect token, readable only
// by the backend and the servers. Its encoding is 1024 bytes, zero padded:
// Append and ParseConnectTokenPrivate handle that plaintext, and
// TokenCipher seals it into the 1024 bytes that travel, tag included, as
// the reference does in two steps too.
type ConnectTokenPrivate struct {
	ClientID uint64
	// TimeoutSeconds is the connection timeout. Zero or negative disables
	// timeouts, as in the reference implementation (the standard names only
	// negative values; zero is not an immediate timeout).
	TimeoutSeconds int32
	// ServerAddresses are the addresses the servers know themselves by
	// (the "internal" addresses of TokenParams): a server accepts the token
	// only if its ServerConfig.PublicAddress is among them.
	ServerAddresses   []netip.AddrPort
	ClientToServerKey Key
	ServerToClientKey Key
	UserData          [UserDataBytes]byte
}

// Len is the size of the plaintext encoding, ConnectTokenPrivateBytes for
// every token.
func (t *ConnectTokenPrivate) Len() int { return ConnectTokenPrivateBytes }

// Append appends the 1024-byte plaintext encoding of t to b. It fails,
// leaving b as it was, with ErrServerAddressCount unless t has 1 to 32
// server addresses, and with ErrAddress for an invalid one.
func (t *ConnectTokenPrivate) Append(b []byte) ([]byte, error) {
	start := len(b)
	b = binary.LittleEndian.AppendUint64(b, t.ClientID)
	b, err := appendSession(b, t.TimeoutSeconds, t.ServerAddresses, &t.ClientToServerKey, &t.ServerToClientKey)
	if err != nil {
		return b[:start], err
	}
	b = append(b, t.UserData[:]...)
	return appendZeros(b, start+ConnectTokenPrivateBytes-len(b)), nil
}

// ParseConnectTokenPrivate decodes a plaintext private token, which must
// be exactly its 1024 bytes, into t, reusing t.ServerAddresses' storage.
// Padding is not checked, as in the reference.
func ParseConnectTokenPrivate(b []byte, t *ConnectTokenPrivate) (int, error) {
	if len(b) != ConnectTokenPrivateBytes {
		return 0, ErrPacketSize
	}
	r := reader{b: b}
	t.ClientID = r.u64()
	if err := r.session(&t.TimeoutSeconds, &t.ServerAddresses, &t.ClientToServerKey, &t.ServerToClientKey); err != nil {
		return 0, err
	}
	r.bytes(t.UserData[:])
	if r.err != nil {
		return 0, r.err
	}
	return ConnectTokenPrivateBytes, nil
}

// ConnectToken is the 2048-byte token a backend hands to a client. Its
// PrivateData is the sealed private part, opaque to the client.
type ConnectToken struct {
	ProtocolID      uint64
	CreateTimestamp uint64 // unix seconds
	ExpireTimestamp uint64 // unix seconds
	Nonce           [ConnectTokenNonceBytes]byte
	PrivateData     [ConnectTokenPrivateBytes]byte
	// TimeoutSeconds is the connection timeout. Zero or negative disables
	// timeouts, as in the reference implementation (the standard names only
	// negative values; zero is not an immediate timeout).
	TimeoutSeconds int32
	// ServerAddresses are the addresses the client tries, in order.
	ServerAddresses   []netip.AddrPort
	ClientToServerKey Key
	ServerToClientKey Key
}

// Len is the encoded size, ConnectTokenBytes for every token.
func (t *ConnectToken) Len() int { return ConnectTokenBytes }

// Append appends the 2048-byte encoding of t to b. It fails, leaving b as
// it was, for a token no client would accept: ErrServerAddressCount unless
// t has 1 to 32 server addresses, ErrAddress for an invalid one, and
// ErrTokenTimestamps if it was created after it expires.
func (t *ConnectToken) Append(b []byte) ([]byte, error) {
	start := len(b)
	if t.CreateTimestamp > t.ExpireTimestamp {
		return b, ErrTokenTimestamps
	}
	b = append(b, VersionInfo...)
	b = binary.LittleEndian.AppendUint64(b, t.ProtocolID)
	b = binary.LittleEndian.AppendUint64(b, t.CreateTimestamp)
	b = binary.LittleEndian.AppendUint64(b, t.ExpireTimestamp)
	b = append(b, t.Nonce[:]...)
	b = append(b, t.PrivateData[:]...)
	b, err := appendSession(b, t.TimeoutSeconds, t.ServerAddresses, &t.ClientToServerKey, &t.ServerToClientKey)
	if err != nil {
		return b[:start], err
	}
	return appendZeros(b, start+ConnectTokenBytes-len(b)), nil
}

// ParseConnectToken decodes a connect token, which must be exactly its
// 2048 bytes, into t, reusing t.ServerAddresses' storage, and checks what
// a client checks before connecting: version info, 1 to 32 server
// addresses of type 1 or 2, and a create timestamp not after the expire
// timestamp.
func ParseConnectToken(b []byte, t *ConnectToken) (int, error) {
	if len(b) != ConnectTokenBytes {
		return 0, ErrTokenSize
	}
	if string(b[:VersionInfoBytes]) != VersionInfo {
		return 0, ErrVersion
	}
	r := reader{b: b[VersionInfoBytes:]}
	t.ProtocolID = r.u64()
	t.CreateTimestamp = r.u64()
	t.ExpireTimestamp = r.u64()
	r.bytes(t.Nonce[:])
	r.bytes(t.PrivateData[:])
	if err := r.session(&t.TimeoutSeconds, &t.ServerAddresses, &t.ClientToServerKey, &t.ServerToClientKey); err != nil {
		return 0, err
	}
	if r.err != nil {
		return 0, r.err
	}
	if t.CreateTimestamp > t.ExpireTimestamp {
		return 0, ErrTokenTimestamps
	}
	return ConnectTokenBytes, nil
}

// Both parts of a connect token carry what the client and the servers
// need to hold a session, in the same layout: the timeout, the server
// addresses and the two packet keys. appendSession writes that run and
// reader.session reads it, reusing the address list's storage.

func appendSession(b []byte, timeout int32, addrs []netip.AddrPort, c2s, s2c *Key) ([]byte, error) {
	b = binary.LittleEndian.AppendUint32(b, uint32(timeout))
	b, err := appendAddressList(b, addrs)
	if err != nil {
		return b, err
	}
	b = append(b, c2s[:]...)
	return append(b, s2c[:]...), nil
}

func (r *reader) session(timeout *int32, addrs *[]netip.AddrPort, c2s, s2c *Key) error {
	*timeout = int32(r.u32())
	list, err := r.addresses((*addrs)[:0])
	if err != nil {
		return err
	}
	*addrs = list
	r.bytes(c2s[:])
	r.bytes(s2c[:])
	return nil
}

// TokenParams are the inputs of GenerateConnectToken.
type TokenParams struct {
	ClientID uint64
	// PublicAddresses are the server addresses the client dials, in order
	// (1 to 32). They go into the public part of the token.
	PublicAddresses []netip.AddrPort
	// InternalAddresses go into the private part, where servers look for
	// their own ServerConfig.PublicAddress. They are the addresses the
	// servers know themselves by, which differ from PublicAddresses when a
	// relay or load balancer sits in front of them. Nil means the same as
	// PublicAddresses; otherwise the two lists must have the same length.
	InternalAddresses []netip.AddrPort
	// Expiry is how long the token stays valid after Now, rounded up to whole
	// seconds. Zero means DefaultTokenExpiry. It must not be negative.
	Expiry time.Duration
	// Timeout is the connection timeout written into the token, rounded up
	// to whole seconds. Zero means DefaultTokenTimeout; negative disables
	// timeouts (dev only).
	Timeout    time.Duration
	ProtocolID uint64
	PrivateKey Key
	UserData   [UserDataBytes]byte
	// Now is the creation time. The zero value means time.Now().
	Now time.Time
	// Rand supplies the two packet keys and the token nonce, read in that
	// order. Nil means crypto/rand.
	Rand io.Reader
}

// GenerateConnectToken builds a connect token, as a backend does for an
// authenticated client, and returns its 2048-byte encoding.
func GenerateConnectToken(p *TokenParams) ([]byte, error) {
	n := len(p.PublicAddresses)
	if n < 1 || n > MaxServersPerConnect {
		return nil, ErrServerAddressCount
	}
	internal := p.InternalAddresses
	if internal == nil {
		internal = p.PublicAddresses
	} else if len(internal) != n {
		return nil, fmt.Errorf("%w: %d internal addresses for %d public ones", ErrServerAddressCount, len(internal), n)
	}
	if p.Expiry < 0 {
		return nil, fmt.Errorf("netcode: negative token expiry %v", p.Expiry)
	}
	expiry := p.Expiry
	if expiry == 0 {
		expiry = DefaultTokenExpiry
	}
	timeout := int32(-1)
	switch {
	case p.Timeout == 0:
		timeout = wholeSeconds(DefaultTokenTimeout)
	case p.Timeout > 0:
		timeout = wholeSeconds(p.Timeout)
	}
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	rnd := p.Rand
	if rnd == nil {
		rnd = rand.Reader
	}

	priv := ConnectTokenPrivate{
		ClientID:        p.ClientID,
		TimeoutSeconds:  timeout,
		ServerAddresses: internal,
		UserData:        p.UserData,
	}
	tok := ConnectToken{
		ProtocolID:      p.ProtocolID,
		CreateTimestamp: uint64(now.Unix()),
		TimeoutSeconds:  timeout,
		ServerAddresses: p.PublicAddresses,
	}
	tok.ExpireTimestamp = tok.CreateTimestamp + uint64(wholeSeconds(expiry))
	if _, err := io.ReadFull(rnd, priv.ClientToServerKey[:]); err != nil {
		return nil, fmt.Errorf("netcode: reading random key: %w", err)
	}
	if _, err := io.ReadFull(rnd, priv.ServerToClientKey[:]); err != nil {
		return nil, fmt.Errorf("netcode: reading random key: %w", err)
	}
	if _, err := io.ReadFull(rnd, tok.Nonce[:]); err != nil {
		return nil, fmt.Errorf("netcode: reading random nonce: %w", err)
	}
	tok.ClientToServerKey = priv.ClientToServerKey
	tok.ServerToClientKey = priv.ServerToClientKey
	sealed, err := NewTokenCipher(p.PrivateKey).Seal(&priv, p.ProtocolID, tok.ExpireTimestamp, &tok.Nonce)
	if err != nil {
		return nil, err
	}
	tok.PrivateData = sealed
	return tok.Append(make([]byte, 0, ConnectTokenBytes))
}

// wholeSeconds rounds a positive duration up to whole seconds, saturating
// at the largest int32.
func wholeSeconds(d time.Duration) int32 {
	s := (d + time.Second - 1) / time.Second
	if s > math.MaxInt32 {
		return math.MaxInt32
	}
	return int32(s)
}
