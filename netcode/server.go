package netcode

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"time"

	"github.com/rs/zerolog"
)

// Defaults of ServerConfig.
const (
	DefaultMaxClients        = 256
	DefaultMaxTokenLifetime  = 30 * time.Second
	DefaultTokenHistorySize  = 2048
	DefaultReceiveQueueSize  = 256
	KeepAliveInterval        = time.Second / 10 // keep-alives to idle clients, 10 Hz
	RedundantDisconnectCount = 10               // disconnect packets sent per disconnect
)

// ServerConfig configures a Server. The zero value of every field except
// PublicAddress is usable.
type ServerConfig struct {
	// ProtocolID must match the tokens' protocol id.
	ProtocolID uint64
	// PrivateKey is shared with the backend that mints connect tokens.
	PrivateKey Key
	// PublicAddress is the address this server is known by in connect
	// tokens: a request is accepted only if it appears in the token's
	// private address list (TokenParams.InternalAddresses, which default to
	// the public ones). It need not be the bind address: bound to
	// 0.0.0.0:40000 and reached at 203.0.113.5:40000, configure the latter.
	// Required.
	PublicAddress netip.AddrPort
	// ExtraPublicAddresses are further addresses accepted in tokens, such
	// as the IPv6 address of a dual-stack server whose PublicAddress is
	// IPv4.
	ExtraPublicAddresses []netip.AddrPort
	// MaxClients is the number of client slots. Zero means
	// DefaultMaxClients (256). Lookups are maps, so thousands are fine.
	MaxClients int
	// MaxTokenLifetime is the longest expiry the backend gives tokens.
	// After each Start the server refuses tokens whose expire timestamp
	// minus MaxTokenLifetime is before the start time: they may have been
	// used before a restart wiped the token history. Tokens with a shorter
	// expiry are refused until MaxTokenLifetime minus their expiry has
	// passed since the start. Zero means DefaultMaxTokenLifetime (30 s).
	MaxTokenLifetime time.Duration
	// TokenHistorySize bounds the connect-token history. Zero means
	// DefaultTokenHistorySize (2048) or 8 entries per client slot,
	// whichever is larger.
	TokenHistorySize int
	// ReceiveQueueSize bounds each client's queue of received payloads.
	// Zero means DefaultReceiveQueueSize (256).
	ReceiveQueueSize int
	// Logger receives debug-level connection events. The zero value is
	// silent.
	Logger zerolog.Logger
	// Rand supplies the challenge-token key at each Start. Nil means
	// crypto/rand.
	Rand io.Reader
}

// Server is the sans-I/O netcode server core. It never touches a socket or
// a clock: the driver hands it datagrams with Receive, calls Update every
// tick of a game loop or at the time NextTimeout names, and sends what
// Outgoing returns. The application drains Events and, per client,
// ReceivePayload. A Server is not safe for concurrent use.
type Server struct {
	cfg         ServerConfig
	maxClients  int
	lifetimeSec uint64
	log         zerolog.Logger

	running   bool
	now       time.Time
	startUnix uint64

	tokenCipher  *TokenCipher
	challenge    *ChallengeCipher
	challengeSeq uint64
	globalSeq    uint64

	slots  []serverSlot
	byAddr map[netip.AddrPort]int
	byID   map[uint64]int
	nConn  int
	// slotsDue is no later than the earliest keep-alive or timeout of a
	// connected slot: exact after Update, which scans the slots anyway, and
	// lowered by whatever adds an earlier one; zero when no slot is
	// connected. It lets NextTimeout answer without a scan.
	slotsDue time.Time

	mappings     map[netip.AddrPort]*mapping
	maxMappings  int
	nextSweep    time.Time
	history      map[[MACBytes]byte]historyEntry
	maxHistory   int
	historyFloor uint64 // no history entry expires before this unix time

	out                outbox
	events, eventsPrev []Event

	stats ServerStats

	// Scratch for request processing, kept here to keep 2 KB off the stack.
	req  RequestPacket
	priv ConnectTokenPrivate
	pkt  Packet
}

