/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The host's perf event sources as sysfs describes them
 * (/sys/bus/event_source/devices/<pmu>/{type,cpus,cpumask,format/,events/,caps/})
 * and its tracepoints (tracefs events/<subsystem>/<name>/id).
 */
#ifndef __PMBPF_PMU_H
#define __PMBPF_PMU_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#define PMU_NAME_LEN	64
#define PMU_FORMAT_BITS 4 /* bit ranges of one format term (config:0-7,32-35 has two) */
#define PMU_MAX_CPUS	4096

/* One format/ file: a term's place in config, config1 or config2. */
struct pmu_format {
	char name[32];
	int field; /* 0: config, 1: config1, 2: config2 */
	int nr;
	__u8 lo[PMU_FORMAT_BITS], hi[PMU_FORMAT_BITS];
};

/* One events/ file: a named encoding, with its .scale and .unit. */
struct pmu_alias {
	char name[PMU_NAME_LEN];
	char terms[128];
	double scale; /* 1 when there is no .scale file */
	char unit[16];
};

struct pmu {
	char name[PMU_NAME_LEN];
	__u32 type;
	bool core; /* "cpu", or a PMU with a cpus file (hybrid x86, Arm) */
	bool *cpus; /* CPUs it counts on (cpus or cpumask); NULL: every CPU */
	char cpulist[64];
	struct pmu_format *formats;
	int nr_formats;
	struct pmu_alias *aliases;
	int nr_aliases;
	int num_counters; /* caps/num_counters (general purpose), -1 where not exposed */
	int slots; /* caps/slots (Arm: dispatch slots per cycle), 0 where not exposed */
};

/*
 * Where sysfs and tracefs are: "/sys" and "/sys/kernel/tracing" unless a
 * test points them at a fake tree. Drops what was loaded.
 */
void pmu__set_roots(const char *sysfs, const char *tracefs);
/* Every PMU of the host, loaded on first use (sorted by name). */
const struct pmu *pmus__all(int *nr);
const struct pmu *pmu__find(const char *name);
/* Core PMUs: more than one on hybrid x86 and Arm big.LITTLE. */
int pmus__nr_core(void);
/* The core PMU that counts on cpu, or NULL (none, or a single "cpu" PMU without a cpus list). */
const struct pmu *pmu__core_of_cpu(int cpu);
bool pmu__has_cpu(const struct pmu *p, int cpu);
const struct pmu_alias *pmu__alias(const struct pmu *p, const char *name);
/*
 * Encode "term=value,term,..." (format terms, config/config1/config2, or
 * aliases of p) by OR-ing into cfg[0..2]. An alias sets *alias when given.
 * Returns 0, or -EINVAL with a one-line reason in err.
 */
int pmu__encode(const struct pmu *p, const char *terms, __u64 cfg[3],
		const struct pmu_alias **alias, char *err, size_t len);

/*
 * The single meaning of "the host has a PMU": a hardware cycles counter
 * opens (asked of the kernel once), or, where that is refused for lack of
 * permission, sysfs lists a core PMU.
 */
bool pmu__available(void);

/*
 * tracefs root, mounting tracefs at <root> if it is not mounted. NULL with
 * a reason in err when it cannot be found or mounted.
 */
const char *tracefs__root(char *err, size_t len);
/* Tracepoint id of sys:name, or -ENOENT/-errno with a reason in err. */
int tracepoint__id(const char *sys, const char *name, char *err, size_t len);
/* Call fn for each tracepoint (all subsystems when sys is NULL). */
void tracepoints__each(const char *sys, void (*fn)(const char *sys, const char *name, void *ctx),
		       void *ctx);

#endif
