// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <fcntl.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "json_writer.h"
#include "util.h"

void pr_err(const char *fmt, ...)
{
	char *msg = NULL, *safe = NULL;
	va_list ap;
	int n;

	/* Names from outside are in messages: no escape sequence gets through. */
	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n >= 0)
		safe = malloc(TEXT_PRINTABLE_SIZE((size_t)n));
	if (safe) {
		text__printable(safe, TEXT_PRINTABLE_SIZE((size_t)n), msg, true);
		fprintf(stderr, "pmbpf: %s", safe);
	} else {
		fputs("pmbpf: ", stderr);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
	}
	if (n >= 0)
		free(msg);
	free(safe);
}

bool text__char(const char *p, bool keep_lines, int *n)
{
	const unsigned char *u = (const unsigned char *)p;

	*n = utf8_len(u);
	if (!*n) {
		*n = 1;
		return false;
	}
	if (*u < 0x20)
		return keep_lines && (*u == '\n' || *u == '\t');
	/* DEL, and C1 (U+0080-U+009F): some terminals take 0xc2 0x9b for CSI */
	return *u != 0x7f && !(*u == 0xc2 && u[1] < 0xa0);
}

const char *text__printable(char *buf, size_t len, const char *s, bool keep_lines)
{
	size_t o = 0;
	int n;

	for (; *s; s += n) {
		bool ok = text__char(s, keep_lines, &n);
		const char *out = ok ? s : TEXT_REPLACEMENT;
		size_t w = ok ? (size_t)n : 3;

		if (o + w >= len)
			break;
		memcpy(buf + o, out, w);
		o += w;
	}
	buf[o] = '\0';
	return buf;
}

void text__fputs(const char *s, bool keep_lines, FILE *f)
{
	int n;

	for (; *s; s += n)
		if (text__char(s, keep_lines, &n))
			fwrite(s, 1, n, f);
		else
			fputs(TEXT_REPLACEMENT, f);
}

int file__read_all(const char *path, size_t max, char **buf, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *b = malloc(cap), *nb;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	ssize_t r;

	struct stat st;

	if (fd < 0 || !b) {
		err = fd < 0 ? -errno : -ENOMEM;
		goto out;
	}
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && (size_t)st.st_size > max) {
		err = -EFBIG;
		goto out;
	}
	for (;;) {
		if (n + 1 == cap) {
			/* room for max + 1 bytes, to see that there are more */
			cap = cap * 2 < max + 2 ? cap * 2 : max + 2;
			nb = realloc(b, cap);
			if (!nb) {
				err = -ENOMEM;
				goto out;
			}
			b = nb;
		}
		r = read(fd, b + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			goto out;
		}
		if (!r)
			break;
		n += r;
		if (n > max) {
			err = -EFBIG;
			goto out;
		}
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	b = NULL;
out:
	if (fd >= 0)
		close(fd);
	free(b);
	return err;
}

long file__getline(FILE *f, char **line, size_t *cap, size_t max)
{
	size_t n = 0;
	int c;

	errno = 0;
	while ((c = getc_unlocked(f)) != EOF) {
		if (n + 2 > *cap) {
			size_t nc = *cap ? *cap * 2 : 4096;
			char *nl = realloc(*line, nc);

			if (!nl)
				return -ENOMEM;
			*line = nl;
			*cap = nc;
		}
		(*line)[n++] = (char)c;
		if (c == '\n')
			break;
		if (n > max)
			return -EFBIG;
	}
	if (c == EOF && ferror(f))
		return errno ? -errno : -EIO;
	if (n)
		(*line)[n] = '\0';
	return (long)n;
}

long perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group,
		     unsigned long flags)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, group, flags);
}

static int print_all(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return vfprintf(stderr, fmt, args);
}

static int print_none(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return 0;
}

bool kernel__has_tp_btf(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool ok;

	if (!btf)
		return false;
	ok = btf__find_by_name_kind(btf, "btf_trace_sched_switch", BTF_KIND_TYPEDEF) > 0;
	btf__free(btf);
	return ok;
}

