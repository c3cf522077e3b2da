package raknet

import (
	"errors"
	"testing"
)

func TestBedrockMOTD(t *testing.T) {
	tests := []struct {
		name string
		data string
		want BedrockMOTD
		err  error
	}{
		{
			name: "full",
			data: "MCPE;Dedicated Server;594;1.20.80;2;10;13253860892328930865;Bedrock level;Survival;1;19132;19133;",
			want: BedrockMOTD{Edition: "MCPE", MOTD: "Dedicated Server", Protocol: 594, Version: "1.20.80", Players: 2, MaxPlayers: 10,
				ServerGUID: 13253860892328930865, SubMOTD: "Bedrock level", GameMode: "Survival", GameModeNumber: 1, PortV4: 19132, PortV6: 19133},
		},
		{
			name: "old six fields, no trailing separator",
			data: "MCPE;A server;390;1.14.60;3;20",
			want: BedrockMOTD{Edition: "MCPE", MOTD: "A server", Protocol: 390, Version: "1.14.60", Players: 3, MaxPlayers: 20},
		},
		{
			name: "signed GUID and extra fields",
			data: "MCEE;x;1;1.0;0;1;-2;sub;Creative;1;1;2;0;extra;",
			want: BedrockMOTD{Edition: "MCEE", MOTD: "x", Protocol: 1, Version: "1.0", MaxPlayers: 1, ServerGUID: 1<<64 - 2,
				SubMOTD: "sub", GameMode: "Creative", GameModeNumber: 1, PortV4: 1, PortV6: 2},
		},
		{name: "edition only", data: "MCPE;", want: BedrockMOTD{Edition: "MCPE"}},
		{name: "not a MOTD", data: "RakNet C++ reference echo server", err: ErrNotMOTD},
		{name: "no separator", data: "MCPE", err: ErrNotMOTD},
		{name: "bad number", data: "MCPE;x;abc;", err: ErrBadMOTDField},
		{name: "port out of range", data: "MCPE;x;1;v;0;1;2;s;g;1;70000;", err: ErrBadMOTDField},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseBedrockMOTD([]byte(tt.data))
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if got != tt.want {
				t.Fatalf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
	full := tests[0]
	b, err := full.want.MarshalText()
	if err != nil || string(b) != full.data {
		t.Fatalf("MarshalText = %q, %v; want %q", b, err, full.data)
	}
	var m BedrockMOTD
	if err := m.UnmarshalText(b); err != nil || m != full.want {
		t.Fatalf("UnmarshalText = %+v, %v", m, err)
	}
	if _, err := (BedrockMOTD{MOTD: "a;b"}).MarshalText(); !errors.Is(err, ErrBadMOTDField) {
		t.Fatalf("MOTD with separator: err = %v", err)
	}
	if b, _ := (BedrockMOTD{}).MarshalText(); string(b) != "MCPE;;0;;0;0;0;;;0;0;0;" {
		t.Fatalf("zero MOTD = %q", b)
	}
}
