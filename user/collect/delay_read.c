// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --delays: the read of the kernel's delays map (delay_read.h). Where the
 * shared counts map is used (tp_btf, 5.19+), a read takes the pairs on the
 * list of pairs added to in its generation (read_changed), or, on the first
 * read, after a failed one or when the list overflowed, walks the map for
 * the pairs whose generation is the last read's or later (read_delays).
 * Elsewhere a batch lookup reads every pair.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "pmbpf.h" /* before the skeleton, which names its structs */
#include "pmbpf.skel.h"
#include "delay_read.h"
#include "util.h"

/* Keys per element of the delay_changed map (its chunks: DELAY_CHUNK in delay.bpf.h). */
static __u32 chunk_keys(struct pmbpf_bpf *skel)
{
	return bpf_map__value_size(skel->maps.delay_changed) / sizeof(struct pmbpf_delay_key);
}

/*
 * Each CPU's lists of pairs added to share one map of a size that does not
 * grow with the possible CPUs (issue 35: only truly per-CPU state may):
 * room for the delays map's pairs twice (a list per parity), in whole
 * chunks, at least one chunk per CPU and parity. A CPU whose list fills has
 * that read walk every pair, as reads did before the lists: 8,192 keys per
 * CPU and parity with 2 possible CPUs, 64 with 192 (786 KB of lists either
 * way; 2.4 MB at 192 when each CPU had at least 256).
 */
void delay_reader__size(struct pmbpf_bpf *skel, bool on, int nr_cpus)
{
	__u32 chunk = chunk_keys(skel), cpus = nr_cpus > 0 ? nr_cpus : 1;
	__u32 total = DELAY_MAP_ENTRIES / chunk, per = total / cpus;

	if (!per)
		per = 1;
	/* without delays the maps are made tiny (the programs refer to them) */
	skel->rodata->delay_on = on;
	skel->rodata->delay_list_chunks = per;
	bpf_map__set_max_entries(skel->maps.delays, on ? DELAY_MAP_ENTRIES : 1);
	bpf_map__set_max_entries(skel->maps.delay_lists, on ? 2 * cpus : 1);
	bpf_map__set_max_entries(skel->maps.delay_changed,
				 on ? 2 * (per * cpus > total ? per * cpus : total) : 1);
}

int delay_reader__init(struct delay_reader *r, struct pmbpf_bpf *skel)
{
	int err = map_reader__init(&r->rd, bpf_map__fd(skel->maps.delays));

	if (err)
		return err;
	r->acct = delay_acct__new();
	if (!r->acct)
		return -ENOMEM;
	if (!bpf_program__autoload(skel->progs.read_delays))
		return 0;
	return iter_reader__attach(&r->all, skel->progs.read_delays, skel->maps.delays) ?:
		       iter_reader__attach(&r->changed, skel->progs.read_changed,
					   skel->maps.delay_changed);
}

void delay_reader__begin(struct delay_reader *r, struct pmbpf_bpf *skel)
{
	/* the last generation was not read (a collection failed): every pair */
	if (r->begun)
		r->read = false;
	r->begun = true;
	/* pairs added to from here on are marked for the next read too (delay.bpf.h) */
	skel->bss->delay_read_min = r->read ? skel->bss->delay_gen : 0;
	skel->bss->delay_gen++;
}

static int delay_entry(void *ctx, const void *key, const void *value, size_t stride)
{
	(void)stride;
	return delay_acct__entry(ctx, key, value);
}

/* The records (key, value) of an iterator's run, len bytes. */
static int take(struct delay_reader *r, const char *buf, size_t len)
{
	const size_t rec = sizeof(struct pmbpf_delay_key) + sizeof(struct pmbpf_delay_val);
	size_t i;
	int err = 0;

	for (i = 0; !err && i + rec <= len; i += rec)
		err = delay_acct__entry(r->acct, (const void *)(buf + i),
					(const void *)(buf + i + sizeof(struct pmbpf_delay_key)));
	return err;
}

/*
 * The pairs of the read generation (the one before delay_gen): its lists
 * (read and emptied either way: no CPU appends to them until the generation
 * after next), or on the first read, after a failed one or when a list was
 * full, a walk of the map.
 */
static int read_changes(struct delay_reader *r, struct pmbpf_bpf *skel)
{
	__u32 p = (skel->bss->delay_gen - 1) & 1;
	bool walk = !r->read || skel->bss->delay_list_over[p];
	size_t len;
	int err = iter_reader__run(&r->changed, &len);

	if (!err && !walk)
		err = take(r, r->changed.buf, len);
	skel->bss->delay_list_over[p] = 0;
	if (!err && walk)
		err = iter_reader__run(&r->all, &len) ?: take(r, r->all.buf, len);
	r->read = !err; /* after a failed read, every pair again */
	return err;
}

static void proc_comm(void *ctx, __u32 pid, char *buf, size_t len)
{
	(void)ctx;
	if (process__comm((pid_t)pid, buf, len))
		snprintf(buf, len, "?");
}

int delay_reader__read(struct delay_reader *r, struct pmbpf_bpf *skel, struct snapshot *snap,
		       const char *(*cgroup_path)(void *ctx, __u64 id), void *ctx)
{
	const struct pmbpf_delay_key *dead;
	size_t nr_dead, i;
	int fd = bpf_map__fd(skel->maps.delays);
	int err = r->all.link ? read_changes(r, skel) :
				map_reader__for_each(&r->rd, delay_entry, r->acct);

	r->begun = false;
	if (err) {
		pr_err("cannot read delays map: %s\n", strerror(err < 0 ? -err : ENOMEM));
		return err < 0 ? err : -ENOMEM;
	}
	err = delay_acct__finish(r->acct, snap, cgroup_path, proc_comm, ctx, &dead, &nr_dead);
	for (i = 0; i < nr_dead; i++)
		bpf_map_delete_elem(fd, &dead[i]);
	if (err)
		pr_err("cannot account delays: %s\n", strerror(-err));
	return err;
}

void delay_reader__free(struct delay_reader *r)
{
	iter_reader__free(&r->all);
	iter_reader__free(&r->changed);
	map_reader__free(&r->rd);
	delay_acct__free(r->acct);
	r->acct = NULL;
}
