package raknet

// DisconnectionNotification announces a graceful close. It is the single
// byte 0x15, inside a reliability frame.
type DisconnectionNotification struct{}

// Len is the encoded size of the notification.
func (*DisconnectionNotification) Len() int { return 1 }

// Append appends the notification to b. The error is always nil.
func (*DisconnectionNotification) Append(b []byte) ([]byte, error) {
	return append(b, IDDisconnectionNotification), nil
}

// ParseDisconnectionNotification checks that b starts with a
// disconnection notification. Trailing bytes are left unread, as the
// original library ignores them.
func ParseDisconnectionNotification(b []byte, _ *DisconnectionNotification) (int, error) {
	if err := checkID(b, IDDisconnectionNotification, 1); err != nil {
		return 0, err
	}
	return 1, nil
}
