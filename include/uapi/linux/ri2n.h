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

#endif /* _UAPI_LINUX_RI2N_H */
