// SPDX-License-Identifier: GPL-2.0
/*
 * ri2n: what Rust cannot reach in an unpatched kernel, and nothing else.
 *
 * The kernel crate's bindings do not include netdevice.h or proc_fs.h, and
 * many helpers are static inline. This file holds only:
 *  - tables whose layout Rust cannot see (net_device_ops, packet_type, the
 *    notifier block, module parameters), pointing at Rust functions;
 *  - one-line wrappers around static inlines and missing prototypes.
 * Every decision is made in Rust (ri2n_*.rs and core/).
 */
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/if_ether.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/netdevice.h>
#include <linux/proc_fs.h>
#include <linux/rtnetlink.h>
#include <linux/seq_file.h>
#include <linux/timekeeping.h>
#include <linux/skbuff.h>
#include <linux/timer.h>
#include <net/gro_cells.h>
#include <net/gso.h>
#include <net/net_namespace.h>

#include "ri2n_glue.h"

#define ETH_P_RI2N 0x1004
#define RI2N_HLEN 8

/* --- tables ------------------------------------------------------------ */

/* The order ri2n_rs_stats() fills (ri2n_glue.rs, DevStats::export). */
static void ri2n_get_stats64(struct net_device *dev, struct rtnl_link_stats64 *s)
{
	u64 v[8];

	ri2n_rs_stats(v);
	s->rx_packets = v[0];
	s->rx_bytes = v[1];
	s->tx_packets = v[2];
	s->tx_bytes = v[3];
	s->rx_dropped = v[4];
	s->tx_dropped = v[5];
	s->rx_errors = v[6];
	s->rx_frame_errors = v[7];
}

/* What ri2n0 hands up goes through per-CPU GRO cells, as tunnel devices
 * do: the reordered TCP segments are coalesced before the stack sees them. */
static struct gro_cells ri2n_gro;
static int ri2n_init(struct net_device *dev) { return gro_cells_init(&ri2n_gro, dev); }
static void ri2n_uninit(struct net_device *dev) { gro_cells_destroy(&ri2n_gro); }

static const struct net_device_ops ri2n_netdev_ops = {
	.ndo_init = ri2n_init,
	.ndo_uninit = ri2n_uninit,
	.ndo_open = ri2n_rs_open,
	.ndo_stop = ri2n_rs_stop,
	.ndo_start_xmit = ri2n_rs_xmit,
	.ndo_set_mac_address = ri2n_rs_set_mac,
	.ndo_validate_addr = eth_validate_addr,
	.ndo_get_stats64 = ri2n_get_stats64,
};

static void ri2n_setup(struct net_device *dev)
{
	ether_setup(dev);
	dev->netdev_ops = &ri2n_netdev_ops;
	/* A virtual device: no qdisc of its own, locking is ours; the MAC may
	 * change while up (ri2n_rs_set_mac moves the slaves' filter entry). */
	/* No netpoll: it would transmit with IRQs off, and we hand packets to
	 * the slaves with dev_queue_xmit, which must not run so. */
	dev->priv_flags |= IFF_NO_QUEUE | IFF_LIVE_ADDR_CHANGE | IFF_DISABLE_NETPOLL;
	dev->lltx = true;
	/* Room for the RI2N header, so transmit rarely reallocates. */
	dev->needed_headroom = RI2N_HLEN;
	/* Checksum and scatter-gather are the slaves' to do: the RI2N header
	 * goes in front of the payload without moving it, so a partial
	 * checksum's offsets stay right; for a slave that cannot offload, the
	 * stack finishes the job in validate_xmit_skb(). */
	dev->hw_features |= NETIF_F_SG | NETIF_F_HW_CSUM | NETIF_F_HIGHDMA;
	/* TSO and the other GSO kinds, done in software at transmit
	 * (ri2n_gso_segment), as WireGuard does: the stack builds one large
	 * packet instead of dozens, and every segment still gets its own
	 * sequence number, so slaves and wire only see MTU-sized frames. */
	dev->hw_features |= NETIF_F_GSO | NETIF_F_GSO_SOFTWARE;
	dev->features |= dev->hw_features;
	eth_hw_addr_random(dev);
}

static int ri2n_pt_rcv(struct sk_buff *skb, struct net_device *dev,
		       struct packet_type *pt, struct net_device *orig_dev)
{
	return ri2n_rs_rcv(skb, dev);
}

static struct packet_type ri2n_packet_type __read_mostly = {
	.type = cpu_to_be16(ETH_P_RI2N),
	.func = ri2n_pt_rcv,
};

static int ri2n_netdev_event(struct notifier_block *nb, unsigned long event, void *ptr)
{
	ri2n_rs_netdev_event(event, netdev_notifier_info_to_dev(ptr));
	return NOTIFY_DONE;
}

static struct notifier_block ri2n_notifier = {
	.notifier_call = ri2n_netdev_event,
};

/* --- module parameters --------------------------------------------------- */

