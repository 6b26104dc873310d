// SPDX-License-Identifier: GPL-2.0
/*
 * What Rust cannot call directly: static inline functions and macros of the
 * networking headers, one line each, as the kernel's rust/helpers/ does.
 * Nothing else lives here: tables and logic are in Rust (net/).
 *
 * bindgen reads this file (net/Kbuild.bindgen): each rnet_NAME becomes
 * bindings::NAME, so no prototype is written twice.
 */
#include "bindings_helper.h"

struct net *rnet_dev_net(const struct net_device *dev) { return dev_net(dev); }
bool rnet_net_eq(const struct net *a, const struct net *b) { return net_eq(a, b); }
void rnet_dev_hold(struct net_device *dev) { dev_hold(dev); }
void rnet_dev_put(struct net_device *dev) { dev_put(dev); }
unsigned int rnet_txq_qdisc_qlen(struct net_device *dev, unsigned int q) { return qdisc_qlen_sum(rtnl_dereference(netdev_get_tx_queue(dev, q)->qdisc)); }
void rnet_netdev_lock_ops(struct net_device *dev) { netdev_lock_ops(dev); }
void rnet_netdev_unlock_ops(struct net_device *dev) { netdev_unlock_ops(dev); }
bool rnet_netif_running(const struct net_device *dev) { return netif_running(dev); }
bool rnet_netif_carrier_ok(const struct net_device *dev) { return netif_carrier_ok(dev); }
bool rnet_netif_txq_stopped(const struct net_device *dev, unsigned int q) { return netif_xmit_stopped(netdev_get_tx_queue(dev, q)); }
void *rnet_rx_handler_data(const struct net_device *dev) { return rcu_dereference(dev->rx_handler_data); }
void rnet_eth_hw_addr_set(struct net_device *dev, const u8 *addr) { eth_hw_addr_set(dev, addr); }
void rnet_eth_hw_addr_random(struct net_device *dev) { eth_hw_addr_random(dev); }
void rnet_netif_addr_lock_bh(struct net_device *dev) { netif_addr_lock_bh(dev); }
void rnet_netif_addr_unlock_bh(struct net_device *dev) { netif_addr_unlock_bh(dev); }
int rnet_dev_uc_count(struct net_device *dev) { return netdev_uc_count(dev); }
void rnet_dev_sw_netstats_tx_add(struct net_device *dev, unsigned int packets, unsigned int len) { dev_sw_netstats_tx_add(dev, packets, len); }
void rnet_dev_sw_netstats_rx_add(struct net_device *dev, unsigned int len) { dev_sw_netstats_rx_add(dev, len); }
void rnet_dev_fetch_tstats(struct rtnl_link_stats64 *s, const struct net_device *dev) { dev_fetch_sw_netstats(s, dev->tstats); }

u32 rnet_nla_get_u32(const struct nlattr *nla) { return nla_get_u32(nla); }
int rnet_nla_type(const struct nlattr *nla) { return nla_type(nla); }

void rnet_skb_consume(struct sk_buff *skb) { consume_skb(skb); }
bool rnet_skb_shared(const struct sk_buff *skb) { return skb_shared(skb); }
bool rnet_skb_header_cloned(const struct sk_buff *skb) { return skb_header_cloned(skb); }
struct sk_buff *rnet_skb_share_check(struct sk_buff *skb) { return skb_share_check(skb, GFP_ATOMIC); }
bool rnet_pskb_may_pull(struct sk_buff *skb, unsigned int len) { return pskb_may_pull(skb, len); }
int rnet_skb_cow_head(struct sk_buff *skb, unsigned int headroom) { return skb_cow_head(skb, headroom); }
void *rnet_skb_put_zero(struct sk_buff *skb, unsigned int len) { return skb_put_zero(skb, len); }
struct sk_buff *rnet_netdev_alloc_skb(struct net_device *dev, unsigned int len) { return netdev_alloc_skb(dev, len); }
struct sk_buff *rnet_skb_gso_segment(struct sk_buff *skb, netdev_features_t features) { return skb_gso_segment(skb, features); }

