/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A command run in a cgroup of its own, for pmbpf stat and pmbpf profile --
 * COMMAND: the kernel then follows its children however short-lived, and a
 * BPF cgroup filter takes the command and nothing else. Each pmbpf makes
 * one cgroup, pmbpf-stat-PID-START below the cgroup2 mount (the name stat
 * has always used, so that stale ones of either are found), and each run a
 * child run-N of it. SIGINT and SIGTERM are passed on to the command as
 * received; a second one kills every process of its cgroup.
 */
#ifndef __PMBPF_CMDRUN_H
#define __PMBPF_CMDRUN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

struct cmdrun {
	char cgroup[4200]; /* the run's cgroup, PARENT/run-N */
	__u64 cgroup_id;
	pid_t pid;
	int pidfd; /* -1 before Linux 5.3: waitpid() is polled */
	int forwarded; /* signals passed on so far */
	__u64 start_ns; /* CLOCK_MONOTONIC when the command was let go */
	__u64 wall_ns; /* from start_ns to its end, once it ended */
	int status; /* its wait status, once it ended */
	bool done;
};

/* SIGINT and SIGTERM set exiting and are counted, for passing them on. */
int cmdrun__signals_setup(void);
/* The last signal received (0: none). */
int cmdrun__last_signal(void);

/*
 * Remove empty cgroups of pmbpf runs that were killed, then make this
 * pmbpf's cgroup (pmbpf-stat-PID-START: no other process of this boot has
 * both); its path goes to buf. Prints a one-line error.
 */
int cmdrun__create_cgroup(char *buf, size_t len);
/* rmdir this pmbpf's cgroup and its run-N children; says so when processes hold it. */
void cmdrun__remove_cgroup(const char *path);
/*
 * pmbpf-stat-* cgroups whose pmbpf is gone (killed). remove: rmdir those
 * that are empty. cb (if not NULL) gets each one and whether it still holds
 * processes. Returns how many were found.
 */
int cmdrun__stale_cgroups(bool remove, void (*cb)(const char *path, bool busy, void *ctx),
			  void *ctx);

/*
 * Start argv in a new cgroup parent/run-index, born there (clone3
 * CLONE_INTO_CGROUP) where the kernel can, and wait until it has stopped
 * itself before its exec: what pmbpf counts from there on is the command's.
 * A command that cannot be moved into the cgroup or executed exits 127 after
 * saying why; one that ended before its exec is done at once. Returns 0, or
 * a negative errno after a one-line error (the child is then killed).
 */
int cmdrun__start(struct cmdrun *r, const char *parent, int index, char **argv);
/* Let the stopped command exec; its wall clock starts. 0 or a negative errno. */
int cmdrun__go(struct cmdrun *r);
/*
 * Pass on the signals received since the last call, then wait up to
 * timeout_ms for the command to end or for fd (if >= 0) to be readable.
 * Returns 1 once the command has ended (r->status, r->wall_ns set), 0 if not.
 */
int cmdrun__wait(struct cmdrun *r, int fd, int timeout_ms);
/* Kill the command and reap it: pmbpf cannot go on measuring it. */
void cmdrun__kill(struct cmdrun *r);
/* Close what the run holds and remove its cgroup; says so when processes hold it. */
void cmdrun__finish(struct cmdrun *r);

#endif