// mapping holds the keys of a handshake in progress, by address.
type mapping struct {
	send, recv *PacketCipher
	timeout    time.Duration // zero or negative: no idle expiry
	lastAccess time.Time
	expire     uint64 // token expire timestamp
	tokenMAC   [MACBytes]byte
}

func (m *mapping) expired(now time.Time) bool {
	if uint64(now.Unix()) >= m.expire {
		return true
	}
	return m.timeout > 0 && !now.Before(m.lastAccess.Add(m.timeout))
}

type historyEntry struct {
	addr     netip.AddrPort
	expire   uint64
	consumed bool
}

type serverSlot struct {
	connected  bool
	confirmed  bool
	loopback   bool // in-process client: no packets, no keys, no timers
	id         uint64
	addr       netip.AddrPort
	userData   [UserDataBytes]byte
	send, recv *PacketCipher
	sequence   uint64
	replay     ReplayProtection
	timeout    time.Duration
	lastSend   time.Time
	lastRecv   time.Time
	stats      SlotStats
	payloads   payloadQueue // received, for ReceivePayload
}

// NewServer checks cfg, fills in defaults and returns a stopped server;
// call Start to accept clients.
func NewServer(cfg ServerConfig) (*Server, error) {
	if !cfg.PublicAddress.IsValid() {
		return nil, errors.New("netcode: ServerConfig.PublicAddress is required")
	}
	if cfg.MaxClients < 0 || cfg.MaxClients > math.MaxInt32 {
		return nil, fmt.Errorf("netcode: invalid MaxClients %d", cfg.MaxClients)
	}
	if cfg.MaxClients == 0 {
		cfg.MaxClients = DefaultMaxClients
	}
	if cfg.MaxTokenLifetime < 0 {
		return nil, fmt.Errorf("netcode: negative MaxTokenLifetime %v", cfg.MaxTokenLifetime)
	}
	if cfg.MaxTokenLifetime == 0 {
		cfg.MaxTokenLifetime = DefaultMaxTokenLifetime
	}
	if cfg.TokenHistorySize <= 0 {
		cfg.TokenHistorySize = max(DefaultTokenHistorySize, 8*cfg.MaxClients)
	}
	if cfg.ReceiveQueueSize <= 0 {
		cfg.ReceiveQueueSize = DefaultReceiveQueueSize
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Reader
	}
	s := &Server{
		cfg:         cfg,
		maxClients:  cfg.MaxClients,
		lifetimeSec: uint64(wholeSeconds(cfg.MaxTokenLifetime)),
		log:         cfg.Logger,
		tokenCipher: NewTokenCipher(cfg.PrivateKey),
		slots:       make([]serverSlot, cfg.MaxClients),
		byAddr:      make(map[netip.AddrPort]int),
		byID:        make(map[uint64]int),
		mappings:    make(map[netip.AddrPort]*mapping),
		maxMappings: 4 * cfg.MaxClients,
		history:     make(map[[MACBytes]byte]historyEntry),
		maxHistory:  cfg.TokenHistorySize,
		out:         outbox{max: 1024 + 16*cfg.MaxClients},
	}
	return s, nil
}

// Start begins accepting clients at time now. Every start draws a new
// random challenge-token key, resets the global sequence to 1<<63, forgets
// the token history and pending handshakes, and records now for the
// restart rule (see ServerConfig.MaxTokenLifetime).
func (s *Server) Start(now time.Time) error {
	if s.running {
		return ErrServerRunning
	}
	var key Key
	if _, err := io.ReadFull(s.cfg.Rand, key[:]); err != nil {
		return fmt.Errorf("netcode: reading challenge key: %w", err)
	}
	s.challenge = NewChallengeCipher(key)
	s.challengeSeq = 0
	s.globalSeq = 1 << 63
	s.now = now
	s.startUnix = uint64(max(now.Unix(), 0))
	clear(s.mappings)
	clear(s.history)
	s.historyFloor = 0
	s.nextSweep = now.Add(time.Second)
	s.slotsDue = time.Time{} // Stop left no slot connected
	s.running = true
	s.log.Debug().Stringer("address", s.cfg.PublicAddress).Int("max_clients", s.maxClients).Msg("netcode server started")
	return nil
}

