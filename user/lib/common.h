/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What every command shares below its own code: signals, write errors, privileges (common.c). */
#ifndef __PMBPF_COMMON_H
#define __PMBPF_COMMON_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

extern volatile sig_atomic_t exiting;

/*
 * SIGINT and SIGTERM set exiting. From then on, standard output or error
 * blocked for 500 ms by a reader that does not read is replaced by /dev/null
 * (one line at exit says so), so that a stop takes well under a second.
 */
int signals__setup(void);
/* An output file other than stdout (a FIFO) that must not hold a stop either. */
void signals__watch_output(int fd);
/* Descriptors 0-2 closed at start get /dev/null, read-only (writes fail). */
void std_fds__reserve(void);
/*
 * Write errors. stream__error() flushes f and returns 0 or the negative
 * errno of a write that failed (remembered when f is stdout); set errno to 0
 * before writing, since stdio keeps no error code of its own.
 * write_error__exit() ends the process quietly, as SIGPIPE would, when err
 * is -EPIPE (the reader went away), and returns otherwise. stdout__close(),
 * run at exit, closes stdout: a broken pipe ends as above, any other failed
 * write is reported in one line and makes the exit status 1.
 */
int stream__error(FILE *f);
void write_error__exit(int err);
void stdout__close(void);

struct caps {
	bool bpf, perfmon, admin; /* effective */
};

/* The calling thread's effective capabilities; -errno if they cannot be read. */
int caps__read(struct caps *c);
/*
 * Refuse early, in one line, when the capabilities needed to load BPF and
 * open per-CPU counters are missing. Returns 0 or -EPERM.
 */
int privileges__check(void);
/*
 * Why perf_event_open() refused an event with EPERM or EACCES, in a clause:
 * the privileges it lacks (CAP_PERFMON, perf_event_paranoid), or, when they
 * are all there, that the kernel does not allow this event. Returns buf.
 */
const char *perm__why(char *buf, size_t len);

/*
 * Above 2 (Debian's and Ubuntu's default 3), kernel.perf_event_paranoid makes
 * perf_event_open need CAP_SYS_ADMIN: CAP_PERFMON, all pmbpf.service holds,
 * is not enough. The one command that lowers it to the upstream default, now
 * and at every boot (sysctl -w prints the setting, in sysctl.d's syntax).
 * pmbpf never changes it itself: that is the admin's decision.
 */
#define PARANOID_FIX "sysctl -w kernel.perf_event_paranoid=2 | tee /etc/sysctl.d/50-pmbpf.conf"
/* kernel.perf_event_paranoid, or INT_MIN if it cannot be read. */
int perf_paranoid(void);

/*
 * Write all of buf to fd. Returns 0; -EPIPE, silently, when the reader has
 * gone; -EIO after printing what failed (ENOSPC, EIO, ...).
 */
int report__write(int fd, const char *what, const char *buf, size_t len);

#endif
