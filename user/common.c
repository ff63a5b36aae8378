// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <poll.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include "commands.h"
#include "util.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	exiting = 1;
}

int signals__setup(void)
{
	/*
	 * SA_RESTART: a signal while output blocks on a full pipe must not cut
	 * a record; the interval sleep (clock_nanosleep) still wakes up, since
	 * it is never restarted.
	 */
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL))
		return -errno;
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

/* The first failed write to stdout, kept for stdout__close(). */
static int stdout_err;

/* The write end of a pipe or socket whose reader has gone reports POLLERR. */
static bool reader_gone(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLERR);
}

int stream__error(FILE *f)
{
	int err = 0, saved = errno;

	if (fflush(f))
		err = -errno;
	else if (ferror(f))
		/* an earlier write failed, and stdio dropped its data */
		err = saved ? -saved : -EIO;
	if (err && err != -EPIPE && reader_gone(fileno(f)))
		err = -EPIPE;
	if (err && f == stdout && !stdout_err)
		stdout_err = err;
	return err;
}

void write_error__exit(int err)
{
	sigset_t set;

	if (err != -EPIPE)
		return;
	/* A reader that went away ends us as it would a program that kept SIGPIPE. */
	fflush(stderr);
	signal(SIGPIPE, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(SIGPIPE);
	_exit(128 + SIGPIPE);
}

void stdout__close(void)
{
	int err = stdout_err;

	if (fclose(stdout) && !err)
		err = -errno;
	if (!err)
		return;
	write_error__exit(err);
	pr_err("cannot write to standard output: %s\n", strerror(-err));
	_exit(1);
}

static bool cap_effective(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1U << (cap % 32));
}

int caps__read(struct caps *c)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	c->admin = cap_effective(data, CAP_SYS_ADMIN);
	c->bpf = cap_effective(data, CAP_BPF);
	c->perfmon = cap_effective(data, CAP_PERFMON);
	return 0;
}

const char *perm__why(char *buf, size_t len)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int paranoid = 2;
	struct caps c;

	if (f) {
		if (fscanf(f, "%d", &paranoid) != 1)
			paranoid = 2;
		fclose(f);
	}
	if (caps__read(&c) || (!c.admin && !(c.perfmon && paranoid <= 2))) {
		snprintf(
			buf, len,
			"CPU-wide counters need CAP_PERFMON and kernel.perf_event_paranoid <= 2 (above 2, as Debian's default 3, they need CAP_SYS_ADMIN)");
		return buf;
	}
	snprintf(
		buf, len,
		"pmbpf holds %s and kernel.perf_event_paranoid is %d: the kernel does not allow this event%s",
		c.admin ? "CAP_SYS_ADMIN" : "CAP_PERFMON", paranoid,
		c.admin ? " to anyone" : " without CAP_SYS_ADMIN");
	return buf;
}

int privileges__check(void)
{
	struct caps c;
	bool bpf, perfmon;

	if (caps__read(&c))
		return 0; /* cannot tell: let the kernel decide */
	if (c.admin || (c.bpf && c.perfmon))
		return 0;
	bpf = c.bpf;
	perfmon = c.perfmon;
	pr_err("missing capabilit%s %s%s%s: run as root or grant CAP_BPF and CAP_PERFMON\n",
	       !bpf && !perfmon ? "ies" : "y", bpf ? "" : "CAP_BPF",
	       !bpf && !perfmon ? " and " : "", perfmon ? "" : "CAP_PERFMON");
	return -EPERM;
}