static char *slaves;
module_param(slaves, charp, 0444);
MODULE_PARM_DESC(slaves, "comma-separated slave NICs, 2 to 8 (e.g. eth0,eth1)");

static int ri2n_param_set(const char *val, const struct kernel_param *kp)
{
	unsigned int v;
	int err = kstrtouint(val, 0, &v);

	return err ? err : ri2n_rs_param_set((long)kp->arg, v);
}

static int ri2n_param_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%u\n", ri2n_rs_param_get((long)kp->arg));
}

static const struct kernel_param_ops ri2n_param_ops = {
	.set = ri2n_param_set,
	.get = ri2n_param_get,
};

/* Indices follow core/params.rs SPECS; ranges and defaults live there. */
#define RI2N_PARAM(name, idx, desc) \
	module_param_cb(name, &ri2n_param_ops, (void *)(idx), 0644); \
	MODULE_PARM_DESC(name, desc)
RI2N_PARAM(ft_hthresh, 0, "FT_HTHRESH: judge a peer when a counter exceeds this (packets, default 10)");
RI2N_PARAM(ft_lthresh, 1, "FT_LTHRESH: fail endpoints counting at most this (packets, default 1)");
RI2N_PARAM(slow_tout, 2, "SLOW_TOUT: never fail an endpoint that received within this (ms, default 100)");
RI2N_PARAM(hbspan, 3, "HBSPAN: heartbeat period (ms, default 2000)");
RI2N_PARAM(hbweight, 4, "HBWEIGHT: counter weight of a heartbeat (packets, default 3)");
RI2N_PARAM(fast_tout, 5, "FAST_TOUT: longest a packet waits for a gap (ms, default 20)");
RI2N_PARAM(maxbuf, 6, "MAXBUF: most packets held per peer (default 300, max 511)");
RI2N_PARAM(max_peers, 7, "most peers kept (default 64, max 1024)");

const char *ri2n_slaves_param(void) { return slaves; }

/* --- one-line wrappers ---------------------------------------------------- */

struct net_device *ri2n_alloc_netdev(void) { return alloc_netdev(0, "ri2n%d", NET_NAME_ENUM, ri2n_setup); }
int ri2n_register_netdev(struct net_device *dev) { return register_netdev(dev); }
void ri2n_unregister_netdev(struct net_device *dev) { unregister_netdev(dev); }
void ri2n_free_netdev(struct net_device *dev) { free_netdev(dev); }
void ri2n_add_pack(void) { dev_add_pack(&ri2n_packet_type); }
void ri2n_remove_pack(void) { dev_remove_pack(&ri2n_packet_type); }
int ri2n_register_notifier(void) { return register_netdevice_notifier(&ri2n_notifier); }
void ri2n_unregister_notifier(void) { unregister_netdevice_notifier(&ri2n_notifier); }
void ri2n_rtnl_lock(void) { rtnl_lock(); }
void ri2n_rtnl_unlock(void) { rtnl_unlock(); }
void ri2n_synchronize_net(void) { synchronize_net(); }

struct net_device *ri2n_dev_get_by_name(const char *name) { return dev_get_by_name(&init_net, name); }
void ri2n_dev_put(struct net_device *dev) { dev_put(dev); }
const char *ri2n_dev_name(const struct net_device *dev) { return dev->name; }
const u8 *ri2n_dev_addr(const struct net_device *dev) { return dev->dev_addr; }
bool ri2n_dev_is_loopback(const struct net_device *dev) { return dev->flags & IFF_LOOPBACK; }
bool ri2n_dev_is_ether(const struct net_device *dev) { return dev->type == ARPHRD_ETHER && dev->addr_len == ETH_ALEN; }
unsigned int ri2n_dev_mtu(const struct net_device *dev) { return READ_ONCE(dev->mtu); }
void ri2n_dev_init_mtu(struct net_device *dev, unsigned int mtu) { dev->mtu = mtu; dev->max_mtu = mtu; }
void ri2n_dev_set_max_mtu(struct net_device *dev, unsigned int mtu) { dev->max_mtu = mtu; }
int ri2n_dev_set_mtu(struct net_device *dev, unsigned int mtu) { return dev_set_mtu(dev, mtu); }
bool ri2n_carrier_ok(const struct net_device *dev) { return netif_carrier_ok(dev); }
void ri2n_carrier_on(struct net_device *dev) { netif_carrier_on(dev); }
void ri2n_carrier_off(struct net_device *dev) { netif_carrier_off(dev); }
bool ri2n_running(const struct net_device *dev) { return netif_running(dev); }
u64 ri2n_realtime_ms(void) { return ktime_get_real_ns() / NSEC_PER_MSEC; }
bool ri2n_tx_stopped(struct net_device *dev) { return netif_xmit_stopped(netdev_get_tx_queue(dev, 0)); }
int ri2n_uc_add(struct net_device *dev, const u8 *addr) { return dev_uc_add(dev, addr); }
int ri2n_uc_del(struct net_device *dev, const u8 *addr) { return dev_uc_del(dev, addr); }
int ri2n_set_allmulti(struct net_device *dev, int inc) { return dev_set_allmulti(dev, inc); }
int ri2n_eth_mac_addr(struct net_device *dev, void *addr) { return eth_mac_addr(dev, addr); }