// Stop disconnects every client (sending disconnect packets, which remain
// in Outgoing) and stops accepting packets. Start may be called again.
func (s *Server) Stop(now time.Time) {
	if !s.running {
		return
	}
	s.now = now
	s.DisconnectAll()
	s.running = false
	clear(s.mappings)
	clear(s.history)
	s.log.Debug().Msg("netcode server stopped")
}

// Running reports whether the server is started.
func (s *Server) Running() bool { return s.running }

// MaxClients is the number of client slots.
func (s *Server) MaxClients() int { return s.maxClients }

// ConnectedClients is the number of occupied slots.
func (s *Server) ConnectedClients() int { return s.nConn }

// Stats returns the server-wide counters.
func (s *Server) Stats() ServerStats { return s.stats }

// ClientConnected reports whether slot index holds a client.
func (s *Server) ClientConnected(index int) bool {
	return index >= 0 && index < len(s.slots) && s.slots[index].connected
}

// Client describes the client in slot index.
func (s *Server) Client(index int) (ClientInfo, bool) {
	if !s.ClientConnected(index) {
		return ClientInfo{}, false
	}
	c := &s.slots[index]
	return ClientInfo{
		ClientID:  c.id,
		Address:   c.addr,
		UserData:  c.userData,
		Confirmed: c.confirmed,
		Loopback:  c.loopback,
		Timeout:   c.timeout,
		Stats:     c.stats,
	}, true
}

// ClientIndex returns the slot of a connected client id.
func (s *Server) ClientIndex(clientID uint64) (int, bool) {
	i, ok := s.byID[clientID]
	return i, ok
}

// Events returns the connect and disconnect events since the last call.
// The slice is valid until the next call to Events.
func (s *Server) Events() []Event {
	ev := s.events
	s.events, s.eventsPrev = s.eventsPrev[:0], ev
	return ev
}

func (s *Server) event(e Event) {
	// A driver that never drains events must not grow memory forever; each
	// slot can produce at most two events per connection, so this bound is
	// only reached if nobody is listening. The oldest event goes.
	if len(s.events) >= 4*s.maxClients+64 {
		copy(s.events, s.events[1:])
		s.events = s.events[:len(s.events)-1]
		s.stats.EventsDropped++
	}
	s.events = append(s.events, e)
}

// Outgoing returns the datagrams queued since the last call, for the driver
// to send. The slice and the bytes it points to are valid until the next
// call to Outgoing.
func (s *Server) Outgoing() []Datagram { return s.out.take() }

// send seals p with c and queues it for to.
func (s *Server) send(p *Packet, c *PacketCipher, to netip.AddrPort) bool {
	if s.out.full() {
		s.stats.Dropped[ServerDropOutboxFull]++
		return false
	}
	n := s.out.packet(p, c, to)
	s.stats.PacketsSent++
	s.stats.BytesSent += uint64(n)
	return true
}

// sendGlobal sends a denied or challenge packet under the global sequence,
// which starts at 1<<63 so it never reuses a nonce of the per-client
// sequences that start at 0 under the same key.
func (s *Server) sendGlobal(p *Packet, c *PacketCipher, to netip.AddrPort) bool {
	p.Sequence = s.globalSeq
	s.globalSeq++
	return s.send(p, c, to)
}

func (s *Server) sendToSlot(i int, p *Packet) bool {
	c := &s.slots[i]
	p.Sequence = c.sequence
	c.sequence++
	if !s.send(p, c.send, c.addr) {
		return false
	}
	c.lastSend = s.now
	c.stats.PacketsSent++
	return true
}

func (s *Server) sendKeepAlive(i int) {
	s.pkt = Packet{Type: ConnectionKeepAlive, ClientIndex: uint32(i), MaxClients: uint32(s.maxClients)}
	if s.sendToSlot(i, &s.pkt) {
		s.slots[i].stats.KeepAlivesSent++
	}
}

func (s *Server) drop(r ServerDropReason) { s.stats.Dropped[r]++ }

