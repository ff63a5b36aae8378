/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Facts about the host from /proc. Its CPUs from /proc/cpuinfo, read once
 * for every user: -M's tables (metrics.c), stat's report (its CPU model),
 * doctor (the hypervisor flag). Its tasks and context switches, read at
 * each call.
 */
#ifndef __PMBPF_HOST_H
#define __PMBPF_HOST_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

struct host_cpu {
	char vendor[32]; /* vendor_id (x86); "" where there is none */
	int family; /* cpu family; -1 where there is none */
	int model; /* model; -1 where there is none */
	char model_name[256]; /* model name; "" where there is none (arm64) */
	bool hypervisor; /* the flags name hypervisor (x86: a guest) */
};

/* The first CPU's block of a /proc/cpuinfo text into h. */
void host_cpu__parse(struct host_cpu *h, const char *text);
/* /proc/cpuinfo's first CPU, read at the first call (all unknown when it cannot be read). */
const struct host_cpu *host__cpu(void);
/* Live processes (threads: threads) on the host now, from /proc; -1 if unreadable. */
long host__live_tasks(bool threads);
/* /proc/stat's ctxt: context switches on every CPU since boot; 0 if unreadable. */
__u64 host__switches(void);
/*
 * Thread tid of process pid is there, not a zombie, and (start_ns not 0)
 * started at start_ns (task_struct.start_time: CLOCK_MONOTONIC).
 */
bool host__thread_alive(pid_t pid, pid_t tid, __u64 start_ns);

#endif /* __PMBPF_HOST_H */
