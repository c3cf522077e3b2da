package raknet

import (
	"errors"
	"strconv"
	"strings"
)

// BedrockMOTD is the pong data of a Minecraft Bedrock server:
//
//	MCPE;<motd>;<protocol>;<version>;<players>;<max players>;<server GUID>;<sub motd>;<game mode>;<game mode number>;<port v4>;<port v6>;
//
// Servers differ in how many trailing fields they send; missing fields
// parse as zero values and fields after the twelfth are ignored.
//
// It is text inside a message (UnconnectedPong.Data), not a message, so it
// follows the standard library's text interfaces (encoding.TextAppender,
// TextMarshaler, TextUnmarshaler) rather than the Append, Parse and Len of
// the wire types: its fields are strings, which no parse can fill without
// allocating.
type BedrockMOTD struct {
	// Edition is "MCPE", or "MCEE" for Education Edition. Empty means
	// "MCPE" when formatting.
	Edition        string
	MOTD           string
	Protocol       int
	Version        string
	Players        int
	MaxPlayers     int
	ServerGUID     uint64
	SubMOTD        string
	GameMode       string
	GameModeNumber int
	PortV4         uint16
	PortV6         uint16
}

// Errors from ParseBedrockMOTD and BedrockMOTD.AppendText.
var (
	// ErrNotMOTD means the data does not start with a Bedrock edition
	// field ("MCPE;" or "MCEE;").
	ErrNotMOTD = errors.New("raknet: not a Bedrock MOTD")
	// ErrBadMOTDField means a numeric field is not a number, or a text
	// field to format contains the ';' separator.
	ErrBadMOTDField = errors.New("raknet: malformed Bedrock MOTD field")
)

// ParseBedrockMOTD decodes Bedrock pong data. Empty numeric fields read as
// 0. The server GUID is accepted as signed or unsigned decimal, since
// servers print it both ways.
func ParseBedrockMOTD(data []byte) (BedrockMOTD, error) {
	s := string(data)
	edition, rest, ok := strings.Cut(s, ";")
	if !ok || (edition != "MCPE" && edition != "MCEE") {
		return BedrockMOTD{}, ErrNotMOTD
	}
	m := BedrockMOTD{Edition: edition}
	var err error
	for i := 1; rest != "" && i < 12; i++ {
		var f string
		f, rest, _ = strings.Cut(rest, ";")
		switch i {
		case 1:
			m.MOTD = f
		case 2:
			m.Protocol, err = motdInt(f)
		case 3:
			m.Version = f
		case 4:
			m.Players, err = motdInt(f)
		case 5:
			m.MaxPlayers, err = motdInt(f)
		case 6:
			m.ServerGUID, err = motdGUID(f)
		case 7:
			m.SubMOTD = f
		case 8:
			m.GameMode = f
		case 9:
			m.GameModeNumber, err = motdInt(f)
		case 10:
			m.PortV4, err = motdPort(f)
		case 11:
			m.PortV6, err = motdPort(f)
		}
		if err != nil {
			return BedrockMOTD{}, ErrBadMOTDField
		}
	}
	return m, nil
}

func motdInt(f string) (int, error) {
	if f == "" {
		return 0, nil
	}
	v, err := strconv.ParseInt(f, 10, 32)
	return int(v), err
}

func motdPort(f string) (uint16, error) {
	if f == "" {
		return 0, nil
	}
	v, err := strconv.ParseUint(f, 10, 16)
	return uint16(v), err
}

func motdGUID(f string) (uint64, error) {
	if f == "" {
		return 0, nil
	}
	if v, err := strconv.ParseUint(f, 10, 64); err == nil {
		return v, nil
	}
	v, err := strconv.ParseInt(f, 10, 64)
	return uint64(v), err
}

// AppendText appends the MOTD in pong-data form, all twelve fields with a
// trailing ';'. It fails with ErrBadMOTDField if a text field contains
// ';', which the format cannot escape.
func (m BedrockMOTD) AppendText(b []byte) ([]byte, error) {
	edition := m.Edition
	if edition == "" {
		edition = "MCPE"
	}
	for _, f := range [...]string{edition, m.MOTD, m.Version, m.SubMOTD, m.GameMode} {
		if strings.Contains(f, ";") {
			return b, ErrBadMOTDField
		}
	}
	b = append(b, edition...)
	b = append(append(b, ';'), m.MOTD...)
	b = strconv.AppendInt(append(b, ';'), int64(m.Protocol), 10)
	b = append(append(b, ';'), m.Version...)
	b = strconv.AppendInt(append(b, ';'), int64(m.Players), 10)
	b = strconv.AppendInt(append(b, ';'), int64(m.MaxPlayers), 10)
	b = strconv.AppendUint(append(b, ';'), m.ServerGUID, 10)
	b = append(append(b, ';'), m.SubMOTD...)
	b = append(append(b, ';'), m.GameMode...)
	b = strconv.AppendInt(append(b, ';'), int64(m.GameModeNumber), 10)
	b = strconv.AppendUint(append(b, ';'), uint64(m.PortV4), 10)
	b = strconv.AppendUint(append(b, ';'), uint64(m.PortV6), 10)
	return append(b, ';'), nil
}

// MarshalText returns the MOTD in pong-data form; see AppendText.
func (m BedrockMOTD) MarshalText() ([]byte, error) { return m.AppendText(nil) }

// UnmarshalText parses pong data into m; see ParseBedrockMOTD.
func (m *BedrockMOTD) UnmarshalText(data []byte) error {
	v, err := ParseBedrockMOTD(data)
	if err != nil {
		return err
	}
	*m = v
	return nil
}
