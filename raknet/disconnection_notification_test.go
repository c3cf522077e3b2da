package raknet

import "testing"

func TestCaptureDisconnectionNotification(t *testing.T) {
	checkCaptured(t, captureOne(t, IDDisconnectionNotification), DisconnectionNotification{}, ParseDisconnectionNotification)
}