// dropReason maps a wire error to its counter.
func serverDropReason(err error) ServerDropReason {
	switch err {
	case ErrPacketSize:
		return ServerDropPacketSize
	case ErrPacketType:
		return ServerDropPacketType
	case ErrSequenceBytes:
		return ServerDropSequenceBytes
	case ErrVersion:
		return ServerDropVersion
	case ErrProtocolID:
		return ServerDropProtocolID
	case ErrTokenExpired:
		return ServerDropTokenExpired
	case ErrReplayed:
		return ServerDropReplayed
	case ErrNoCipher:
		return ServerDropNoMapping
	default:
		return ServerDropDecrypt
	}
}

// Receive processes one datagram from the network at time now. It may
// modify pkt (packets are decrypted in place) and does not retain it.
// Nothing the sender does produces an error: bad packets are counted in
// Stats().Dropped and ignored.
func (s *Server) Receive(pkt []byte, from netip.AddrPort, now time.Time) {
	s.now = now
	if !s.running {
		s.drop(ServerDropNotRunning)
		return
	}
	s.stats.PacketsReceived++
	s.stats.BytesReceived += uint64(len(pkt))
	if len(pkt) > 0 && pkt[0] == byte(ConnectionRequest) {
		s.processRequest(pkt, from, now)
		return
	}
	if i, ok := s.byAddr[from]; ok {
		s.receiveFromClient(i, pkt, now)
		return
	}
	m := s.mappings[from]
	if m != nil && m.expired(now) {
		delete(s.mappings, from)
		m = nil
	}
	var recv *PacketCipher
	if m != nil {
		recv = m.recv
	}
	p := &s.pkt
	if _, err := ParsePacket(pkt, recv, ServerReceives, nil, p); err != nil {
		s.drop(serverDropReason(err))
		return
	}
	m.lastAccess = now
	if p.Type != ConnectionResponse {
		s.drop(ServerDropNotConnected)
		return
	}
	s.processResponse(p, m, from, now)
}

func (s *Server) receiveFromClient(i int, pkt []byte, now time.Time) {
	c := &s.slots[i]
	p := &s.pkt
	if _, err := ParsePacket(pkt, c.recv, ServerReceives, &c.replay, p); err != nil {
		r := serverDropReason(err)
		s.drop(r)
		c.stats.Dropped[r]++
		return
	}
	c.stats.PacketsReceived++
	switch p.Type {
	case ConnectionKeepAlive:
		c.lastRecv = now
		c.confirmed = true
		c.stats.KeepAlivesReceived++
	case ConnectionPayload:
		c.lastRecv = now
		c.confirmed = true
		s.enqueue(c, p.Sequence, p.Payload)
	case ConnectionDisconnect:
		s.disconnect(i, ReasonClientDisconnected, false)
	case ConnectionResponse:
		// The client has not seen its keep-alive yet and is still
		// answering the challenge; the keep-alives will reach it.
		s.drop(ServerDropAddressConnected)
	}
}

func (s *Server) enqueue(c *serverSlot, seq uint64, payload []byte) {
	if !c.payloads.push(s.cfg.ReceiveQueueSize, seq, payload) {
		s.drop(ServerDropReceiveQueueFull)
		c.stats.Dropped[ServerDropReceiveQueueFull]++
		return
	}
	c.stats.PayloadsReceived++
	s.stats.PayloadsReceived++
}

// ReceivePayload pops the oldest payload received from the client in slot
// index, with the packet sequence number it arrived with. The payload is
// valid until the next call to Receive.
func (s *Server) ReceivePayload(index int) (payload []byte, sequence uint64, ok bool) {
	if !s.ClientConnected(index) {
		return nil, 0, false
	}
	return s.slots[index].payloads.pop()
}

