/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* User names of processes for `pmbpf top`, read once per process. */
#ifndef __PMBPF_TOP_USER_H
#define __PMBPF_TOP_USER_H

#include <linux/types.h>

struct top_users;

/* proc_root: "/proc" (tests may point it elsewhere). NULL on ENOMEM. */
struct top_users *top_users__new(const char *proc_root);
/*
 * Name of the real uid of pid (from PROC/PID/status), cached per process
 * (pid and start time); "-" when the process is gone. The string lives as
 * long as the cache.
 */
const char *top_users__name(struct top_users *u, __u32 pid, __u64 start_ns);
/* End of an interval: forget processes not seen in the last few. */
void top_users__next_gen(struct top_users *u);
void top_users__free(struct top_users *u);

#endif
