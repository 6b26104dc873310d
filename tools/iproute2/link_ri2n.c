// SPDX-License-Identifier: GPL-2.0
/*
 * iproute2's ri2n link kind: `ip link add ri2n0 type ri2n hbspan 500`,
 * `ip link set ri2n0 type ri2n fast_tout 10`, `ip -d link show ri2n0`.
 *
 * ip(8) loads link_KIND.so from its library directory (IP_LIB_DIR, else
 * /usr/lib/x86_64-linux-gnu/ip on Debian) and takes KIND_link_util from
 * it; a slave's kind is "ri2n_slave", so link_ri2n_slave.so is a link to
 * this file. The ip binary exports the helpers used here; struct link_util and
 * the print enums are copied from iproute2's ip/ip_common.h, color.h and
 * json_print.h, the same from 6.1 (Debian 12) to 6.15 (Debian 13).
 *
 * The kernel checks every value and says why it refuses one; this parser
 * only turns names into attributes.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "../../include/uapi/linux/ri2n.h"

struct link_util {
	struct link_util *next;
	const char *id;
	int maxattr;
	int (*parse_opt)(struct link_util *, int, char **, struct nlmsghdr *);
	void (*print_opt)(struct link_util *, FILE *, struct rtattr *[]);
	void (*print_xstats)(struct link_util *, FILE *, struct rtattr *);
	void (*print_help)(struct link_util *, int, char **, FILE *);
	int (*parse_ifla_xstats)(struct link_util *, int, char **);
	int (*print_ifla_xstats)(struct nlmsghdr *, void *);
};

enum output_type { PRINT_FP = 1, PRINT_JSON = 2, PRINT_ANY = 4 };
enum color_attr { COLOR_NONE = 6 };

/* Exported by ip. */
int addattr32(struct nlmsghdr *n, int maxlen, int type, uint32_t data);
int get_u32(uint32_t *val, const char *arg, int base);
int print_color_uint(enum output_type t, enum color_attr color,
		     const char *key, const char *fmt, unsigned int value);

/* Room in ip's request (struct iplink_req), as its own link kinds pass it. */
#define REQ_ROOM 1024

/* An attribute and the name ip gives it. */
struct ri2n_attr_name {
	const char *name;
	int attr;
};

/* Names as in /sys/class/net/DEV/ri2n/ (core/params.rs, SPECS). */
static const struct ri2n_attr_name ri2n_params[] = {
	{ "ft_hthresh", IFLA_RI2N_FT_HTHRESH },
	{ "ft_lthresh", IFLA_RI2N_FT_LTHRESH },
	{ "slow_tout", IFLA_RI2N_SLOW_TOUT },
	{ "hbspan", IFLA_RI2N_HBSPAN },
	{ "hbweight", IFLA_RI2N_HBWEIGHT },
	{ "fast_tout", IFLA_RI2N_FAST_TOUT },
	{ "maxbuf", IFLA_RI2N_MAXBUF },
	{ "peer_mem", IFLA_RI2N_PEER_MEM },
	{ "held_mem", IFLA_RI2N_HELD_MEM },
	{ "loss_thresh", IFLA_RI2N_LOSS_THRESH },
	{ "one_switch", IFLA_RI2N_ONE_SWITCH },
};

#define NPARAMS (sizeof(ri2n_params) / sizeof(ri2n_params[0]))

static void ri2n_explain(FILE *f)
{
	fprintf(f, "Usage: ... ri2n [ PARAM VALUE ]...\n"
		   "PARAM := {");
	for (size_t i = 0; i < NPARAMS; i++)
		fprintf(f, " %s%s", ri2n_params[i].name, i + 1 < NPARAMS ? " |" : " }\n");
	fprintf(f, "Units, defaults and ranges: Documentation/ri2n.rst, Parameters.\n"
		   "peer_mem and one_switch change only while the device is down.\n");
}

