/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * ri2n: the numbers user space sees.
 *
 * Append only: a number, once here, keeps its meaning. core/uapi.rs holds
 * the same numbers for the driver, and a unit test compares the two.
 */
#ifndef _UAPI_LINUX_RI2N_H
#define _UAPI_LINUX_RI2N_H

/*
 * IFLA_INFO_DATA of a device of kind "ri2n" (ip link add/set ... type ri2n).
 *
 * All are u32. EPOCH, VERSION, SLAVES and PEERS are state: RTM_GETLINK
 * reports them and a request that carries one is refused. The parameters
 * (16 on) are what /sys/class/net/DEV/ri2n/ holds, with the same names,
 * units and ranges (Documentation/ri2n.rst, Parameters): RTM_NEWLINK sets
 * them at creation and on an existing device, all or none; PEER_MEM and
 * ONE_SWITCH only while the device is down (EBUSY). A value out of range
 * is refused with EINVAL and an extended ack that names the range.
 */
enum {
	IFLA_RI2N_UNSPEC,
	IFLA_RI2N_EPOCH,	/* low 32 bits of the creation time, ms */
	IFLA_RI2N_VERSION,	/* the RI2N header version sent */
	IFLA_RI2N_SLAVES,	/* slaves now */
	IFLA_RI2N_PEERS,	/* peers known now */
	/* 5..15: reserved for state */
	IFLA_RI2N_FT_HTHRESH = 16,	/* packets */
	IFLA_RI2N_FT_LTHRESH,	/* packets, below FT_HTHRESH */
	IFLA_RI2N_SLOW_TOUT,	/* ms */
	IFLA_RI2N_HBSPAN,	/* ms */
	IFLA_RI2N_HBWEIGHT,	/* packets */
	IFLA_RI2N_FAST_TOUT,	/* ms */
	IFLA_RI2N_MAXBUF,	/* packets */
	IFLA_RI2N_PEER_MEM,	/* bytes; while down */
	IFLA_RI2N_HELD_MEM,	/* bytes */
	IFLA_RI2N_LOSS_THRESH,	/* 0.1 % */
	IFLA_RI2N_ONE_SWITCH,	/* 0 or 1; while down */
	__IFLA_RI2N_MAX,
};
#define IFLA_RI2N_MAX (__IFLA_RI2N_MAX - 1)

/* IFLA_INFO_SLAVE_DATA of a ri2n slave (ip -d link show PORT): state, u32. */
enum {
	IFLA_RI2N_SLAVE_UNSPEC,
	IFLA_RI2N_SLAVE_LINK,	/* the link index, 0..7 */
	IFLA_RI2N_SLAVE_CARRIER,	/* 1: carrier */
	IFLA_RI2N_SLAVE_PEERS_UP,	/* peers this link is in use toward */
	IFLA_RI2N_SLAVE_PEERS_DOWN,	/* peers it is failed toward */
	__IFLA_RI2N_SLAVE_MAX,
};
#define IFLA_RI2N_SLAVE_MAX (__IFLA_RI2N_SLAVE_MAX - 1)

/*
 * The generic netlink family "ri2n", version 1 (genl-ctrl-list shows it).
 *
 * RI2N_CMD_GET_DEVICE (dump, no privilege): the device named by
 * RI2N_A_IFINDEX or RI2N_A_IFNAME, in the requester's network namespace.
 * The first message describes the device: its IFLA_RI2N_* state and
 * parameters under the same numbers, and the attributes below marked
 * "device". Each later message carries as many RI2N_A_PEER nests as fit,
 * so that a dump holds one message's memory at a time, whatever the
 * number of peers. Every message starts with RI2N_A_IFINDEX. A message
 * flagged NLM_F_DUMP_INTR means that peers came or went during the dump,
 * which may then miss a peer or show one twice: dump again. No key is
 * ever sent, only its id.
 *
 * RI2N_CMD_SET_DEVICE (CAP_NET_ADMIN over the device's network namespace,
 * as ip link set): parameters at their IFLA_RI2N_* numbers, all or none,
 * under the rules of ip link set; then the keys (RI2N_A_KEY...).
 *
 * RI2N_CMD_EVENT, to the multicast group "events": RI2N_A_IFINDEX,
 * RI2N_A_IFNAME and one RI2N_A_EVENT nest. At most RI2N_EVENTS_PER_SEC a
 * second per device, in bursts of up to RI2N_EVENTS_BURST, for each of
 * two kinds: endpoint and carrier changes, and peers admitted, forgotten
 * or restarted. What is over is dropped and counted (RI2N_EV_A_DROPPED).
 * RI2N_EV_DEVICE_REMOVED is never dropped.
 */
