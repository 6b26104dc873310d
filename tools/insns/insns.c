// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin that counts the guest instructions executed per
 * translation block, for scripts/insns-lab.sh: how many instructions a
 * round trip costs, and in which kernel function, without the timing noise
 * of a guest under TCG (where an interrupts-off stretch is charged to
 * whoever turns them back on).
 *
 *   -plugin insns.so,ctl=PATH
 *
 * Every 50 ms the plugin looks for the file PATH; when it exists, it reads
 * an output path from it, writes there one line "vaddr insns execs" (hex,
 * decimal, decimal) per block executed so far, and removes PATH to say it
 * is done. Counts only grow, so two snapshots bracket a measurement.
 *
 * QEMU installs no qemu-plugin.h on Debian; the few entry points used are
 * declared here, as in QEMU's include/qemu/qemu-plugin.h (plugin API 2,
 * which QEMU 9 and 10 accept).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
typedef struct qemu_info_t qemu_info_t;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
		void (*cb)(qemu_plugin_id_t, struct qemu_plugin_tb *));
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
		void (*cb)(unsigned int vcpu, void *udata),
		enum qemu_plugin_cb_flags flags, void *udata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);

__attribute__((visibility("default"))) int qemu_plugin_version = 2;

/* One entry per (start address, length): a block retranslated after a
 * flush lands on its old entry, so its count carries on. */
struct block {
	uint64_t vaddr;
	uint64_t insns;
	uint64_t execs;
};

#define TABLE_BITS 21
#define TABLE_SIZE (1u << TABLE_BITS)
static struct block *table;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static char ctl_path[4096];

static void on_exec(unsigned int vcpu, void *udata)
{
	struct block *b = udata;

	(void)vcpu;
	__atomic_fetch_add(&b->execs, 1, __ATOMIC_RELAXED);
}

static struct block *lookup(uint64_t vaddr, uint64_t insns)
{
	uint64_t h = (vaddr ^ (insns << 56)) * 0x9e3779b97f4a7c15ull;
	uint32_t i = h >> (64 - TABLE_BITS);

	for (uint32_t n = 0; n < TABLE_SIZE; n++, i = (i + 1) & (TABLE_SIZE - 1)) {
		struct block *b = &table[i];

		if (b->insns == 0) {
			b->vaddr = vaddr;
			__atomic_store_n(&b->insns, insns, __ATOMIC_RELEASE);
			return b;
		}
		if (b->vaddr == vaddr && b->insns == insns)
			return b;
	}
	return NULL; /* full: the block goes uncounted */
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t insns = qemu_plugin_tb_n_insns(tb);
	struct block *b;

	(void)id;
	if (insns == 0)
		return;
	pthread_mutex_lock(&table_lock);
	b = lookup(qemu_plugin_tb_vaddr(tb), insns);
	pthread_mutex_unlock(&table_lock);
	if (b)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, on_exec, QEMU_PLUGIN_CB_NO_REGS, b);
}

static void snapshot(const char *out)
{
	char tmp[4200];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.part", out);
	f = fopen(tmp, "w");
	if (!f)
		return;
	for (uint32_t i = 0; i < TABLE_SIZE; i++) {
		struct block *b = &table[i];
		uint64_t insns = __atomic_load_n(&b->insns, __ATOMIC_ACQUIRE);
		uint64_t execs = __atomic_load_n(&b->execs, __ATOMIC_RELAXED);

		if (insns && execs)
			fprintf(f, "%llx %llu %llu\n", (unsigned long long)b->vaddr,
				(unsigned long long)insns, (unsigned long long)execs);
	}
	fclose(f);
	rename(tmp, out);
}

static void *watch(void *arg)
{
	(void)arg;
	for (;;) {
		char out[4096];
		FILE *f = fopen(ctl_path, "r");

		if (f) {
			if (fgets(out, sizeof(out), f)) {
				out[strcspn(out, "\n")] = 0;
				snapshot(out);
			}
			fclose(f);
			unlink(ctl_path);
		}
		usleep(50000);
	}
	return NULL;
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	pthread_t t;

	(void)info;
	for (int i = 0; i < argc; i++)
		if (!strncmp(argv[i], "ctl=", 4))
			snprintf(ctl_path, sizeof(ctl_path), "%s", argv[i] + 4);
	if (!ctl_path[0]) {
		fprintf(stderr, "insns: needs ctl=PATH\n");
		return -1;
	}
	table = calloc(TABLE_SIZE, sizeof(*table));
	if (!table || pthread_create(&t, NULL, watch, NULL))
		return -1;
	pthread_detach(t);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	return 0;
}
