/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ri2n: the interface between ri2n_glue.c and the Rust crate.
 * ri2n_glue.rs declares the same functions in its extern block.
 */
#ifndef RI2N_GLUE_H
#define RI2N_GLUE_H

#include <linux/netdevice.h>
#include <linux/seq_file.h>
#include <linux/skbuff.h>
#include <linux/timer.h>

/* Rust entry points (ri2n_glue.rs). */
int ri2n_rs_open(struct net_device *dev);
int ri2n_rs_stop(struct net_device *dev);
netdev_tx_t ri2n_rs_xmit(struct sk_buff *skb, struct net_device *dev);
int ri2n_rs_set_mac(struct net_device *dev, void *addr);
void ri2n_rs_stats(u64 *v);
int ri2n_rs_rcv(struct sk_buff *skb, struct net_device *dev);
void ri2n_rs_netdev_event(unsigned long event, struct net_device *dev);
int ri2n_rs_param_set(long idx, unsigned int val);
unsigned int ri2n_rs_param_get(long idx);
int ri2n_rs_proc_show(struct seq_file *m, void *v);

/* One-line wrappers (ri2n_glue.c). */
const char *ri2n_slaves_param(void);
struct net_device *ri2n_alloc_netdev(void);
int ri2n_register_netdev(struct net_device *dev);
void ri2n_unregister_netdev(struct net_device *dev);
void ri2n_free_netdev(struct net_device *dev);
void ri2n_add_pack(void);
void ri2n_remove_pack(void);
int ri2n_register_notifier(void);
void ri2n_unregister_notifier(void);
void ri2n_rtnl_lock(void);
void ri2n_rtnl_unlock(void);
void ri2n_synchronize_net(void);
struct net_device *ri2n_dev_get_by_name(const char *name);
void ri2n_dev_put(struct net_device *dev);
const char *ri2n_dev_name(const struct net_device *dev);
const u8 *ri2n_dev_addr(const struct net_device *dev);
bool ri2n_dev_is_loopback(const struct net_device *dev);
bool ri2n_dev_is_ether(const struct net_device *dev);
unsigned int ri2n_dev_mtu(const struct net_device *dev);
void ri2n_dev_init_mtu(struct net_device *dev, unsigned int mtu);
void ri2n_dev_set_max_mtu(struct net_device *dev, unsigned int mtu);
int ri2n_dev_set_mtu(struct net_device *dev, unsigned int mtu);
bool ri2n_carrier_ok(const struct net_device *dev);
void ri2n_carrier_on(struct net_device *dev);
void ri2n_carrier_off(struct net_device *dev);
bool ri2n_running(const struct net_device *dev);
u64 ri2n_realtime_ms(void);
bool ri2n_tx_stopped(struct net_device *dev);
int ri2n_uc_add(struct net_device *dev, const u8 *addr);
int ri2n_uc_del(struct net_device *dev, const u8 *addr);
int ri2n_set_allmulti(struct net_device *dev, int inc);
int ri2n_eth_mac_addr(struct net_device *dev, void *addr);
int ri2n_dev_queue_xmit(struct sk_buff *skb);
int ri2n_gro_receive(struct sk_buff *skb);
void ri2n_kfree_skb(struct sk_buff *skb);
void ri2n_consume_skb(struct sk_buff *skb);
struct sk_buff *ri2n_skb_share_check(struct sk_buff *skb);
bool ri2n_pskb_may_pull(struct sk_buff *skb, unsigned int len);
int ri2n_skb_cow_head(struct sk_buff *skb, unsigned int headroom);
__be16 ri2n_eth_type_trans(struct sk_buff *skb, struct net_device *dev);
u8 *ri2n_skb_mac_header(const struct sk_buff *skb);
void ri2n_skb_reset_mac_header(struct sk_buff *skb);
struct sk_buff *ri2n_alloc_skb(struct net_device *dev, unsigned int len);
struct sk_buff *ri2n_skb_clone(struct sk_buff *skb);
struct sk_buff *ri2n_gso_segment(struct sk_buff *skb);
struct sk_buff *ri2n_skb_list_pop(struct sk_buff **head);
bool ri2n_skb_is_gso(const struct sk_buff *skb);
void ri2n_kfree_skb_list(struct sk_buff *segs);
unsigned int ri2n_skb_len(const struct sk_buff *skb);
unsigned int ri2n_skb_headlen(const struct sk_buff *skb);
u8 *ri2n_skb_data(const struct sk_buff *skb);
void ri2n_skb_set_dev(struct sk_buff *skb, struct net_device *dev);
void ri2n_skb_set_pkt_type_host(struct sk_buff *skb);
void ri2n_skb_set_protocol(struct sk_buff *skb, __be16 proto);
u8 *ri2n_skb_push(struct sk_buff *skb, unsigned int len);
void *ri2n_skb_pull_rcsum(struct sk_buff *skb, unsigned int len);
void *ri2n_skb_put_zero(struct sk_buff *skb, unsigned int len);
void ri2n_timer_setup(struct timer_list *t, void (*fn)(struct timer_list *));
int ri2n_mod_timer_ms(struct timer_list *t, unsigned int ms);
void ri2n_timer_delete_sync(struct timer_list *t);
bool ri2n_ratelimit(void);
int ri2n_proc_create(const char *name);
void ri2n_proc_remove(void);

#endif /* RI2N_GLUE_H */