void rnet_spin_lock_bh(spinlock_t *lock) { spin_lock_bh(lock); }
void rnet_spin_unlock_bh(spinlock_t *lock) { spin_unlock_bh(lock); }
int rnet_spin_trylock_bh(spinlock_t *lock) { return spin_trylock_bh(lock); }
void rnet_local_bh_disable(void) { local_bh_disable(); }
void rnet_local_bh_enable(void) { local_bh_enable(); }
void rnet_rcu_read_lock(void) { rcu_read_lock(); }
void rnet_rcu_read_unlock(void) { rcu_read_unlock(); }
void *rnet_current(void) { return current; }
unsigned int rnet_nr_cpus_max(void) { return NR_CPUS; }

void rnet_init_delayed_work(struct delayed_work *w, work_func_t fn) { INIT_DELAYED_WORK(w, fn); }
bool rnet_schedule_delayed_work(struct delayed_work *w, unsigned long delay) { return schedule_delayed_work(w, delay); }
bool rnet_queue_work_highpri(struct delayed_work *w) { return queue_delayed_work(system_highpri_wq, w, 0); }
struct delayed_work *rnet_to_delayed_work(struct work_struct *w) { return to_delayed_work(w); }
void rnet_timer_setup(struct timer_list *t, void (*fn)(struct timer_list *)) { timer_setup(t, fn, 0); }
unsigned long rnet_jiffies(void) { return jiffies; }
unsigned long rnet_msecs_to_jiffies(unsigned int ms) { return msecs_to_jiffies(ms); }
u64 rnet_ktime_get_real_ns(void) { return ktime_get_real_ns(); }
int rnet_restart_syscall(void) { return restart_syscall(); }

void *rnet_net_generic(const struct net *net, unsigned int id) { return net_generic(net, id); }
struct proc_dir_entry *rnet_net_proc_dir(struct net *net) { return net->proc_net; }
struct proc_dir_entry *rnet_proc_net_mkdir(struct net *net, const char *name, struct proc_dir_entry *parent) { return proc_net_mkdir(net, name, parent); }
struct net *rnet_seq_file_single_net(struct seq_file *m) { return seq_file_single_net(m); }
void *rnet_seq_pde_data(struct seq_file *m) { return pde_data(file_inode(m->file)); }