void libbpf__set_verbose(bool verbose)
{
	libbpf_set_print(verbose ? print_all : print_none);
}

__u64 now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int cpulist__parse(const char *s, bool *set, int n)
{
	const char *p = s;

	while (*p && *p != '\n') {
		char *end;
		long a, b;

		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		a = strtol(p, &end, 10);
		b = a;
		p = end;
		if (*p == '-') {
			if (!isdigit((unsigned char)p[1]))
				return -EINVAL;
			b = strtol(p + 1, &end, 10);
			p = end;
		}
		if (b < a)
			return -EINVAL;
		if (b >= n)
			b = n - 1;
		for (; a <= b; a++)
			if (a < n)
				set[a] = true;
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -EINVAL;
	}
	return 0;
}

int cpus__online(bool *online, int n)
{
	char buf[4096];
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	int err;

	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	memset(online, 0, n * sizeof(*online));
	err = cpulist__parse(buf, online, n);
	return err;
}

int duration__parse(const char *s, __u64 *ns)
{
	unsigned __int128 frac = 0, scale = 1, v;
	unsigned long long whole = 0;
	__u64 mult;
	const char *p = s;

	/* decimal only: no sign, exponent, hex, infinity or spaces */
	if (!s || !isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		if (whole > DURATION_MAX_NS / 1000)
			return -EINVAL;
		whole = whole * 10 + (*p - '0');
	}
	if (*p == '.') {
		if (!isdigit((unsigned char)*++p))
			return -EINVAL;
		/* digits beyond 1e-18 s cannot make a nanosecond */
		for (; isdigit((unsigned char)*p); p++)
			if (scale < 1000000000000000000ULL) {
				frac = frac * 10 + (*p - '0');
				scale *= 10;
			}
	}
	if (!strcmp(p, "") || !strcmp(p, "s"))
		mult = 1000000000ULL;
	else if (!strcmp(p, "ms"))
		mult = 1000000ULL;
	else if (!strcmp(p, "us"))
		mult = 1000ULL;
	else if (!strcmp(p, "m"))
		mult = 60000000000ULL;
	else if (!strcmp(p, "h"))
		mult = 3600000000000ULL;
	else if (!strcmp(p, "d"))
		mult = 86400000000000ULL;
	else
		return -EINVAL;
	v = (unsigned __int128)whole * mult + (frac * mult + scale / 2) / scale;
	if (v < 1 || v > DURATION_MAX_NS)
		return -EINVAL;
	*ns = (__u64)v;
	return 0;
}

const char *wait_status__str(int status, char *buf, size_t len)
{
	const char *name;

	if (WIFEXITED(status)) {
		snprintf(buf, len, "exit code %d", WEXITSTATUS(status));
		return buf;
	}
	name = WIFSIGNALED(status) ? sigabbrev_np(WTERMSIG(status)) : NULL;
	if (name)
		snprintf(buf, len, "killed by SIG%s%s", name,
			 WCOREDUMP(status) ? " (core dumped)" : "");
	else
		snprintf(buf, len, "killed by signal %d", WTERMSIG(status));
	return buf;
}

int wait_status__code(int status)
{
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int uint__parse(const char *s, unsigned long long min, unsigned long long max,
		unsigned long long *out)
{
	unsigned long long v;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

enum process_state process__state(pid_t pid)
{
	char path[64], line[256], state = 0;
	long threads = 1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return PROCESS_GONE;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "State:", 6))
			sscanf(line + 6, " %c", &state);
		else if (!strncmp(line, "Threads:", 8))
			threads = strtol(line + 8, NULL, 10);
	}
	fclose(f);
	if (!state)
		return PROCESS_GONE;
	if ((state == 'Z' || state == 'X') && threads <= 1)
		return PROCESS_ZOMBIE;
	return PROCESS_RUNNING;
}

