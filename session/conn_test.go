package session

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/netrak/netrak/reliability"
)

func TestEchoOneClient(t *testing.T) {
	scenario(t, 1, func(t *testing.T, w *world) {
		l := w.server("10.0.0.1:40000", nil)
		c := w.mustDial("10.0.0.2:5000", w.token(nil, "10.0.0.1:40000"))
		s := accept(t, l, time.Second)
		if s.ClientID() != w.nextID || s.UserData()[0] != byte(w.nextID) {
			t.Fatalf("server side: client id %d, user data %d", s.ClientID(), s.UserData()[0])
		}
		msg := bytes.Repeat([]byte("hello "), 1000) // split across datagrams
		if _, err := c.WriteMessage(msg, reliability.ReliableOrdered, 3, reliability.Medium); err != nil {
			t.Fatal(err)
		}
		m, err := s.ReadMessage()
		if err != nil || !bytes.Equal(m.Data, msg) || m.Channel != 3 {
			t.Fatalf("server read: %v, %d bytes, channel %d", err, len(m.Data), m.Channel)
		}
		if _, err := s.Write([]byte("back")); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 10)
		n, err := c.Read(buf)
		if err != nil || string(buf[:n]) != "back" {
			t.Fatalf("client read %q, %v", buf[:n], err)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Read(buf); !errors.Is(err, io.EOF) {
			t.Fatalf("server read after client close: %v", err)
		}
	})
}
