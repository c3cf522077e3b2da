package raknet

import "testing"

func TestCaptureDisconnectionNotification(t *testing.T) {
	discs := captureOnline(t, IDDisconnectionNotification)
	if len(discs) != 1 {
		t.Fatalf("found %d disconnection notifications, want 1", len(discs))
	}
	var d DisconnectionNotification
	n, err := ParseDisconnectionNotification(discs[0], &d)
	checkUsed(t, n, err, 1)
	checkEncoding(t, &d, discs[0])
}