/* The process (thread group) of task id, from /proc/ID/status; 0 if unknown. */
static pid_t task__tgid(pid_t id)
{
	char path[64], line[256];
	pid_t tgid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)id);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Tgid:", 5)) {
			tgid = (pid_t)strtol(line + 5, NULL, 10);
			break;
		}
	fclose(f);
	return tgid;
}

int process__check_running(pid_t *pid)
{
	pid_t tgid = task__tgid(*pid);

	if (tgid > 0 && tgid != *pid) {
		/* /proc/TID exists (unlisted) for every thread: a thread id reads as a process */
		pr_err("%d is a thread of process %d: following process %d (-p takes a process id)\n",
		       (int)*pid, (int)tgid, (int)tgid);
		*pid = tgid;
	}
	switch (process__state(*pid)) {
	case PROCESS_RUNNING:
		return 0;
	case PROCESS_ZOMBIE:
		pr_err("process %d is not running: it exited (a zombie its parent has not reaped)\n",
		       (int)*pid);
		return -ESRCH;
	default:
		pr_err("no process with PID %d\n", (int)*pid);
		return -ESRCH;
	}
}

int process__comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	int err = 0;
	FILE *f;

	if (len)
		buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	else
		err = ferror(f) ? -EIO : -ENODATA;
	fclose(f);
	return err;
}

int task__stat(pid_t pid, pid_t tid, char *state, unsigned long long *starttime)
{
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd, i, err;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	err = errno;
	close(fd);
	if (n < 0)
		return -err;
	buf[n > 0 ? n : 0] = '\0';
	p = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
	if (!p || p[1] != ' ' || !p[2])
		return -ENODATA;
	*state = p[2];
	for (i = 2; p && i < 22; i++)
		p = strchr(p + 1, ' ');
	if (!p)
		return -ENODATA;
	*starttime = strtoull(p + 1, NULL, 10);
	return 0;
}

__u64 file__key_u64(const char *path, const char *fmt)
{
	unsigned long long v = 0;
	char line[256];
	FILE *f = fopen(path, "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, fmt, &v) == 1)
			break;
	fclose(f);
	return v;
}

void *array__room(void *arr, size_t nr, size_t *cap, size_t size)
{
	size_t c;

	if (nr < *cap)
		return arr;
	c = *cap ? *cap * 2 : 64;
	arr = realloc(arr, c * size);
	if (arr)
		*cap = c;
	return arr;
}

int radix__order(const __u64 *keys, size_t nw, size_t n, size_t *order)
{
	size_t *tmp, *src = order, *dst, i, w, b, pos, *count, *hist;

	tmp = malloc((n ? n : 1) * sizeof(*tmp));
	/* every byte's counts in one sweep of the keys, in their order (a byte's counts do not depend on it) */
	hist = calloc(nw * 8 * 256, sizeof(*hist));
	if (!tmp || !hist) {
		free(tmp);
		free(hist);
		return -ENOMEM;
	}
	dst = tmp;
	for (i = 0; i < n; i++) {
		order[i] = i;
		for (w = 0; w < nw; w++)
			for (b = 0; b < 8; b++)
				hist[(w * 8 + b) * 256 + ((keys[i * nw + w] >> (8 * b)) & 0xff)]++;
	}
	for (w = nw; w-- > 0;) {
		for (b = 0; b < 8; b++) {
			count = &hist[(w * 8 + b) * 256];
			if (!n || count[(keys[w] >> (8 * b)) & 0xff] == n)
				continue; /* every key has this byte: the order stands */
			for (i = 0, pos = 0; i < 256; i++) {
				size_t c = count[i];

				count[i] = pos;
				pos += c;
			}
			for (i = 0; i < n; i++)
				dst[count[(keys[src[i] * nw + w] >> (8 * b)) & 0xff]++] = src[i];
			dst = src;
			src = src == order ? tmp : order;
		}
	}
	if (src != order)
		memcpy(order, src, n * sizeof(*order));
	free(hist);
	free(tmp);
	return 0;
}
