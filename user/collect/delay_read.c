// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --delays: the read of the kernel's delays map (delay_read.h). The pairs
 * are slots of an array (delay_slots) mapped here: a read walks them in
 * this process's memory and takes the live ones whose generation is the
 * last read's or later (every live one on the first read, or after a
 * failed one), with no system call and no hash lookup per pair (it was an
 * iterator that looked each changed pair up in a hash: 3.2 ms per refresh
 * at 10,000 active processes, docs/benchmarks.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "pmbpf.h" /* before the skeleton, which names its structs */
#include "pmbpf.skel.h"
#include "delay_read.h"
#include "util.h"

void delay_reader__size(struct pmbpf_bpf *skel, bool on, int nr_cpus)
{
	__u32 n = on ? DELAY_MAP_ENTRIES : 1;

	(void)nr_cpus; /* nothing of the pairs is per CPU */
	/* without delays the maps are made tiny (the programs refer to them) */
	skel->rodata->delay_on = on;
	bpf_map__set_max_entries(skel->maps.delay_index, n);
	bpf_map__set_max_entries(skel->maps.delay_slots, n);
	bpf_map__set_max_entries(skel->maps.delay_free, n);
}

int delay_reader__init(struct delay_reader *r, struct pmbpf_bpf *skel)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int fd = bpf_map__fd(skel->maps.delay_slots);
	__u32 i;
	void *mem;

	memset(r, 0, sizeof(*r));
	r->index_fd = bpf_map__fd(skel->maps.delay_index);
	r->free_fd = bpf_map__fd(skel->maps.delay_free);
	r->max = bpf_map__max_entries(skel->maps.delay_slots);
	if (bpf_map__value_size(skel->maps.delay_slots) != sizeof(struct pmbpf_delay_slot))
		return -EINVAL;
	r->len = (r->max * sizeof(struct pmbpf_delay_slot) + page - 1) / page * page;
	/* writable: a deletion marks its slot freed */
	mem = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED) {
		int err = -errno;

		pr_err("cannot map the delays map's slots: %s\n", strerror(-err));
		return err;
	}
	r->slots = mem;
	/* a stack: the lowest slots are taken first */
	for (i = r->max; i-- > 0;)
		if (bpf_map_update_elem(r->free_fd, NULL, &i, BPF_ANY)) {
			int err = -errno;

			pr_err("cannot fill the delays map's free slots: %s\n", strerror(-err));
			return err;
		}
	r->acct = delay_acct__new();
	return r->acct ? 0 : -ENOMEM;
}

void delay_reader__begin(struct delay_reader *r, struct pmbpf_bpf *skel)
{
	/* the last generation was not read (a collection failed): every pair */
	if (r->begun)
		r->read = false;
	r->begun = true;
	/* pairs added to from here on are marked for the next read too (delay.bpf.h) */
	r->min = (__u32)skel->bss->delay_gen;
	skel->bss->delay_gen++;
}

/*
 * The live slots that grew since the last read (r->read) or all of them,
 * to the accounting. Each is copied once while the kernel may add to it;
 * a copy of a slot freed or made again meanwhile is dropped.
 */
static int walk(struct delay_reader *r)
{
	struct pmbpf_delay_slot copy;
	__u32 i;
	int err;

	for (i = 0; i < r->max; i++) {
		const struct pmbpf_delay_slot *sl = &r->slots[i];

		if (__atomic_load_n(&sl->state, __ATOMIC_ACQUIRE) != PMBPF_DELAY_LIVE)
			continue;
		if (r->read && (__s32)(__atomic_load_n(&sl->gen, __ATOMIC_RELAXED) - r->min) < 0)
			continue; /* not added to since the last read */
		memcpy(&copy, sl, sizeof(copy));
		__atomic_thread_fence(__ATOMIC_ACQUIRE); /* the copy before the checks below */
		if (__atomic_load_n(&sl->state, __ATOMIC_RELAXED) != PMBPF_DELAY_LIVE ||
		    memcmp(&copy.k, &sl->k, sizeof(copy.k)))
			continue;
		err = delay_acct__entry(r->acct, i, &copy.k, &copy.v);
		if (err)
			return err;
	}
	return 0;
}

/* A dead pair out of the index, its slot marked freed, given back after the next flush. */
static void delete_pair(struct delay_reader *r, const struct delay_dead *d)
{
	__u32 slot, *t;

	if (d->slot >= r->max || bpf_map_lookup_elem(r->index_fd, &d->k, &slot) ||
	    slot != d->slot || bpf_map_delete_elem(r->index_fd, &d->k))
		return;
	__atomic_store_n(&r->slots[slot].state, PMBPF_DELAY_FREED, __ATOMIC_RELEASE);
	t = array__room(r->freed, r->nr_freed, &r->cap_freed, sizeof(*t));
	if (!t)
		return; /* the slot is lost to the map */
	r->freed = t;
	r->freed[r->nr_freed++] = slot;
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
	const struct delay_dead *dead;
	size_t nr_dead, i;
	int err;

	(void)skel;
	/*
	 * Slots freed at the last read: every CPU flushed since, so no program
	 * that found one in the index before its deletion still adds to it.
	 */
	for (i = 0; i < r->nr_freed; i++)
		if (bpf_map_update_elem(r->free_fd, NULL, &r->freed[i], BPF_ANY))
			pr_err("cannot give back a slot of the delays map: %s\n", strerror(errno));
	r->nr_freed = 0;
	r->begun = false;
	err = walk(r);
	r->read = !err; /* after a failed read, every pair again */
	if (err) {
		pr_err("cannot read delays map: %s\n", strerror(-err));
		return err;
	}
	err = delay_acct__finish(r->acct, snap, cgroup_path, proc_comm, ctx, &dead, &nr_dead);
	for (i = 0; i < nr_dead; i++)
		delete_pair(r, &dead[i]);
	if (err)
		pr_err("cannot account delays: %s\n", strerror(-err));
	return err;
}

void delay_reader__free(struct delay_reader *r)
{
	if (r->slots)
		munmap(r->slots, r->len);
	free(r->freed);
	delay_acct__free(r->acct);
	memset(r, 0, sizeof(*r));
}