int rnet_nla_put_u32(struct sk_buff *skb, int type, u32 v) { return nla_put_u32(skb, type, v); }
int rnet_nla_put_u8(struct sk_buff *skb, int type, u8 v) { return nla_put_u8(skb, type, v); }
int rnet_nla_put_u64(struct sk_buff *skb, int type, u64 v) { return nla_put_u64_64bit(skb, type, v, 0); }
size_t rnet_nla_total_size(int payload) { return nla_total_size(payload); }
bool rnet_net_ratelimit(void) { return net_ratelimit(); }
struct kmem_cache *rnet_kmem_cache_create_account(const char *name, unsigned int size, unsigned int align) { return kmem_cache_create(name, size, align, SLAB_ACCOUNT, NULL); }
void *rnet_kmem_cache_zalloc(struct kmem_cache *c, gfp_t flags) { return kmem_cache_zalloc(c, flags); }
void rnet_skb_set_network_header(struct sk_buff *skb, int offset) { skb_set_network_header(skb, offset); }
void rnet_skb_gso_error_unwind(struct sk_buff *skb, __be16 protocol, int pulled_hlen, u16 mac_offset, int mac_len) { skb_gso_error_unwind(skb, protocol, pulled_hlen, mac_offset, mac_len); }
netdev_features_t rnet_netif_f_gso_mask(void) { return NETIF_F_GSO_MASK; }
netdev_features_t rnet_netif_f_hw_gso(void) { return NETIF_F_ALL_TSO | NETIF_F_GSO_UDP_L4; }
void *rnet_skb_gro_header(struct sk_buff *skb, unsigned int hlen, unsigned int offset) { return skb_gro_header(skb, hlen, offset); }
void rnet_skb_gro_postpull_rcsum(struct sk_buff *skb, const void *start, unsigned int len) { skb_gro_postpull_rcsum(skb, start, len); }
unsigned int rnet_skb_gso_tcp_udp(void) { return SKB_GSO_TCPV4 | SKB_GSO_TCPV6 | SKB_GSO_TCP_ECN | SKB_GSO_TCP_FIXEDID | SKB_GSO_UDP_L4; }
void __percpu *rnet_alloc_percpu_account(size_t size, size_t align) { return __alloc_percpu_gfp(size, align, GFP_KERNEL_ACCOUNT); }
unsigned int rnet_nr_cpu_ids(void) { return nr_cpu_ids; }
bool rnet_cpu_possible(unsigned int cpu) { return cpu_possible(cpu); }
void *rnet_per_cpu_ptr(void __percpu *p, unsigned int cpu) { return per_cpu_ptr(p, cpu); }
void *rnet_this_cpu_ptr(void __percpu *p) { return this_cpu_ptr(p); }
void rnet_skb_queue_head_init(struct sk_buff_head *q) { skb_queue_head_init(q); }
void rnet_skb_queue_purge(struct sk_buff_head *q) { skb_queue_purge(q); }
void rnet_napi_set_no_busy_poll(struct napi_struct *n) { set_bit(NAPI_STATE_NO_BUSY_POLL, &n->state); }
void rnet_netif_napi_add(struct net_device *dev, struct napi_struct *n, int (*poll)(struct napi_struct *, int)) { netif_napi_add(dev, n, poll); }
void rnet___netif_napi_del(struct napi_struct *n) { __netif_napi_del(n); }
void rnet_napi_schedule(struct napi_struct *n) { napi_schedule(n); }
void rnet_napi_gro_receive(struct napi_struct *n, struct sk_buff *skb) { napi_gro_receive(n, skb); }
int rnet_max_backlog(void) { return READ_ONCE(net_hotdata.max_backlog); }
void rnet_dev_core_stats_rx_dropped_inc(struct net_device *dev) { dev_core_stats_rx_dropped_inc(dev); }
void rnet_skb_unset_transport_header(struct sk_buff *skb) { skb_unset_transport_header(skb); }
void rnet_spin_lock(spinlock_t *lock) { spin_lock(lock); }
void rnet_spin_unlock(spinlock_t *lock) { spin_unlock(lock); }
void rnet___skb_queue_tail(struct sk_buff_head *q, struct sk_buff *skb) { __skb_queue_tail(q, skb); }
struct sk_buff *rnet___skb_dequeue(struct sk_buff_head *q) { return __skb_dequeue(q); }
bool rnet_napi_is_scheduled(struct napi_struct *n) { return napi_is_scheduled(n); }

struct sk_buff *rnet_genlmsg_new_default(void) { return genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL); }
void rnet_genlmsg_end(struct sk_buff *skb, void *hdr) { genlmsg_end(skb, hdr); }
void rnet_genlmsg_cancel(struct sk_buff *skb, void *hdr) { genlmsg_cancel(skb, hdr); }
int rnet_genlmsg_multicast_netns(const struct genl_family *family, struct net *net, struct sk_buff *skb, u32 portid, unsigned int group) { return genlmsg_multicast_netns(family, net, skb, portid, group, GFP_KERNEL); }
bool rnet_genl_has_listeners(const struct genl_family *family, struct net *net, unsigned int group) { return genl_has_listeners(family, net, group); }
struct net *rnet_genl_info_net(const struct genl_info *info) { return genl_info_net(info); }
const struct genl_dumpit_info *rnet_genl_dumpit_info(struct netlink_callback *cb) { return genl_dumpit_info(cb); }
void rnet_genl_dump_check_consistent(struct netlink_callback *cb, void *hdr) { genl_dump_check_consistent(cb, hdr); }
bool rnet_netdev_registered(const struct net_device *dev) { return dev->reg_state == NETREG_REGISTERED; }
u32 rnet_netlink_cb_portid(const struct sk_buff *skb) { return NETLINK_CB(skb).portid; }
void rnet_nlmsg_free(struct sk_buff *skb) { nlmsg_free(skb); }
struct nlattr *rnet_nla_nest_start(struct sk_buff *skb, int type) { return nla_nest_start(skb, type); }
int rnet_nla_nest_end(struct sk_buff *skb, struct nlattr *start) { return nla_nest_end(skb, start); }
void rnet_nla_nest_cancel(struct sk_buff *skb, struct nlattr *start) { nla_nest_cancel(skb, start); }
