/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Live CPI outliers (the rules are in cpi.h) for top and serve: each
 * snapshot is one interval of a detector of cgroups, judged on their own
 * processes (their `self` figures, as `pmbpf cpi` judges a record) and
 * named by path, and, where asked, of one of processes, named "PID comm".
 * What the last interval flagged stays until the next update. The signal
 * is the CPI where cycles and instructions count, else the mean run-queue
 * wait (cpi__signal()). Pure: no I/O.
 */
#ifndef __PMBPF_CPI_LIVE_H
#define __PMBPF_CPI_LIVE_H

#include <stdbool.h>
#include <linux/types.h>
#include "cpi.h"
#include "snapshot.h"

struct cpi_live;

/* procs: processes too (top's process view). NULL and errno EINVAL or ENOMEM. */
struct cpi_live *cpi_live__new(const struct cpi_opts *o, bool procs);
void cpi_live__free(struct cpi_live *l);
/* One interval. 0 or -ENOMEM. */
int cpi_live__update(struct cpi_live *l, const struct snapshot *snap);
enum cpi_signal cpi_live__signal(const struct cpi_live *l);
const struct cpi_opts *cpi_live__opts(const struct cpi_live *l);
/* The detector of cgroups: its names (cpi__state()) and outliers (cpi__outlier()). */
const struct cpi_detector *cpi_live__cgroups(const struct cpi_live *l);
/* The last interval's outlier of a cgroup (its path) or of a process; NULL: none. */
const struct cpi_outlier *cpi_live__cgroup(const struct cpi_live *l, const char *path);
const struct cpi_outlier *cpi_live__process(const struct cpi_live *l, __u32 pid);
/* The figures of f (a cgroup's self, or a process's) that the detector samples. */
void cpi_live__figures(const struct snapshot *snap, const struct figures *f,
		       struct cpi_figures *out);

#endif
