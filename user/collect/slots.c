// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The shared counts map's slots: mapped, walked, deleted (slots.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "slots.h"
#include "util.h"

int slot_reader__init(struct slot_reader *r, int slots_fd, int index_fd, int free_fd, __u32 max,
		      __u32 value_size)
{
	memset(r, 0, sizeof(*r));
	r->elem = ((size_t)value_size + 7) & ~(size_t)7; /* the kernel's array stride */
	r->max = max;
	r->fd = slots_fd;
	r->index_fd = index_fd;
	r->free_fd = free_fd;
	r->page = (size_t)sysconf(_SC_PAGESIZE);
	r->copy = calloc(1, r->elem > sizeof(*r->copy) ? r->elem : sizeof(*r->copy));
	return r->copy ? 0 : -ENOMEM;
}

/*
 * The first n slots mapped (at least). The kernel maps every page of a
 * mapping at once (they count in this process's RSS): so only the slots
 * used, and more only as more are used, doubling.
 */
static int slots_map(struct slot_reader *r, __u32 n)
{
	size_t full = (r->elem * r->max + r->page - 1) / r->page * r->page;
	size_t want = (r->elem * n + r->page - 1) / r->page * r->page, len;
	void *mem;

	if (want <= r->len)
		return 0;
	len = r->len ? 2 * r->len : 64 * r->page;
	len = len < want ? want : len > full ? full : len;
	/* writable: userspace's deletions mark the slot */
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (mem == MAP_FAILED) {
		int err = -errno;

		pr_err("cannot map the counts map's slots: %s\n", strerror(-err));
		return err;
	}
	if (r->mem)
		munmap(r->mem, r->len);
	r->mem = mem;
	r->len = len;
	r->nr_mapped = len / r->elem < r->max ? (__u32)(len / r->elem) : r->max;
	return 0;
}

static struct pmbpf_slot *slot_at(const struct slot_reader *r, __u32 i)
{
	return (struct pmbpf_slot *)((char *)r->mem + (size_t)i * r->elem);
}

static bool slot_is_live(const struct pmbpf_slot *sl)
{
	return __atomic_load_n(&sl->c.state, __ATOMIC_ACQUIRE) == PMBPF_SLOT_LIVE;
}

int slot_reader__walk(struct slot_reader *r, __u64 used, slot_fn fn, void *ctx)
{
	__u32 i, n = used < r->max ? (__u32)used : r->max;
	int err = slots_map(r, n);

	if (err)
		return err;
	for (i = 0; i < n; i++) {
		const struct pmbpf_slot *sl = slot_at(r, i);

		if (!slot_is_live(sl))
			continue; /* unused, being made, or freed */
		/* the kernel adds to it meanwhile: one copy, read once */
		memcpy(r->copy, sl, r->elem);
		__atomic_thread_fence(__ATOMIC_ACQUIRE); /* the copy before the checks below */
		/*
		 * Freed and made again for another process during the copy (an
		 * exit, then a new entry, within it): a mixed copy, dropped; the
		 * new entry is read at the next walk.
		 */
		if (!slot_is_live(sl) || memcmp(&r->copy->key, &sl->key, sizeof(sl->key)) ||
		    r->copy->c.start_ns != __atomic_load_n(&sl->c.start_ns, __ATOMIC_RELAXED))
			continue;
		err = fn(ctx, &r->copy->key, &r->copy->c, i);
		if (err)
			return err;
	}
	return 0;
}

const struct pmbpf_key *slot_reader__key(const struct slot_reader *r, __u32 i)
{
	return i < r->nr_mapped ? &slot_at(r, i)->key : NULL;
}

void slot_reader__delete(struct slot_reader *r, const struct pmbpf_key *key)
{
	__u32 slot;

	/* one step: the kernel may take the key out, give its slot back and make both again */
	if (bpf_map_lookup_and_delete_elem(r->index_fd, key, &slot) || slot >= r->max)
		return; /* the kernel took it out first, and gave the slot back */
	if (slots_map(r, slot + 1))
		return;
	__atomic_fetch_add(&slot_at(r, slot)->c.state, PMBPF_SLOT_FREED, __ATOMIC_RELEASE);
	if (bpf_map_update_elem(r->free_fd, NULL, &slot, BPF_ANY))
		pr_err("cannot give back a slot of the counts map: %s\n", strerror(errno));
}

void slot_reader__free(struct slot_reader *r)
{
	if (r->mem)
		munmap(r->mem, r->len);
	free(r->copy);
	memset(r, 0, sizeof(*r));
}
