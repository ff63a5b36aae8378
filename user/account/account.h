/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Accounting: the kernel's cumulative per-process counts and its exit
 * records turned into the rows of one interval, and the cgroup roll-up.
 *
 * - Nothing is lost between reads: a row is the difference between this
 *   read's cumulative counts and the previous one's.
 * - A process that exits is reported once, with its final counts, whether
 *   its exit record comes alone or together with its last map entry.
 * - PID reuse is told apart by the group leader's start time.
 * - Counts credited to a process after its exit record (a residue) are
 *   reported as exited and its entry deleted; so are entries the kernel
 *   marked dead (PMBPF_F_DEAD) when it could not send the record.
 * - A process that moved between cgroups has an entry in each; the kernel
 *   deletes the one it exited in, the others are deleted here.
 * - Run-queue maxima count only in the read generation they were seen in.
 * - With per-thread entries, all of the above holds per thread, and a
 *   process's row is the exact sum of its threads' rows. A thread other
 *   than the main one that calls exec takes the process's id when the old
 *   main thread dies (de_thread()): its entry under that id is live, not a
 *   residue, and the entry of its old id, which gets no exit record, is
 *   reported exited (thread_running tells them apart).
 *
 * No libbpf, no system call: the caller reads the counts map and the ring
 * buffer, feeds them in, and deletes from the map the keys listed by
 * account__deletions(). Cgroup paths come from the caller's callbacks and
 * are copied into the snapshot.
 */
#ifndef __PMBPF_ACCOUNT_H
#define __PMBPF_ACCOUNT_H

#include <stddef.h>
#include <linux/types.h>
#include "pmbpf.h"
#include "snapshot.h"

struct account_opts {
	int nr_cpus; /* an entry's values: nr_cpus slots of stride bytes */
	size_t stride;
	size_t value_size; /* of a slot: a pmbpf_counts cut after its counting slots (0: whole) */
	int nr_events;
	int slot[PMBPF_MAX_EVENTS]; /* counter slot of each event, -1 when not counting */
	/* Path of a cgroup id below the cgroup2 mount, or NULL; valid until the next call. */
	const char *(*cgroup_path)(void *ctx, __u64 id);
	/* Id of the parent of the cgroup at path (0: root or unknown), depth below the root. */
	__u64 (*cgroup_parent)(void *ctx, const char *path, int *depth);
	/* --threads: the name of process pid into buf, or false; may be NULL. */
	bool (*process_comm)(void *ctx, __u32 pid, char *buf, size_t len);
	/*
	 * --threads: thread tid of process pid exists, is not a zombie, and
	 * (start_ns not 0) has the start time start_ns (a
	 * pmbpf_counts.start_ns); may be NULL.
	 */
	bool (*thread_running)(void *ctx, __u32 pid, __u32 tid, __u64 start_ns);
	void *ctx;
	/*
	 * Entries are threads (pmbpf_key.tid): their rows go to
	 * snapshot.threads, and each process's row is the sum of its threads'.
	 */
	bool threads;
};

struct account;

struct account *account__new(const struct account_opts *o);
void account__free(struct account *a);
/* A read begins: generation gen (one more than the previous), rows go to snap. */
void account__begin(struct account *a, struct snapshot *snap, __u64 gen);
/* An entry of the counts map: its values on every CPU (account_opts.nr_cpus, stride). */
int account__entry(struct account *a, const struct pmbpf_key *key, const void *vals);
/* The same with nr_cpus values stride bytes apart (the idle task's per-CPU counts). */
int account__entry_cpus(struct account *a, const struct pmbpf_key *key, const void *vals,
			int nr_cpus, size_t stride);
/*
 * An entry's nr_cpus values (stride bytes apart) summed into *sum as a row
 * reads them (account__entry_cpus()). fast: one value (the shared map's) is
 * copied, not summed; tests/unit/test_account.c holds the two equal.
 */
void account__sum_cpus(const struct account *a, const void *vals, int nr_cpus, size_t stride,
		       struct pmbpf_counts *sum, bool fast);
/* A hint: key's entry comes soon (account__entry); its state starts loading. */
void account__prefetch(const struct account *a, const struct pmbpf_key *key);
/* An exit record from the ring buffer (len bytes). */
int account__exit(struct account *a, const void *data, size_t len);
/* The map and the exit records are read: the exited processes' rows. */
int account__settle(struct account *a);
/* The cgroup roll-up; entries gone from the map without an exit record are forgotten. */
int account__finish(struct account *a);
/* Keys to delete from the counts map, listed since the last clear. */
const struct pmbpf_key *account__deletions(const struct account *a, size_t *nr);
void account__deletions_clear(struct account *a);
/* Entries tracked (present in the map at the latest reads). */
size_t account__tracked(const struct account *a);
/* Entries that disappeared without an exit record, since the start. */
__u64 account__vanished(const struct account *a);

#endif
