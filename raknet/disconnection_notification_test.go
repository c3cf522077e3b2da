package raknet

import (
	"testing"
)

func TestCaptureDisconnectionNotification(t *testing.T) {
	discs := captureOnline(t, IDDisconnectionNotification)
	if len(discs) != 1 {
		t.Fatalf("found %d disconnection notifications, want 1", len(discs))
	}
	if _, err := ParseDisconnectionNotification(discs[0]); err != nil {
		t.Fatal(err)
	}
	checkBytes(t, DisconnectionNotification{}.Append(nil), discs[0], DisconnectionNotification{}.Len())
}
