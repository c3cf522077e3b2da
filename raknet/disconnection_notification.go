package raknet

// DisconnectionNotification announces a graceful close. It is the single
// byte 0x15.
type DisconnectionNotification struct{}

// Len is the encoded size of the notification.
func (DisconnectionNotification) Len() int { return 1 }

// Append appends the notification to b.
func (DisconnectionNotification) Append(b []byte) []byte {
	return append(b, IDDisconnectionNotification)
}

// ParseDisconnectionNotification checks that b is a disconnection
// notification. Trailing bytes are ignored, as the original library does.
func ParseDisconnectionNotification(b []byte) (DisconnectionNotification, error) {
	return DisconnectionNotification{}, checkID(b, IDDisconnectionNotification, 1)
}
