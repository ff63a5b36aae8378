/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A read's roll-ups, once its rows are in the snapshot (account__finish()).
 */
#ifndef __PMBPF_ROLLUP_H
#define __PMBPF_ROLLUP_H

#include "account.h"
#include "snapshot.h"

/*
 * Per-cgroup figures: the processes of each cgroup summed (self), and rolled
 * up the hierarchy so that a parent includes its descendants (total). The
 * idle task (tgid 0, in the root cgroup) is no cgroup's work: it has a row
 * of its own but adds nothing to its cgroup. o: the cgroups' paths and parents.
 */
int rollup_cgroups(struct snapshot *snap, const struct account_opts *o);
/*
 * Per-thread entries: the rows made so far are threads'. They become
 * snapshot.threads, and each process (pid, cgroup, start) gets the sum of
 * its threads as its row, named after its leader thread (else
 * o->process_comm). The idle task and the overflow entry are no thread:
 * they stay rows only.
 */
int rollup_threads(struct snapshot *snap, const struct account_opts *o);
/* The path of each thread row's cgroup: its process row's (they share the id). */
void rollup_thread_cgroups(struct snapshot *snap);

#endif /* __PMBPF_ROLLUP_H */