#define RI2N_GENL_NAME		"ri2n"
#define RI2N_GENL_VERSION	1
#define RI2N_MCGRP_EVENTS	"events"
#define RI2N_EVENTS_PER_SEC	1000
#define RI2N_EVENTS_BURST	64
#define RI2N_KEY_LEN		16

enum ri2n_cmd {
	RI2N_CMD_UNSPEC,
	RI2N_CMD_GET_DEVICE,
	RI2N_CMD_SET_DEVICE,
	RI2N_CMD_EVENT,
	__RI2N_CMD_MAX,
};
#define RI2N_CMD_MAX (__RI2N_CMD_MAX - 1)

/* Top-level attributes; 1..31 are IFLA_RI2N_*'s numbers and meanings. */
enum ri2n_attr {
	RI2N_A_UNSPEC,
	RI2N_A_IFINDEX = 32,	/* u32 */
	RI2N_A_IFNAME,		/* string */
	RI2N_A_MAC,		/* device: 6 bytes */
	RI2N_A_MTU,		/* device: u32 */
	RI2N_A_UP,		/* device: u8, 1 if up */
	RI2N_A_EPOCH64,		/* device: u64, the whole epoch */
	RI2N_A_CLOCK_MS,	/* device: u64, CLOCK_REALTIME ms of the dump */
	RI2N_A_MONO_MS,		/* device: u64, CLOCK_MONOTONIC ms, the same moment */
	RI2N_A_KEYS_ON,		/* device: u8, 1 if frames are sealed */
	RI2N_A_KEY_ID,		/* device: u32, the sealing key's id */
	RI2N_A_ACCEPT_ID,	/* device: u32, the id of the key also accepted */
	RI2N_A_SLAVE,		/* device: nest, one per slave, RI2N_SLAVE_A_* */
	RI2N_A_COUNTERS,	/* device: nest, RI2N_CTR_*, each u64 */
	RI2N_A_PEERS_SUMMARY,	/* device: nest, RI2N_PS_*, each u64 */
	RI2N_A_PEER,		/* nest, one per peer, RI2N_PEER_A_* */
	RI2N_A_KEY,		/* set: RI2N_KEY_LEN bytes, seal frames with it */
	RI2N_A_KEY_ACCEPT,	/* set: RI2N_KEY_LEN bytes, also accept it */
	RI2N_A_KEY_NONE,	/* set: flag, keys off */
	RI2N_A_ACCEPT_NONE,	/* set: flag, accept only the sealing key */
	RI2N_A_EVENT,		/* event: nest, RI2N_EV_A_* */
	__RI2N_A_MAX,
};
#define RI2N_A_MAX (__RI2N_A_MAX - 1)

/* An endpoint's (a peer's link's) state, RI2N_EP_A_STATE. */
enum ri2n_endpoint_state {
	RI2N_STATE_UNSPEC,
	RI2N_STATE_UP,		/* in use */
	RI2N_STATE_LOSSY,	/* out of use: the peer loses too much on it */
	RI2N_STATE_PEER_FAILED,	/* out of use: the peer hears nothing on it */
	RI2N_STATE_FAILED,	/* out of use: nothing heard from the peer */
	RI2N_STATE_NO_CARRIER,	/* out of use: the slave has no carrier */
	__RI2N_STATE_MAX,
};

