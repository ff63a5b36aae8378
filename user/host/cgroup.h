/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __PMBPF_CGROUP_H
#define __PMBPF_CGROUP_H

#include <linux/types.h>

struct cgroup_cache;

/*
 * A cgroup's own figures from the kernel's cgroup2 files: CPU
 * quota throttling from cpu.stat (where cgroup2 has the cpu controller) and
 * the PSI totals of cpu.pressure, memory.pressure and io.pressure; what they
 * grew over the interval.
 */
enum cgroup_stat_index {
	CGS_NR_PERIODS, /* cpu.stat nr_periods: enforcement periods in which it ran */
	CGS_NR_THROTTLED, /* cpu.stat nr_throttled */
	CGS_THROTTLED_NS, /* cpu.stat throttled_usec, in ns */
	CGS_PSI_CPU_SOME_NS, /* cpu.pressure "some" total=, in ns */
	CGS_PSI_CPU_FULL_NS,
	CGS_PSI_MEMORY_SOME_NS,
	CGS_PSI_MEMORY_FULL_NS,
	CGS_PSI_IO_SOME_NS,
	CGS_PSI_IO_FULL_NS,
	CGS_NR,
};

struct cgroup_stat {
	__u64 v[CGS_NR]; /* by enum cgroup_stat_index */
	/*
	 * Bit i: v[i] is known. Not read (a cgroup not shown nor exported),
	 * no such file here (no cpu controller on cgroup2, no PSI), or no
	 * earlier reading of it to take the interval's growth from.
	 */
	__u32 have;
};

/* Find the cgroup2 mount point in mountinfo; returns 0 and fills buf. */
int cgroup__find_mount(const char *mountinfo, char *buf, size_t len);
/* The cgroup id (kernfs inode) of a directory; 0 on error with errno set. */
__u64 cgroup__id_of(const char *path);
/* Depth of an absolute cgroup2 directory below its mount (root: 0). */
int cgroup__level(const char *abs_path);

/*
 * Resolve a --cgroup argument (absolute path, path below the cgroup2 mount,
 * or a container id or unique prefix of 12+ hex digits where no such path
 * exists) to an absolute cgroup2 directory; prints a one-line error.
 */
int cgroup__resolve(const char *arg, char *buf, size_t len);

/*
 * Create a new cgroup named name below the cgroup2 mount, for a command to
 * run in; the absolute path goes to buf. An existing one is an error (EEXIST):
 * never share a cgroup with what another run left in it.
 */
int cgroup__create(const char *name, char *buf, size_t len);

struct cgroup_cache *cgroup_cache__new(void);
/*
 * Path of a cgroup id below the cgroup2 mount ("/" for the root), or NULL
 * when unknown (for instance removed before it was seen). Rescans the
 * hierarchy at most once per collection generation for unknown ids.
 */
const char *cgroup_cache__path(struct cgroup_cache *c, __u64 id, __u64 gen);
/*
 * Id of the parent of the cgroup at path (0 for the root or when unknown);
 * depth is set to the number of path components.
 */
__u64 cgroup_cache__parent(struct cgroup_cache *c, const char *path, int *depth);
void cgroup_cache__free(struct cgroup_cache *c);

/*
 * cpu.stat's nr_periods, nr_throttled and throttled_usec (in ns) into st
 * (enum cgroup_stat_index); the have bits of those found. Lines it does
 * not know are left alone.
 */
void cgroup_stat__parse_cpu(const char *text, struct cgroup_stat *st);
/*
 * A *.pressure file's "some" and "full" total= (us) into st->v[some] and
 * st->v[some + 1] in ns, with their have bits.
 */
void cgroup_stat__parse_pressure(const char *text, struct cgroup_stat *st, int some);

/*
 * The kernel's own per-cgroup figures (throttling from cpu.stat, the PSI
 * totals) read on demand: only for the cgroups a command shows or exports.
 * Each read keeps the cumulative values by cgroup id; a cgroup's figures in
 * a snapshot are what they grew since its previous read.
 */
struct cgroup_stats;

/*
 * keep_rounds: a cgroup's reading stays its earlier reading for that many
 * rounds of reads (cgroup_stats__end()). 1: only the round before (top:
 * a per-second figure never spans more than one interval); more (record,
 * serve: CGROUP_STATS_KEEP): a cgroup without a record in some intervals
 * (no task of it ran, throttled the whole interval) has their growth in
 * its next record, so that the sums over its records lose nothing.
 */
struct cgroup_stats *cgroup_stats__new(unsigned int keep_rounds);
#define CGROUP_STATS_KEEP 600
/*
 * Read the files of cgroup id (path below the cgroup2 mount) now and set
 * *out to their growth since this cgroup's previous read (a figure without
 * a previous read, or whose file is missing, is absent). Returns the
 * figures read (bits, 0: none).
 */
__u32 cgroup_stats__read(struct cgroup_stats *s, __u64 id, const char *path,
			 struct cgroup_stat *out);
/*
 * Read every cgroup below dir (an absolute cgroup2 directory; NULL: the
 * whole hierarchy) now, so that those in the first interval's snapshot
 * have an earlier reading and figures in it.
 */
void cgroup_stats__prime(struct cgroup_stats *s, const char *dir);
/* A round of reads ended: forget the cgroups not read for keep_rounds rounds. */
void cgroup_stats__end(struct cgroup_stats *s);
/* Files kept open between reads (doctor, self metrics, tests). */
size_t cgroup_stats__open_files(const struct cgroup_stats *s);
void cgroup_stats__free(struct cgroup_stats *s);

#endif