static int ri2n_parse_opt(struct link_util *lu, int argc, char **argv,
			  struct nlmsghdr *n)
{
	(void)lu;
	while (argc > 0) {
		size_t i;
		uint32_t v;

		if (strcmp(*argv, "help") == 0) {
			ri2n_explain(stdout);
			return -1;
		}
		for (i = 0; i < NPARAMS; i++)
			if (strcmp(*argv, ri2n_params[i].name) == 0)
				break;
		if (i == NPARAMS) {
			fprintf(stderr, "ri2n: unknown parameter \"%s\"\n", *argv);
			ri2n_explain(stderr);
			return -1;
		}
		if (argc < 2) {
			fprintf(stderr, "ri2n: %s needs a value\n", *argv);
			return -1;
		}
		/* Decimal, as sysfs and the module parameters read it. */
		if (get_u32(&v, argv[1], 10)) {
			fprintf(stderr, "ri2n: %s: \"%s\" is not a number\n", *argv, argv[1]);
			return -1;
		}
		if (addattr32(n, REQ_ROOM, ri2n_params[i].attr, v))
			return -1;
		argc -= 2;
		argv += 2;
	}
	return 0;
}

static int ri2n_u32(struct rtattr *a, uint32_t *v)
{
	if (!a || RTA_PAYLOAD(a) < sizeof(*v))
		return 0;
	memcpy(v, RTA_DATA(a), sizeof(*v));
	return 1;
}

/* Prints each u32 attribute of `names` that `tb` has, as "name value". */
static void ri2n_print_u32s(const struct ri2n_attr_name *names, size_t n, struct rtattr *tb[])
{
	for (size_t i = 0; i < n; i++) {
		char fmt[32];
		uint32_t v;

		if (!ri2n_u32(tb[names[i].attr], &v))
			continue;
		snprintf(fmt, sizeof(fmt), "%s %%u ", names[i].name);
		print_color_uint(PRINT_ANY, COLOR_NONE, names[i].name, fmt, v);
	}
}

static void ri2n_print_opt(struct link_util *lu, FILE *f, struct rtattr *tb[])
{
	uint32_t v;

	(void)lu;
	(void)f;
	if (!tb)
		return;
	if (ri2n_u32(tb[IFLA_RI2N_SLAVES], &v))
		print_color_uint(PRINT_ANY, COLOR_NONE, "slaves", "slaves %u ", v);
	if (ri2n_u32(tb[IFLA_RI2N_PEERS], &v))
		print_color_uint(PRINT_ANY, COLOR_NONE, "peers", "peers %u ", v);
	if (ri2n_u32(tb[IFLA_RI2N_VERSION], &v))
		print_color_uint(PRINT_ANY, COLOR_NONE, "version", "version %u ", v);
	ri2n_print_u32s(ri2n_params, NPARAMS, tb);
}

static void ri2n_print_help(struct link_util *lu, int argc, char **argv, FILE *f)
{
	(void)lu;
	(void)argc;
	(void)argv;
	ri2n_explain(f);
}

struct link_util ri2n_link_util = {
	.id = "ri2n",
	.maxattr = IFLA_RI2N_MAX,
	.parse_opt = ri2n_parse_opt,
	.print_opt = ri2n_print_opt,
	.print_help = ri2n_print_help,
};

static void ri2n_slave_print_opt(struct link_util *lu, FILE *f, struct rtattr *tb[])
{
	static const struct ri2n_attr_name attrs[] = {
		{ "link", IFLA_RI2N_SLAVE_LINK },
		{ "carrier", IFLA_RI2N_SLAVE_CARRIER },
		{ "peers_up", IFLA_RI2N_SLAVE_PEERS_UP },
		{ "peers_down", IFLA_RI2N_SLAVE_PEERS_DOWN },
	};

	(void)lu;
	(void)f;
	if (tb)
		ri2n_print_u32s(attrs, sizeof(attrs) / sizeof(attrs[0]), tb);
}

struct link_util ri2n_slave_link_util = {
	.id = "ri2n_slave",
	.maxattr = IFLA_RI2N_SLAVE_MAX,
	.print_opt = ri2n_slave_print_opt,
};
