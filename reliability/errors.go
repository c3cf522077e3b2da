package reliability

import (
	"errors"
	"fmt"
)

// Errors returned by Engine.Send. They report misuse by the local caller;
// nothing the remote peer sends ever produces an error (it is dropped and
// counted in Stats instead). After Close, Send returns net.ErrClosed.
var (
	// ErrMessageTooLarge: the message exceeds Config.MaxMessageSize.
	ErrMessageTooLarge = errors.New("reliability: message too large")
	// ErrEmptyMessage: RakNet cannot carry a zero-length message.
	ErrEmptyMessage = errors.New("reliability: empty message")
	// ErrInvalidChannel: the ordering channel is not below NumOrderingChannels.
	ErrInvalidChannel = errors.New("reliability: ordering channel out of range")
	// ErrInvalidReliability: the reliability is not one of the eight kinds.
	ErrInvalidReliability = errors.New("reliability: invalid reliability")
	// ErrInvalidPriority: the priority is not one of the four classes.
	ErrInvalidPriority = errors.New("reliability: invalid priority")
	// ErrQueueFull: the send queue holds Config.MaxQueueBytes already. The
	// message was not accepted; call Send again after the engine has
	// drained some of the queue (after acknowledgements arrive).
	ErrQueueFull = errors.New("reliability: send queue full")
	// ErrDead: the peer stopped acknowledging for longer than
	// Config.DeadTimeout; the connection is unusable.
	ErrDead = errors.New("reliability: connection dead")
)

// ConfigError reports a Config field outside its allowed range.
type ConfigError struct {
	Field  string
	Reason string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("reliability: invalid config: %s %s", e.Field, e.Reason)
}
