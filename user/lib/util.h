/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __PMBPF_UTIL_H
#define __PMBPF_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>
#include <sys/types.h>
#include <linux/types.h>

/*
 * The one error printer: "pmbpf: " and the message, on stderr. Every
 * one-line error and warning goes through it (fmt ends with its newline).
 */
void pr_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
__u64 now_ns(clockid_t clk);
struct perf_event_attr;
long perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group,
		     unsigned long flags);
/* The kernel's BTF has the typed sched_switch tracepoint (tp_btf programs). */
bool kernel__has_tp_btf(void);
/* libbpf's messages on stderr with -v, none otherwise. */
void libbpf__set_verbose(bool verbose);
/* Fill online[0..n) from /sys/devices/system/cpu/online. */
int cpus__online(bool *online, int n);
/* Parse a CPU list such as "0-3,5"; CPUs >= n are ignored. */
int cpulist__parse(const char *s, bool *set, int n);
/* The longest duration taken anywhere: 366 days. */
#define DURATION_MAX_NS (366ULL * 86400 * 1000000000ULL)
/*
 * Parse a duration, in decimal: "2" or "2s" (seconds), "500ms", "1.5",
 * "10us", "1m", "1h", "1d". Returns 0 and nanoseconds in *ns, or -EINVAL. Below one
 * nanosecond, above DURATION_MAX_NS, and anything not decimal ("0x10",
 * "1e9", "+1", "inf") are refused.
 */
int duration__parse(const char *s, __u64 *ns);
/*
 * How a child ended, from its wait status: "exit code 3", or "killed by
 * SIGKILL" (a shell's 128 + N is not an exit code). Returns buf.
 */
const char *wait_status__str(int status, char *buf, size_t len);
/* A wait status as a shell's $?: the exit code, or 128 + the signal. */
int wait_status__code(int status);
/* Parse a decimal unsigned integer in [min, max]. */
int uint__parse(const char *s, unsigned long long min, unsigned long long max,
		unsigned long long *out);

enum process_state {
	PROCESS_RUNNING,
	PROCESS_GONE,
	PROCESS_ZOMBIE, /* exited, not yet reaped by its parent */
};

/*
 * The state of a process (thread group) from /proc: a zombie leader whose
 * other threads still run counts as running.
 */
enum process_state process__state(pid_t pid);
/*
 * process__state() is PROCESS_RUNNING, or print why not in one line. A
 * thread id in *pid becomes its process's id, and one line says so.
 */
int process__check_running(pid_t *pid);
/*
 * The command name of a process (/proc/PID/comm, without its newline).
 * Returns 0, or -errno (buf "") when it cannot be read.
 */
int process__comm(pid_t pid, char *buf, size_t len);
/*
 * From /proc/PID/stat (tid 0) or /proc/PID/task/TID/stat: the task's state
 * letter and its start time (field 22: clock ticks since boot, on the
 * boot-time clock). Returns 0, or -errno when it cannot be read.
 */
int task__stat(pid_t pid, pid_t tid, char *state, unsigned long long *starttime);
/* The number of the first line of file path that fmt ("key %llu") reads, or 0. */
__u64 file__key_u64(const char *path, const char *fmt);
/*
 * The most read from an input file (compare's files, a line of cpi's
 * input): a file of pmbpf's output is far smaller; /dev/zero is not.
 */
#define INPUT_MAX_BYTES (64UL << 20)
/*
 * Read all of path (a regular file, a FIFO, a device) into *buf (malloc'd,
 * NUL-terminated), at most max bytes. Returns 0, -EFBIG when it holds more,
 * or -errno.
 */
int file__read_all(const char *path, size_t max, char **buf, size_t *len);
/*
 * getline() with a bound: the next line of f into *line (realloc'd, *cap),
 * with its newline. Returns its length, 0 at the end of f, -EFBIG when it is
 * longer than max bytes, or -errno.
 */
long file__getline(FILE *f, char **line, size_t *cap, size_t max);

/*
 * Text for a terminal: the character of n (*n) bytes at p is kept, or
 * (false) replaced by U+FFFD: control characters (C0, DEL, C1) and invalid
 * UTF-8 (n is then 1), except newline and tab with keep_lines. Every text
 * pmbpf prints from outside (command names, cgroup paths, file contents,
 * arguments echoed in errors) goes through this rule.
 */
bool text__char(const char *p, bool keep_lines, int *n);
/* s by text__char()'s rule into buf (len bytes, at least 1; cut to fit). */
const char *text__printable(char *buf, size_t len, const char *s, bool keep_lines);
/* s by text__char()'s rule, to f. */
void text__fputs(const char *s, bool keep_lines, FILE *f);
/* The size of buf that text__printable() needs for all of s. */
#define TEXT_PRINTABLE_SIZE(n) (3 * (n) + 1)
#define TEXT_REPLACEMENT       "\xef\xbf\xbd" /* U+FFFD */

/*
 * arr (nr of *cap elements of size bytes) with room for one more: realloc'd
 * to twice the size (64 at first) when full, or NULL (arr untouched).
 */
void *array__room(void *arr, size_t nr, size_t *cap, size_t size);
/*
 * order[0..n) = the items 0..n-1 sorted by their keys, stably (equal keys
 * keep their item order, as glibc's merge sort does): item i's key is the
 * nw words keys[i * nw .. i * nw + nw - 1], the most significant first. An
 * LSD radix sort by bytes that skips a byte all keys share: linear in n,
 * no comparison calls (the refreshes sort 10,000s of rows and pairs).
 * -ENOMEM when its scratch cannot be had (order is then untouched).
 */
int radix__order(const __u64 *keys, size_t nw, size_t n, size_t *order);

#endif