/*
 * Nests. In each, the typed attributes come first; from 16 on, each is a
 * u64 and the list grows at its end.
 */
enum ri2n_slave_attr {
	RI2N_SLAVE_A_UNSPEC,
	RI2N_SLAVE_A_LINK,	/* u32, 0..7 */
	RI2N_SLAVE_A_NAME,	/* string */
	RI2N_SLAVE_A_CARRIER,	/* u8 */
	RI2N_SLAVE_A_CHANGED_MS = 16,	/* ms since the carrier changed */
	RI2N_SLAVE_A_TX_PACKETS,
	RI2N_SLAVE_A_RX_PACKETS,
	RI2N_SLAVE_A_TX_DROPPED,
	RI2N_SLAVE_A_TX_WHOLE,
	__RI2N_SLAVE_A_MAX,
};

/* RI2N_A_COUNTERS: the device's counters (Documentation/ri2n.rst). */
enum ri2n_counter {
	RI2N_CTR_UNSPEC,
	RI2N_CTR_RX_PACKETS,
	RI2N_CTR_RX_BYTES,
	RI2N_CTR_TX_PACKETS,
	RI2N_CTR_TX_BYTES,
	RI2N_CTR_RX_DROPPED,
	RI2N_CTR_TX_DROPPED,
	RI2N_CTR_TX_NO_LINK,
	RI2N_CTR_TX_QUEUE_FULL,
	RI2N_CTR_TX_LOOP,
	RI2N_CTR_RX_MALFORMED,
	RI2N_CTR_RX_NOT_FOR_US,
	RI2N_CTR_RX_UNORDERED,
	RI2N_CTR_RX_BCAST_COPIES,
	RI2N_CTR_RX_DUPLICATES,
	RI2N_CTR_PEERS_NEW,
	RI2N_CTR_PEERS_REFUSED,
	RI2N_CTR_PEERS_EVICTED,
	RI2N_CTR_PEERS_AGED,
	RI2N_CTR_RX_NOBUF,
	RI2N_CTR_RX_HELD_FULL,
	RI2N_CTR_HB_SENT,
	RI2N_CTR_RX_AUTH_FAIL,
	RI2N_CTR_RX_REPLAYS,
	RI2N_CTR_RX_MODE_MISMATCH,
	RI2N_CTR_SLAVE_MAC_TAKEN,
	RI2N_CTR_RX_MERGED,
	RI2N_CTR_RX_MERGED_FRAMES,
	RI2N_CTR_LOCK_ROUNDS,
	RI2N_CTR_LOCK_CONTENDED,
	RI2N_CTR_TX_PEER_CONTENDED,
	RI2N_CTR_SWEEPS,
	RI2N_CTR_UP_NOW,
	RI2N_CTR_UP_GRO,
	RI2N_CTR_EVENTS_DROPPED,
	__RI2N_CTR_MAX,
};

/* RI2N_A_PEERS_SUMMARY: the peer table and its memory. */
enum ri2n_peers_summary {
	RI2N_PS_UNSPEC,
	RI2N_PS_COUNT,
	RI2N_PS_CAPACITY,
	RI2N_PS_BUFS,
	RI2N_PS_BUFS_MAX,
	RI2N_PS_HELD_BYTES,
	RI2N_PS_LOSSY_PEERS,
	RI2N_PS_PROBING_PEERS,
	RI2N_PS_PROBE_SHIFT,
	__RI2N_PS_MAX,
};

