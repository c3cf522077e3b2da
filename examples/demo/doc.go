// Command demo shows netrak's stack working end to end over real loopback
// UDP, with in-process impairment relays (transport/relay) standing in for
// a bad network:
//
//	go run ./examples/demo
//
// Part 1 runs netcode 1.02 through a lossy link (5% loss, 20 ms ± 5 ms
// latency and 1% duplication each way). A backend mints connect tokens
// under a fresh private key; each token's public address is the relay's,
// which is what clients dial, and its internal address is the server's
// own, which the server knows itself by (ServerConfig.PublicAddress): the
// split that lets a server sit behind a relay, proxy or load balancer.
// Four clients connect, send 100-byte payloads at 60 Hz for two seconds to
// a server that echoes them, check every echo byte for byte, and
// disconnect cleanly. The demo prints each client's slot and how many
// payloads came back, the server's connects, disconnect reasons and drops
// by reason (the relay's duplicates show up as replays refused), and the
// relay's counters.
//
// Part 2 runs RakNet through a worse link (10% loss, 30 ms ± 10 ms latency,
// 2% duplication and 2% reordering each way). A client sends 300 messages
// reliable-ordered on channel 0, sized 5 bytes to 70 KB so that some are
// split across datagrams, to a Listener that echoes every user message.
// The client checks that every echo arrives complete, exactly once and in
// order, then closes gracefully. The demo prints the RTT, losses, resends
// and throughput from the connection's statistics next to the relay's
// counters of dropped, duplicated and reordered datagrams: the reliability
// layer recovers everything the link lost.
//
// Part 3 runs the session layer, netcode's secure connections carrying
// RakNet's reliability layer, through a lossy link (5% loss, 20 ms ± 5 ms
// latency each way), behind a relay as in part 1. Four clients each run
// two streams side by side for two seconds: 200 numbered game events
// reliable-ordered on channel 0, some large enough to be split across
// netcode payloads, and position updates at 60 Hz unreliable-sequenced on
// channel 1 at high priority; the server echoes both as they came. Each
// client checks that every event came back intact and in order, and that
// the positions never went backwards, and counts how many of them made
// it (those lost are simply superseded by later ones). The demo prints
// each client's RTT, resends, messages and netcode packets and
// keep-alives from its statistics, the server's connects and disconnect
// reasons, and the relay's counters.
//
// The run takes about seven seconds and ends with "demo: ok"; it exits 0
// on success, 1 on any failure (with "demo: FAILED: ..." saying what), and
// 2 on bad flags. Flags change the links and the workload, and -parts
// picks the parts to run (-parts 3: the session part alone); -h lists
// them.
package main