// processRequest follows the standard's order exactly, cheapest checks
// first; nothing is decrypted before size, version, protocol id, expiry and
// the restart rule have passed.
func (s *Server) processRequest(pkt []byte, from netip.AddrPort, now time.Time) {
	nowUnix := uint64(max(now.Unix(), 0))
	req := &s.req
	if _, err := ParseRequestPacket(pkt, s.cfg.ProtocolID, nowUnix, req); err != nil {
		s.drop(serverDropReason(err))
		return
	}
	// Restart rule: expire - lifetime < start, written without underflow.
	if req.ExpireTimestamp < s.startUnix+s.lifetimeSec {
		s.drop(ServerDropTokenTooOld)
		return
	}
	priv := &s.priv
	if err := s.tokenCipher.Open(&req.TokenData, req.ProtocolID, req.ExpireTimestamp, &req.TokenNonce, priv); err != nil {
		if errors.Is(err, ErrDecrypt) {
			s.drop(ServerDropTokenDecrypt)
		} else {
			s.drop(ServerDropTokenInvalid)
		}
		return
	}
	if !s.isOwnAddress(priv.ServerAddresses) {
		s.drop(ServerDropServerAddress)
		return
	}
	if _, ok := s.byAddr[from]; ok {
		s.drop(ServerDropAddressConnected)
		return
	}
	if _, ok := s.byID[priv.ClientID]; ok {
		s.drop(ServerDropClientIDConnected)
		return
	}
	mac := [MACBytes]byte(req.TokenData[ConnectTokenPrivateBytes-MACBytes:])
	if r, ok := s.useToken(mac, from, req.ExpireTimestamp, nowUnix); !ok {
		s.drop(r)
		return
	}
	s.stats.Requests++

	timeout := time.Duration(priv.TimeoutSeconds) * time.Second
	if s.nConn == s.maxClients {
		s.pkt = Packet{Type: ConnectionDenied}
		if s.sendGlobal(&s.pkt, NewPacketCipher(priv.ServerToClientKey, s.cfg.ProtocolID), from) {
			s.stats.DeniedSent++
		}
		return
	}
	m := s.addMapping(from, now)
	if m == nil {
		s.drop(ServerDropMappingFull)
		return
	}
	m.send = NewPacketCipher(priv.ServerToClientKey, s.cfg.ProtocolID)
	m.recv = NewPacketCipher(priv.ClientToServerKey, s.cfg.ProtocolID)
	m.timeout = timeout
	m.lastAccess = now
	m.expire = req.ExpireTimestamp
	m.tokenMAC = mac

	ct := ChallengeToken{ClientID: priv.ClientID, UserData: priv.UserData}
	s.pkt = Packet{
		Type:              ConnectionChallenge,
		ChallengeSequence: s.challengeSeq,
		ChallengeToken:    s.challenge.Seal(&ct, s.challengeSeq),
	}
	s.challengeSeq++
	if s.sendGlobal(&s.pkt, m.send, from) {
		s.stats.ChallengesSent++
	}
}

func (s *Server) isOwnAddress(list []netip.AddrPort) bool {
	for _, a := range list {
		if sameAddress(a, s.cfg.PublicAddress) {
			return true
		}
		for _, extra := range s.cfg.ExtraPublicAddresses {
			if sameAddress(a, extra) {
				return true
			}
		}
	}
	return false
}

// useToken applies the one-session-per-token rule. A token first seen is
// recorded as pending for its address; a pending token accepts retries only
// from that address; a consumed token accepts nothing until it expires.
func (s *Server) useToken(mac [MACBytes]byte, from netip.AddrPort, expire, nowUnix uint64) (ServerDropReason, bool) {
	if e, ok := s.history[mac]; ok && e.expire > nowUnix {
		if e.consumed || e.addr != from {
			return ServerDropTokenReused, false
		}
		return 0, true
	}
	if len(s.history) >= s.maxHistory {
		s.sweepHistory(nowUnix)
		if len(s.history) >= s.maxHistory {
			// Evicting an unexpired entry would let its token be used again.
			return ServerDropTokenHistoryFull, false
		}
	}
	s.history[mac] = historyEntry{addr: from, expire: expire}
	s.historyFloor = min(s.historyFloor, expire)
	if len(s.history) == 1 {
		s.historyFloor = expire
	}
	return 0, true
}

