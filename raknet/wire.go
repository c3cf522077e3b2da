package raknet

import (
	"encoding/binary"
	"errors"

	"github.com/netrak/netrak/reliability"
)

// Message identifiers: the first byte of every RakNet message.
const (
	IDConnectedPing                  byte = 0x00
	IDUnconnectedPing                byte = 0x01
	IDUnconnectedPingOpenConnections byte = 0x02
	IDConnectedPong                  byte = 0x03
	// IDDetectLostConnections is the original library's keep-alive: a
	// reliable one-byte message it sends on a connection that has had no
	// reliable traffic for a while, and discards on receipt.
	IDDetectLostConnections       byte = 0x04
	IDOpenConnectionRequest1      byte = 0x05
	IDOpenConnectionReply1        byte = 0x06
	IDOpenConnectionRequest2      byte = 0x07
	IDOpenConnectionReply2        byte = 0x08
	IDConnectionRequest           byte = 0x09
	IDConnectionRequestAccepted   byte = 0x10
	IDConnectionAttemptFailed     byte = 0x11
	IDAlreadyConnected            byte = 0x12
	IDNewIncomingConnection       byte = 0x13
	IDNoFreeIncomingConnections   byte = 0x14
	IDDisconnectionNotification   byte = 0x15
	IDConnectionBanned            byte = 0x17
	IDIncompatibleProtocolVersion byte = 0x19
	IDIPRecentlyConnected         byte = 0x1a
	IDUnconnectedPong             byte = 0x1c
	// IDUserPacketEnum is the first identifier free for applications.
	IDUserPacketEnum byte = 0x86
)

// Protocol versions carried in open connection request 1.
const (
	// ProtocolOriginal is RAKNET_PROTOCOL_VERSION of the original C++
	// library, release 4.081.
	ProtocolOriginal uint8 = 6
	// ProtocolBedrock is the version Minecraft Bedrock has used since
	// 1.19.30 (10 before that).
	ProtocolBedrock uint8 = 11
)

// Sizes fixed by the original library.
const (
	// MaxMTU is the largest MTU the original library probes or accepts.
	// It re-exports reliability.MaxMTU, the one definition, because it
	// bounds ListenConfig.MTU and DialConfig.MTU: configuring this package
	// should not take an import of reliability.
	MaxMTU = reliability.MaxMTU
	// UDPHeaderSize is what RakNet adds to a UDP payload to get the MTU it
	// is probing: a 20-byte IPv4 header and an 8-byte UDP header, used for
	// IPv6 as well.
	UDPHeaderSize = 28
)

// offlineMagic is the 16-byte sequence every offline message carries, so
// that a late offline message can never be mistaken for a datagram of an
// open connection. RakNet calls it OFFLINE_MESSAGE_DATA_ID. It is
// unexported because a variable is writable by any importer, and a
// program that changed it would stop understanding every peer.
var offlineMagic = [16]byte{0x00, 0xff, 0xff, 0x00, 0xfe, 0xfe, 0xfe, 0xfe, 0xfd, 0xfd, 0xfd, 0xfd, 0x12, 0x34, 0x56, 0x78}

// Errors returned by the parsers. They are sentinels so that a caller can
// count drops by reason without allocating.
var (
	// ErrShortMessage means the message ended before a required field.
	ErrShortMessage = errors.New("raknet: message too short")
	// ErrWrongID means the first byte is not an identifier this parser
	// reads.
	ErrWrongID = errors.New("raknet: unexpected message identifier")
	// ErrBadMagic means an offline message lacks the offline magic.
	ErrBadMagic = errors.New("raknet: offline magic missing")
	// ErrBadAddress means an address field has an unknown IP version or
	// address family.
	ErrBadAddress = errors.New("raknet: malformed address")
	// ErrBadLength means a message has a length no layout explains.
	ErrBadLength = errors.New("raknet: message length matches no layout")
	// ErrSecurityUnsupported means the peer asked for the original
	// library's libcat security extension, which this package does not
	// implement.
	ErrSecurityUnsupported = errors.New("raknet: libcat security is not supported")
	// ErrTooManyAddresses means a handshake message carries more internal
	// addresses than MaxInternalAddresses.
	ErrTooManyAddresses = errors.New("raknet: too many internal addresses")
	// ErrPongDataTooLong means pong data would exceed MaxPongDataLen.
	ErrPongDataTooLong = errors.New("raknet: pong data too long")
	// ErrBadMTU means an MTU is outside what an open connection request 1
	// can express.
	ErrBadMTU = errors.New("raknet: MTU out of range")
)

// IsOffline reports whether a datagram is an offline (unconnected) message
// rather than a datagram of an open connection: datagrams of connections
// always have the 0x80 bit set in their first byte, offline messages never.
func IsOffline(b []byte) bool { return len(b) > 0 && b[0]&0x80 == 0 }

// hasMagic reports whether b holds the offline magic at offset off.
func hasMagic(b []byte, off int) bool {
	return len(b) >= off+len(offlineMagic) && [16]byte(b[off:off+16]) == offlineMagic
}

func appendU16(b []byte, v uint16) []byte { return binary.BigEndian.AppendUint16(b, v) }
func appendU32(b []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(b, v) }
func appendU64(b []byte, v uint64) []byte { return binary.BigEndian.AppendUint64(b, v) }

// checkHeader verifies the identifier at b[0], a minimum length and the
// magic at b[magicAt].
func checkHeader(b []byte, id byte, magicAt, minLen int) error {
	if err := checkID(b, id, minLen); err != nil {
		return err
	}
	if !hasMagic(b, magicAt) {
		return ErrBadMagic
	}
	return nil
}

// checkID verifies the identifier and a minimum length.
func checkID(b []byte, id byte, minLen int) error {
	if len(b) == 0 {
		return ErrShortMessage
	}
	if b[0] != id {
		return ErrWrongID
	}
	if len(b) < minLen {
		return ErrShortMessage
	}
	return nil
}

// checkExact verifies the identifier and an exact length.
func checkExact(b []byte, id byte, n int) error {
	if err := checkID(b, id, n); err != nil {
		return err
	}
	if len(b) != n {
		return ErrBadLength
	}
	return nil
}
