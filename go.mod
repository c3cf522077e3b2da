module github.com/netrak/netrak

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0
	github.com/rs/zerolog v1.35.1
	github.com/sandertv/go-raknet v1.15.0
	golang.org/x/crypto v0.58.0
	golang.org/x/net v0.62.0
	golang.org/x/sys v0.49.0
)

require (
	github.com/mattn/go-colorable v0.1.14 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
)