func (s *Server) sweepHistory(nowUnix uint64) {
	if nowUnix < s.historyFloor {
		return // nothing can have expired yet
	}
	floor := uint64(math.MaxUint64)
	for mac, e := range s.history {
		if e.expire <= nowUnix {
			delete(s.history, mac)
		} else {
			floor = min(floor, e.expire)
		}
	}
	s.historyFloor = floor
}

// addMapping returns the mapping for addr, new or reused (a retried
// request replaces the keys of an earlier one), or nil if the table is full.
func (s *Server) addMapping(addr netip.AddrPort, now time.Time) *mapping {
	if m, ok := s.mappings[addr]; ok {
		return m
	}
	if len(s.mappings) >= s.maxMappings {
		s.sweepMappings(now)
		if len(s.mappings) >= s.maxMappings {
			return nil
		}
	}
	m := new(mapping)
	s.mappings[addr] = m
	return m
}

func (s *Server) sweepMappings(now time.Time) {
	for a, m := range s.mappings {
		if m.expired(now) {
			delete(s.mappings, a)
		}
	}
	s.nextSweep = now.Add(time.Second)
}

func (s *Server) processResponse(p *Packet, m *mapping, from netip.AddrPort, now time.Time) {
	var ct ChallengeToken
	if err := s.challenge.Open(&p.ChallengeToken, p.ChallengeSequence, &ct); err != nil {
		s.drop(ServerDropChallengeToken)
		return
	}
	if _, ok := s.byID[ct.ClientID]; ok {
		s.drop(ServerDropClientIDConnected)
		return
	}
	if s.nConn == s.maxClients {
		s.pkt = Packet{Type: ConnectionDenied}
		if s.sendGlobal(&s.pkt, m.send, from) {
			s.stats.DeniedSent++
		}
		return
	}
	i := s.freeSlot()
	c := &s.slots[i]
	payloads := c.payloads // empty since the last disconnect; keeps its buffers
	*c = serverSlot{
		connected: true,
		id:        ct.ClientID,
		addr:      from,
		userData:  ct.UserData,
		send:      m.send,
		recv:      m.recv,
		timeout:   m.timeout,
		lastSend:  now,
		lastRecv:  now,
		payloads:  payloads,
	}
	s.byAddr[from] = i
	s.byID[ct.ClientID] = i
	s.nConn++
	if e, ok := s.history[m.tokenMAC]; ok {
		e.consumed = true
		s.history[m.tokenMAC] = e
	}
	delete(s.mappings, from)
	s.stats.Connects++
	s.event(Event{Kind: EventConnected, ClientIndex: i, ClientID: ct.ClientID, Address: from})
	s.log.Debug().Int("client_index", i).Uint64("client_id", ct.ClientID).Stringer("address", from).Msg("netcode client connected")
	s.sendKeepAlive(i)
	// A new client is the one thing that adds deadlines, and with no
	// other client connected slotsDue covers none at all.
	s.slotsDue = earliest(s.slotsDue, c.due())
}

func (s *Server) freeSlot() int {
	for i := range s.slots {
		if !s.slots[i].connected {
			return i
		}
	}
	panic("netcode: no free slot although the server is not full")
}

// Update advances the server to now: it sends keep-alives to clients that
// have not been sent anything for KeepAliveInterval, times out clients
// from which nothing arrived within their timeout, and expires handshakes.
func (s *Server) Update(now time.Time) {
	s.now = now
	if !s.running {
		return
	}
	for i := range s.slots {
		if c := &s.slots[i]; c.connected && !c.loopback && !now.Before(c.lastSend.Add(KeepAliveInterval)) {
			s.sendKeepAlive(i)
		}
	}
	// Every keep-alive due has gone out, so this pass sees each surviving
	// slot's final deadlines and takes their minimum on the way.
	var due time.Time
	for i := range s.slots {
		c := &s.slots[i]
		if !c.connected || c.loopback {
			continue
		}
		if c.timeout > 0 && !now.Before(c.lastRecv.Add(c.timeout)) {
			s.disconnect(i, ReasonTimedOut, true)
			continue
		}
		due = earliest(due, c.due())
	}
	s.slotsDue = due
	if !now.Before(s.nextSweep) {
		s.sweepMappings(now)
	}
}

