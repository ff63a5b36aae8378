/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Command-line values shared by the subcommands. Each parser prints a
 * one-line error naming the option and the bad value, and returns -EINVAL.
 */
#ifndef __PMBPF_OPTIONS_H
#define __PMBPF_OPTIONS_H

#include <sys/types.h>
#include <linux/types.h>
#include "session.h"

/* -e LIST into s->events; an unknown name lists the valid ones. */
int options__events(const char *list, struct session_opts *s);
/*
 * Without -e: DEFAULT_EVENTS where a PMU counts, else (one line saying so)
 * DEFAULT_SW_EVENTS, as perf does.
 */
int options__default_events(struct session_opts *s);
/* An interval longer than an hour would show nothing for too long. */
#define INTERVAL_MAX_NS 3600000000000ULL
/* -i: a duration within [min_ns, max_ns] (max 0: INTERVAL_MAX_NS); -d: any duration. */
int options__interval(const char *arg, __u64 min_ns, __u64 max_ns, __u64 *ns);
int options__duration(const char *arg, __u64 *ns);
int options__pid(const char *arg, pid_t *pid);
int options__max_procs(const char *arg, __u32 *max);
/*
 * The options every collecting subcommand takes the same way: -e, -p, -G
 * (resolved into cgroup_buf), -m, --raw-tp ('R') and -v. Returns 1 when c
 * was one of them, 0 when it is not, -EINVAL on a bad value.
 */
int options__session(int c, const char *arg, struct session_opts *s, char *cgroup_buf, size_t len);

#endif
