// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <linux/capability.h>
#include "common.h"
#include "util.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

volatile sig_atomic_t exiting;

/* The output that stayed blocked after a stop signal went to /dev/null. */
static volatile sig_atomic_t output_dropped;
/* An output file (profile -o FIFO) watched as standard output is, or -1. */
static volatile sig_atomic_t watched_fd = -1;

/*
 * After a stop signal, output blocked in a write (a reader that does not
 * read) must not keep us. Every STOP_CHECK_MS: when standard output or
 * error cannot take a byte and no write of ours completed for STOP_GRACE_MS,
 * it is replaced by /dev/null. The write blocked in it is restarted
 * (SA_RESTART) on the new descriptor and returns at once; what follows goes
 * nowhere. A reader that reads, however slowly, gets everything.
 */
#define STOP_GRACE_MS 500
#define STOP_CHECK_MS 100

/* Bytes written by this process so far (wchar of /proc/self/io), or -1. */
static long long bytes_written(void)
{
	char buf[512], *p;
	int fd = open("/proc/self/io", O_RDONLY | O_CLOEXEC);
	ssize_t n;
	long long v = 0;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, "wchar: ");
	if (!p)
		return -1;
	for (p += 7; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (*p - '0');
	return v;
}

static void on_stop_timer(int sig)
{
	static long long last = -1;
	static int stalled_ms;
	const int fds[] = { STDOUT_FILENO, STDERR_FILENO, watched_fd };
	int saved = errno, i, null = -1;
	long long now = bytes_written();

	stalled_ms = now == last ? stalled_ms + STOP_CHECK_MS : 0;
	last = now;
	for (i = 0; i < 3 && stalled_ms >= STOP_GRACE_MS; i++) {
		struct pollfd p = { .fd = fds[i], .events = POLLOUT };

		if (fds[i] < 0 || poll(&p, 1, 0) != 0)
			continue; /* writable, gone (POLLERR) or closed (POLLNVAL) */
		if (null < 0)
			null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (null >= 0 && dup2(null, fds[i]) == fds[i])
			output_dropped = 1;
	}
	if (null >= 0)
		close(null);
	errno = saved;
}

static void on_signal(int sig)
{
	struct itimerval t = {
		.it_value = { .tv_usec = STOP_CHECK_MS * 1000 },
		.it_interval = { .tv_usec = STOP_CHECK_MS * 1000 },
	};
	int saved = errno;

	if (!exiting)
		setitimer(ITIMER_REAL, &t, NULL);
	exiting = 1;
	errno = saved;
}

int signals__setup(void)
{
	/*
	 * SA_RESTART: a signal while output blocks on a full pipe must not cut
	 * a record; the interval sleep (clock_nanosleep) still wakes up, since
	 * it is never restarted.
	 */
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
	struct sigaction timer = { .sa_handler = on_stop_timer, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	sigemptyset(&timer.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL) ||
	    sigaction(SIGALRM, &timer, NULL))
		return -errno;
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

void signals__watch_output(int fd)
{
	watched_fd = fd;
}

void std_fds__reserve(void)
{
	int fd;

	/*
	 * A descriptor 0-2 closed at start would be taken by the first file,
	 * BPF map or perf event opened, and output written into it. Open
	 * /dev/null there read-only: the numbers are taken, and a write to a
	 * closed stdout or stderr still fails (EBADF), as it would have.
	 */
	for (fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF && open("/dev/null", O_RDONLY) != fd)
			_exit(2);
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
	if (output_dropped) {
		pr_err("output not read for %d ms after the stop signal: the rest was dropped\n",
		       STOP_GRACE_MS);
		return;
	}
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
	int paranoid = perf_paranoid();
	struct caps c;

	if (paranoid == INT_MIN)
		paranoid = 2;
	if (!caps__read(&c) && !c.admin && paranoid > 2) {
		/* what is missing, and the one command that gives it */
		snprintf(
			buf, len,
			"kernel.perf_event_paranoid is %d (above 2, Debian's default), where opening a perf event needs CAP_SYS_ADMIN and CAP_PERFMON is not enough; to count with CAP_PERFMON, as root: " PARANOID_FIX,
			paranoid);
		return buf;
	}
	if (caps__read(&c) || (!c.admin && !(c.perfmon && paranoid <= 2))) {
		snprintf(
			buf, len,
			"CPU-wide counters need CAP_PERFMON: run as root or grant it (AmbientCapabilities=CAP_BPF CAP_PERFMON, as pmbpf.service does)");
		return buf;
	}
	snprintf(
		buf, len,
		"pmbpf holds %s and kernel.perf_event_paranoid is %d: the kernel does not allow this event%s",
		c.admin ? "CAP_SYS_ADMIN" : "CAP_PERFMON", paranoid,
		c.admin ? " to anyone" : " without CAP_SYS_ADMIN");
	return buf;
}

int perf_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int v = INT_MIN;

	if (!f)
		return INT_MIN;
	if (fscanf(f, "%d", &v) != 1)
		v = INT_MIN;
	fclose(f);
	return v;
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

int report__write(int fd, const char *what, const char *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EPIPE)
			return -EPIPE; /* the reader is gone: nothing to say */
		if (n <= 0) {
			pr_err("cannot write %s: %s\n", what,
			       n < 0 ? strerror(errno) : "short write");
			return -EIO;
		}
		buf += n;
		len -= n;
	}
	return 0;
}