// NextTimeout is the time by which Update must next be called for the
// server to behave exactly as if Update ran continuously: the earliest
// keep-alive (KeepAliveInterval after the last packet sent to a client),
// client timeout (last receive + timeout) or, while handshakes are
// pending, the once-a-second sweep that frees expired ones. It is zero
// while the server is stopped or has neither clients nor pending
// handshakes: then only Receive or a Start can give Update something to
// do.
//
// It takes constant time, so a driver may ask after every datagram. The
// answer may be early, never late: disconnecting a client can leave it
// naming that client's deadline until the next Update, which then does
// nothing and recomputes it. Given times that do not go backwards,
// Receive and SendPayload only ever move deadlines later, and a newly
// connected client's are taken into account at once, so a driver that
// calls Update at NextTimeout, and asks again after each Receive and API
// call, misses nothing.
//
// Expired handshakes are otherwise only noticed when their address sends
// again or the table fills, so the sweep changes no packet the server
// sends; keeping it bounds how long a flood of abandoned handshakes holds
// memory, at the price of one wake-up a second while any are pending.
func (s *Server) NextTimeout() time.Time {
	if !s.running {
		return time.Time{}
	}
	next := s.slotsDue
	if len(s.mappings) > 0 {
		next = earliest(next, s.nextSweep)
	}
	return next
}

// due is the earliest time at which Update has something to do for a
// connected slot.
func (c *serverSlot) due() time.Time {
	t := c.lastSend.Add(KeepAliveInterval)
	if c.timeout > 0 {
		t = earliest(t, c.lastRecv.Add(c.timeout))
	}
	return t
}

// earliest is the earlier of two times, where the zero time means none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// advance brings the server's clock to now for an API call that stamps
// the time it runs at (SendPayload), as a continuously updated server's
// clock would be. Update runs only if something is due: before
// NextTimeout it would do nothing but set the clock, and skipping it
// spares a scan of every slot per call.
func (s *Server) advance(now time.Time) {
	if next := s.NextTimeout(); !next.IsZero() && !now.Before(next) {
		s.Update(now)
		return
	}
	s.now = now
}

// SendPayload sends one payload (1 to MaxPayloadBytes bytes) to the client
// in slot index. Until the client is confirmed each payload is preceded by
// a keep-alive that tells the client its slot. A payload that finds the
// outbox full (the driver is not draining Outgoing) is dropped like a
// datagram lost in flight and counted as ServerDropOutboxFull.
func (s *Server) SendPayload(index int, payload []byte) error {
	if !s.running {
		return ErrServerNotRunning
	}
	if !s.ClientConnected(index) {
		return ErrClientNotConnected
	}
	if s.slots[index].loopback {
		return ErrLoopbackClient
	}
	if len(payload) < 1 || len(payload) > MaxPayloadBytes {
		return ErrPayloadSize
	}
	c := &s.slots[index]
	if !c.confirmed {
		s.sendKeepAlive(index)
	}
	s.pkt = Packet{Type: ConnectionPayload, Payload: payload}
	sent := s.sendToSlot(index, &s.pkt)
	s.pkt.Payload = nil // do not keep the caller's buffer
	if sent {
		c.stats.PayloadsSent++
		s.stats.PayloadsSent++
	}
	return nil
}

// DisconnectClient sends RedundantDisconnectCount disconnect packets to the
// client in slot index and frees the slot. Payloads it sent that were not
// yet received with ReceivePayload are discarded. A loopback client's slot
// is freed without packets, as DisconnectLoopbackClient does.
func (s *Server) DisconnectClient(index int) error {
	if !s.running {
		return ErrServerNotRunning
	}
	if !s.ClientConnected(index) {
		return ErrClientNotConnected
	}
	s.disconnect(index, ReasonServerDisconnected, true)
	return nil
}

// DisconnectAll disconnects every connected client as DisconnectClient
// does, loopback clients included.
func (s *Server) DisconnectAll() {
	for i := range s.slots {
		if s.slots[i].connected {
			s.disconnect(i, ReasonServerDisconnected, true)
		}
	}
}