enum ri2n_peer_attr {
	RI2N_PEER_A_UNSPEC,
	RI2N_PEER_A_MAC,	/* 6 bytes */
	RI2N_PEER_A_EPOCH,	/* u64 */
	RI2N_PEER_A_ENDPOINT,	/* nest, one per link, RI2N_EP_A_* */
	RI2N_PEER_A_TX_NEXT = 16,
	RI2N_PEER_A_RX_NEXT,
	RI2N_PEER_A_HELD,
	RI2N_PEER_A_IN_ORDER,
	RI2N_PEER_A_TIMEOUT,
	RI2N_PEER_A_LOSS,
	RI2N_PEER_A_FLUSHES,
	RI2N_PEER_A_JUMPS,
	RI2N_PEER_A_GAPS,
	RI2N_PEER_A_LATE,
	RI2N_PEER_A_LATE_LOSS,
	RI2N_PEER_A_DUPLICATES,
	RI2N_PEER_A_RESTARTS,
	RI2N_PEER_A_UNBUFFERED,
	__RI2N_PEER_A_MAX,
};

enum ri2n_endpoint_attr {
	RI2N_EP_A_UNSPEC,
	RI2N_EP_A_LINK,		/* u32 */
	RI2N_EP_A_STATE,	/* u8, enum ri2n_endpoint_state */
	RI2N_EP_A_PEER_SLAVE_MAC,	/* 6 bytes, one-switch mode (0: unknown) */
	RI2N_EP_A_COUNTER = 16,
	RI2N_EP_A_LAST_RX_MS,
	RI2N_EP_A_CHANGED_MS,
	RI2N_EP_A_RX,
	RI2N_EP_A_HB,
	RI2N_EP_A_LATE,
	RI2N_EP_A_TX,
	RI2N_EP_A_FAILS,
	RI2N_EP_A_RECOVERIES,
	RI2N_EP_A_LOSS_BP,
	RI2N_EP_A_LOSSY,
	RI2N_EP_A_PEER_LOSSY,
	__RI2N_EP_A_MAX,
};

/* What an event says happened, RI2N_EV_A_REASON. */
enum ri2n_event_reason {
	RI2N_EV_UNSPEC,
	RI2N_EV_FAILED,		/* nothing heard from the peer on the link */
	RI2N_EV_RECOVERED,	/* heard again */
	RI2N_EV_PEER_FAILED,	/* the peer says it hears nothing from us */
	RI2N_EV_PEER_RECOVERED,	/* the peer hears us again */
	RI2N_EV_LOSSY,		/* the peer loses too much of what we send */
	RI2N_EV_LOSSLESS,	/* its loss is low again */
	RI2N_EV_CARRIER_DOWN,	/* the slave lost carrier (no peer) */
	RI2N_EV_CARRIER_UP,	/* the slave has carrier again (no peer) */
	RI2N_EV_PEER_NEW,	/* a peer admitted (no link) */
	RI2N_EV_PEER_FORGOTTEN,	/* a peer aged out or evicted (no link) */
	RI2N_EV_PEER_RESTARTED,	/* a peer with a new epoch (no link) */
	RI2N_EV_DEVICE_REMOVED,	/* the device is being deleted (the last) */
	__RI2N_EV_MAX,
};

enum ri2n_event_attr {
	RI2N_EV_A_UNSPEC,
	RI2N_EV_A_REASON,	/* u8, enum ri2n_event_reason */
	RI2N_EV_A_TIME_NS,	/* u64, CLOCK_REALTIME ns of the transition */
	RI2N_EV_A_PEER,		/* 6 bytes: the peer, if any */
	RI2N_EV_A_LINK,		/* u32: the link, if any */
	RI2N_EV_A_SLAVE,	/* string: its slave */
	RI2N_EV_A_OLD,		/* u8, enum ri2n_endpoint_state: before */
	RI2N_EV_A_NEW,		/* u8, after */
	RI2N_EV_A_DROPPED,	/* u64: events dropped so far on this device */
	__RI2N_EV_A_MAX,
};

#endif /* _UAPI_LINUX_RI2N_H */