int ri2n_dev_queue_xmit(struct sk_buff *skb) { return dev_queue_xmit(skb); }
int ri2n_gro_receive(struct sk_buff *skb) { return gro_cells_receive(&ri2n_gro, skb); }
void ri2n_kfree_skb(struct sk_buff *skb) { kfree_skb(skb); }
void ri2n_consume_skb(struct sk_buff *skb) { consume_skb(skb); }
struct sk_buff *ri2n_skb_share_check(struct sk_buff *skb) { return skb_share_check(skb, GFP_ATOMIC); }
bool ri2n_pskb_may_pull(struct sk_buff *skb, unsigned int len) { return pskb_may_pull(skb, len); }
int ri2n_skb_cow_head(struct sk_buff *skb, unsigned int headroom) { return skb_cow_head(skb, headroom); }
__be16 ri2n_eth_type_trans(struct sk_buff *skb, struct net_device *dev) { return eth_type_trans(skb, dev); }
u8 *ri2n_skb_mac_header(const struct sk_buff *skb) { return skb_mac_header(skb); }
void ri2n_skb_reset_mac_header(struct sk_buff *skb) { skb_reset_mac_header(skb); }
struct sk_buff *ri2n_alloc_skb(struct net_device *dev, unsigned int len) { return netdev_alloc_skb(dev, len); }
/* The MTU-sized segments of a GSO packet, leaving checksums and
 * scatter-gather to the slave; consumes @skb. NULL on failure, when @skb
 * is left to the caller. */
struct sk_buff *ri2n_gso_segment(struct sk_buff *skb)
{
	struct sk_buff *segs = skb_gso_segment(skb, NETIF_F_SG | NETIF_F_HW_CSUM | NETIF_F_HIGHDMA);

	if (IS_ERR_OR_NULL(segs))
		return NULL;
	consume_skb(skb);
	return segs;
}

/* Unlinks and returns the first skb of the list at *head (NULL: empty). */
struct sk_buff *ri2n_skb_list_pop(struct sk_buff **head)
{
	struct sk_buff *skb = *head;

	if (skb) {
		*head = skb->next;
		skb_mark_not_on_list(skb);
	}
	return skb;
}

bool ri2n_skb_is_gso(const struct sk_buff *skb) { return skb_is_gso(skb); }
void ri2n_kfree_skb_list(struct sk_buff *segs) { kfree_skb_list(segs); }
struct sk_buff *ri2n_skb_clone(struct sk_buff *skb) { return skb_clone(skb, GFP_ATOMIC); }

unsigned int ri2n_skb_len(const struct sk_buff *skb) { return skb->len; }
unsigned int ri2n_skb_headlen(const struct sk_buff *skb) { return skb_headlen(skb); }
u8 *ri2n_skb_data(const struct sk_buff *skb) { return skb->data; }
void ri2n_skb_set_dev(struct sk_buff *skb, struct net_device *dev) { skb->dev = dev; }
void ri2n_skb_set_pkt_type_host(struct sk_buff *skb) { skb->pkt_type = PACKET_HOST; }
void ri2n_skb_set_protocol(struct sk_buff *skb, __be16 proto) { skb->protocol = proto; }
u8 *ri2n_skb_push(struct sk_buff *skb, unsigned int len) { return skb_push(skb, len); }
void *ri2n_skb_pull_rcsum(struct sk_buff *skb, unsigned int len) { return skb_pull_rcsum(skb, len); }
void *ri2n_skb_put_zero(struct sk_buff *skb, unsigned int len) { return skb_put_zero(skb, len); }

void ri2n_timer_setup(struct timer_list *t, void (*fn)(struct timer_list *)) { timer_setup(t, fn, 0); }
int ri2n_mod_timer_ms(struct timer_list *t, unsigned int ms) { return mod_timer(t, jiffies + msecs_to_jiffies(ms)); }
void ri2n_timer_delete_sync(struct timer_list *t) { timer_delete_sync(t); }
bool ri2n_ratelimit(void) { return net_ratelimit(); }

static struct proc_dir_entry *ri2n_proc_dir;
int ri2n_proc_create(const char *name)
{
	ri2n_proc_dir = proc_mkdir("ri2n", init_net.proc_net);
	if (!ri2n_proc_dir)
		return -ENOMEM;
	if (!proc_create_single(name, 0444, ri2n_proc_dir, ri2n_rs_proc_show)) {
		proc_remove(ri2n_proc_dir);
		return -ENOMEM;
	}
	return 0;
}
void ri2n_proc_remove(void) { proc_remove(ri2n_proc_dir); }