func (s *Server) disconnect(i int, reason DisconnectReason, sendPackets bool) {
	c := &s.slots[i]
	if sendPackets && !c.loopback {
		for range RedundantDisconnectCount {
			s.pkt = Packet{Type: ConnectionDisconnect}
			s.sendToSlot(i, &s.pkt)
		}
	}
	if !c.loopback {
		// A loopback slot never entered byAddr, and its zero address
		// must not unmap anything else.
		delete(s.byAddr, c.addr)
	}
	delete(s.byID, c.id)
	s.nConn--
	s.stats.Disconnects++
	s.event(Event{Kind: EventDisconnected, ClientIndex: i, ClientID: c.id, Address: c.addr, Reason: reason, Loopback: c.loopback})
	s.log.Debug().Int("client_index", i).Uint64("client_id", c.id).Stringer("reason", reason).Bool("loopback", c.loopback).Msg("netcode client disconnected")
	// Discard queued payloads but keep their buffers for the next client.
	c.payloads.discard()
	*c = serverSlot{payloads: c.payloads}
	if s.nConn == 0 {
		s.slotsDue = time.Time{}
	}
}

// ConnectLoopbackClient occupies slot index with a client in the same
// process, such as the host player of a listen server, as the reference's
// netcode_server_connect_loopback_client does. The slot counts in
// ConnectedClients and reserves clientID (a connect token for it is
// refused as already connected), but no packet is ever sent to or
// expected from it: no keep-alives, no timeout, no encryption. SendPayload
// to it fails with ErrLoopbackClient, since the application carries its
// traffic itself. It emits EventConnected with Loopback set.
//
// It fails with ErrServerNotRunning, ErrClientIndex for an index out of
// range, ErrSlotOccupied for a slot already holding a client, and
// ErrClientIDConnected when clientID is connected in another slot.
func (s *Server) ConnectLoopbackClient(index int, clientID uint64, userData [UserDataBytes]byte) error {
	if !s.running {
		return ErrServerNotRunning
	}
	if index < 0 || index >= len(s.slots) {
		return ErrClientIndex
	}
	c := &s.slots[index]
	if c.connected {
		return ErrSlotOccupied
	}
	if _, ok := s.byID[clientID]; ok {
		return ErrClientIDConnected
	}
	payloads := c.payloads // empty since the last disconnect; keeps its buffers
	// Confirmed, as in the reference: there is no handshake to finish.
	// lastSend and lastRecv are set only so that Client reports sane times;
	// nothing reads them for a loopback slot, which is why slotsDue, the
	// bound on connected slots' deadlines, does not change either.
	*c = serverSlot{
		connected: true,
		confirmed: true,
		loopback:  true,
		id:        clientID,
		userData:  userData,
		lastSend:  s.now,
		lastRecv:  s.now,
		payloads:  payloads,
	}
	s.byID[clientID] = index
	s.nConn++
	s.stats.Connects++
	s.event(Event{Kind: EventConnected, ClientIndex: index, ClientID: clientID, Loopback: true})
	s.log.Debug().Int("client_index", index).Uint64("client_id", clientID).Msg("netcode loopback client connected")
	return nil
}

// DisconnectLoopbackClient frees the slot of a loopback client, without
// packets, and emits EventDisconnected with Loopback set and
// ReasonServerDisconnected. It fails with ErrServerNotRunning, ErrClientIndex,
// ErrClientNotConnected for an empty slot and ErrNotLoopbackClient for a
// slot that holds a network client (DisconnectClient frees those).
func (s *Server) DisconnectLoopbackClient(index int) error {
	if !s.running {
		return ErrServerNotRunning
	}
	if index < 0 || index >= len(s.slots) {
		return ErrClientIndex
	}
	if !s.slots[index].connected {
		return ErrClientNotConnected
	}
	if !s.slots[index].loopback {
		return ErrNotLoopbackClient
	}
	s.disconnect(index, ReasonServerDisconnected, false)
	return nil
}

// ClientLoopback reports whether slot index holds a loopback client.
func (s *Server) ClientLoopback(index int) bool {
	return s.ClientConnected(index) && s.slots[index].loopback
}
