// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Durations, bounded integers, CPU lists, a task's /proc stat, text for a
 * terminal and bounded reads of input files.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "check.h"
#include "host.h"
#include "util.h"

#define NS_PER_S 1000000000ULL

static void check_duration(const char *s, __u64 want, int line)
{
	__u64 ns = 0;
	int err = duration__parse(s, &ns);

	check_record(!err && ns == want, __FILE__, line,
		     "duration__parse(\"%s\"): err %d, %llu ns, want %llu ns", s, err,
		     (unsigned long long)ns, (unsigned long long)want);
}

static void check_duration_bad(const char *s, int line)
{
	__u64 ns = 12345;
	int err = duration__parse(s, &ns);

	check_record(err == -EINVAL && ns == 12345, __FILE__, line,
		     "duration__parse(\"%s\"): err %d (want -EINVAL), ns %llu (want untouched)", s,
		     err, (unsigned long long)ns);
}

#define DUR(s, want) check_duration(s, want, __LINE__)
#define DUR_BAD(s)   check_duration_bad(s, __LINE__)

static void test_duration(void)
{
	char buf[32];
	unsigned int ms;

	DUR("1", NS_PER_S);
	DUR("1s", NS_PER_S);
	DUR("500ms", 500000000ULL);
	DUR("0.5", 500000000ULL);
	DUR("0.5s", 500000000ULL);
	DUR("1.5", 1500000000ULL);
	DUR("2m", 120 * NS_PER_S);
	DUR("1.5m", 90 * NS_PER_S);
	DUR("10us", 10000ULL);
	DUR("1us", 1000ULL);
	DUR("0.1us", 100ULL);
	DUR("0.01", 10000000ULL);
	DUR("10ms", 10000000ULL);
	DUR("0.1", 100000000ULL);
	DUR("3600", 3600 * NS_PER_S);
	/* the largest accepted value: 366 days */
	DUR("31622400", 31622400ULL * NS_PER_S);
	DUR("527040m", 31622400ULL * NS_PER_S);
	/* issue 34: the docs speak of an hour and 366 days */
	DUR("1h", 3600 * NS_PER_S);
	DUR("1.5h", 5400 * NS_PER_S);
	DUR("1d", 86400 * NS_PER_S);
	DUR("366d", 31622400ULL * NS_PER_S);
	DUR("8784h", 31622400ULL * NS_PER_S);
	DUR("0.000000001", 1ULL);
	DUR("1.0000000000000000000001", NS_PER_S);

	/*
	 * Decimal fractions must not lose a nanosecond to binary rounding:
	 * every "S.mmm" up to 10 s gives exactly S.mmm x 1e9 ns.
	 */
	for (ms = 1; ms < 10000; ms++) {
		__u64 ns = 0;

		snprintf(buf, sizeof(buf), "%u.%03u", ms / 1000, ms % 1000);
		if (duration__parse(buf, &ns) || ns != ms * 1000000ULL)
			break;
	}
	if (ms < 10000)
		DUR(buf, ms * 1000000ULL);
	else
		CHECK(ms == 10000);

	DUR_BAD("");
	DUR_BAD("abc");
	DUR_BAD("1x");
	DUR_BAD("1 s");
	DUR_BAD("1s ");
	DUR_BAD("1ss");
	DUR_BAD("1hh");
	DUR_BAD("1dd");
	DUR_BAD("1H");
	DUR_BAD("367d");
	DUR_BAD("8785h");
	DUR_BAD("ms");
	DUR_BAD("-1");
	DUR_BAD("-0.5s");
	DUR_BAD("0");
	DUR_BAD("0s");
	DUR_BAD("0.0");
	DUR_BAD(" 1");
	DUR_BAD("\t1");
	DUR_BAD("1\n");
	DUR_BAD("nan");
	DUR_BAD("NaN");
	DUR_BAD("inf");
	DUR_BAD("-inf");
	DUR_BAD("infinity");
	/* below one nanosecond */
	DUR_BAD("0.0001us");
	DUR_BAD("0.0000000001");
	/* above 366 days, and beyond double range */
	DUR_BAD("31622401");
	DUR_BAD("527041m");
	DUR_BAD("1000000001");
	DUR_BAD("99999999999999999999999");
	/* decimal only: no hex, exponent, sign or bare point */
	DUR_BAD("0x10");
	DUR_BAD("1e9");
	DUR_BAD("1e3");
	DUR_BAD("1E3ms");
	DUR_BAD("+1");
	DUR_BAD(".5");
	DUR_BAD("1.");
	DUR_BAD("1.s");
	DUR_BAD("1e300");
	DUR_BAD("1e400");
	CHECK_EQ_INT(duration__parse(NULL, &(__u64){ 0 }), -EINVAL);
}

static void test_uint(void)
{
	unsigned long long v = 7;

	CHECK_EQ_INT(uint__parse("1", 1, 10, &v), 0);
	CHECK_EQ_U64(v, 1);
	CHECK_EQ_INT(uint__parse("10", 1, 10, &v), 0);
	CHECK_EQ_U64(v, 10);
	CHECK_EQ_INT(uint__parse("0", 0, 0, &v), 0);
	CHECK_EQ_U64(v, 0);
	CHECK_EQ_INT(uint__parse("007", 1, 10, &v), 0);
	CHECK_EQ_U64(v, 7);
	CHECK_EQ_INT(uint__parse("18446744073709551615", 1, ULLONG_MAX, &v), 0);
	CHECK_EQ_U64(v, ULLONG_MAX);
	CHECK_EQ_INT(uint__parse("2147483647", 1, INT_MAX, &v), 0);
	CHECK_EQ_U64(v, INT_MAX);
	CHECK_EQ_INT(uint__parse("4194304", 16, 1U << 22, &v), 0);

	v = 7;
	CHECK_EQ_INT(uint__parse("0", 1, 10, &v), -EINVAL);
	CHECK_EQ_INT(uint__parse("11", 1, 10, &v), -EINVAL);
	CHECK_EQ_INT(uint__parse("15", 16, 1U << 22, &v), -EINVAL);
	CHECK_EQ_INT(uint__parse("4194305", 16, 1U << 22, &v), -EINVAL);
	CHECK_EQ_INT(uint__parse("2147483648", 1, INT_MAX, &v), -EINVAL);
	CHECK_EQ_INT(uint__parse("18446744073709551616", 0, ULLONG_MAX, &v), -EINVAL);
	CHECK_EQ_INT(uint__parse("99999999999999999999999", 0, ULLONG_MAX, &v), -EINVAL);
	CHECK_EQ_INT(uint__parse("", 0, 10, &v), -EINVAL);
	CHECK_EQ_INT(uint__parse("-1", 0, ULLONG_MAX, &v), -EINVAL);
	CHECK_EQ_INT(uint__parse("+1", 0, 10, &v), -EINVAL);
	CHECK_EQ_INT(uint__parse(" 1", 0, 10, &v), -EINVAL);
	CHECK_EQ_INT(uint__parse("1 ", 0, 10, &v), -EINVAL);
	CHECK_EQ_INT(uint__parse("1a", 0, 100, &v), -EINVAL);
	CHECK_EQ_INT(uint__parse("0x10", 0, 100, &v), -EINVAL);
	CHECK_EQ_INT(uint__parse("1.0", 0, 100, &v), -EINVAL);
	CHECK_EQ_INT(uint__parse(NULL, 0, 100, &v), -EINVAL);
	CHECK_EQ_U64(v, 7);
}

/* set[0..n) as a string of 0/1 */
static const char *bits(const bool *set, int n)
{
	static char buf[128];
	int i;

	for (i = 0; i < n; i++)
		buf[i] = set[i] ? '1' : '0';
	buf[n] = '\0';
	return buf;
}

static void check_cpulist(const char *s, int n, const char *want, int line)
{
	bool set[64];
	int err;

	memset(set, 0, sizeof(set));
	err = cpulist__parse(s, set, n);
	check_record(!err && !strcmp(bits(set, n), want), __FILE__, line,
		     "cpulist__parse(\"%s\", %d): err %d, %s, want %s", s, n, err, bits(set, n),
		     want);
	/* nothing written at or beyond n */
	check_record(!strchr(bits(set + n, (int)sizeof(set) - n), '1'), __FILE__, line,
		     "cpulist__parse(\"%s\", %d) wrote beyond n", s, n);
}

static void check_cpulist_bad(const char *s, int line)
{
	bool set[8];
	int err = cpulist__parse(s, set, 8);

	check_record(err == -EINVAL, __FILE__, line, "cpulist__parse(\"%s\"): err %d, want -EINVAL",
		     s, err);
}

#define CPUS(s, n, want) check_cpulist(s, n, want, __LINE__)
#define CPUS_BAD(s)	 check_cpulist_bad(s, __LINE__)

static void test_cpulist(void)
{
	CPUS("0-3,5", 8, "11110100");
	CPUS("0", 4, "1000");
	CPUS("1-1", 4, "0100");
	CPUS("7", 8, "00000001");
	CPUS("0-3,5\n", 8, "11110100");
	CPUS("0\n", 2, "10");
	CPUS("0,2,4-5", 8, "10101100");
	CPUS("10-11", 16, "0000000000110000");
	CPUS("", 4, "0000");
	CPUS("\n", 4, "0000");
	/* CPUs at or beyond n are ignored */
	CPUS("0-3,5", 4, "1111");
	CPUS("2-9", 4, "0011");
	CPUS("8", 4, "0000");
	CPUS("0-63", 8, "11111111");

	CPUS_BAD("3-1");
	CPUS_BAD("a");
	CPUS_BAD("0-a");
	CPUS_BAD("0-");
	CPUS_BAD("-1");
	CPUS_BAD("0 1");
	CPUS_BAD(" 0");
	CPUS_BAD("0,,1");
	CPUS_BAD("0;1");
	CPUS_BAD("1-2-3");
}

/* This process and its thread as /proc shows them; a task that is not there. */
static void test_task_stat(void)
{
	unsigned long long start = 0, tstart = 0;
	char state = 0, tstate = 0;
	pid_t tid = (pid_t)syscall(SYS_gettid);

	CHECK_EQ_INT(task__stat(getpid(), 0, &state, &start), 0);
	CHECK_EQ_INT(task__stat(getpid(), tid, &tstate, &tstart), 0);
	CHECK(state == 'R' && tstate == 'R' && start > 0 && tstart == start);
	/* pid 1 has no thread with this process's id (unless this is pid 1) */
	if (getpid() != 1)
		CHECK_EQ_INT(task__stat(1, tid, &state, &start), -ENOENT);
}

static void check_printable(const char *s, bool keep_lines, const char *want, int line)
{
	char buf[64];

	text__printable(buf, sizeof(buf), s, keep_lines);
	check_record(!strcmp(buf, want), __FILE__, line, "text__printable(\"%s\"): \"%s\", want \"%s\"",
		     s, buf, want);
}

#define R TEXT_REPLACEMENT
#define PRINTABLE(s, keep, want) check_printable(s, keep, want, __LINE__)

static void test_printable(void)
{
	char small[8];

	PRINTABLE("plain", false, "plain");
	PRINTABLE("\x1b]0;pwned\x07", false, R "]0;pwned" R);
	PRINTABLE("a\nb\tc\r", true, "a\nb\tc" R);
	PRINTABLE("a\nb\tc", false, "a" R "b" R "c");
	PRINTABLE("del\x7f", false, "del" R);
	/* C1 as UTF-8 (U+009B, CSI), a lone C1 byte, a cut character, then a valid one */
	PRINTABLE("\xc2\x9b" "2J", false, R "2J");
	PRINTABLE("\x9b" "2J", false, R "2J");
	PRINTABLE("\xe2\x82", false, R R);
	PRINTABLE("\xc2\xa0\xe2\x82\xac", false, "\xc2\xa0\xe2\x82\xac");
	/* cut to fit, never in the middle of a character */
	text__printable(small, sizeof(small), "ab\x1b\x1b", false);
	CHECK(!strcmp(small, "ab" R));
}

static void test_getline(void)
{
	char data[] = "one\ntwo longer line\n\nlast";
	char *line = NULL;
	size_t cap = 0;
	FILE *f = fmemopen(data, strlen(data), "r");

	CHECK(f);
	if (!f)
		return;
	CHECK(file__getline(f, &line, &cap, 100) == 4 && !strcmp(line, "one\n"));
	CHECK(file__getline(f, &line, &cap, 10) == -EFBIG);
	rewind(f);
	CHECK(file__getline(f, &line, &cap, 4) == 4);
	CHECK(file__getline(f, &line, &cap, 100) == 16);
	CHECK(file__getline(f, &line, &cap, 100) == 1 && !strcmp(line, "\n"));
	CHECK(file__getline(f, &line, &cap, 100) == 4 && !strcmp(line, "last"));
	CHECK(file__getline(f, &line, &cap, 100) == 0);
	fclose(f);
	free(line);
}

static void test_read_all(void)
{
	char path[] = "/tmp/pmbpf-test-util-XXXXXX", *buf = NULL;
	size_t len = 0;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(write(fd, "0123456789", 10) == 10);
	close(fd);
	CHECK(file__read_all(path, 10, &buf, &len) == 0 && len == 10 && !strcmp(buf, "0123456789"));
	free(buf);
	CHECK(file__read_all(path, 9, &buf, &len) == -EFBIG);
	/* not regular: read up to the limit, then refused */
	CHECK(file__read_all("/dev/zero", 100000, &buf, &len) == -EFBIG);
	CHECK(file__read_all("/", 100, &buf, &len) == -EISDIR);
	CHECK(file__read_all("/nonexistent/x", 100, &buf, &len) == -ENOENT);
	unlink(path);
}

/* The first CPU's block of /proc/cpuinfo: x86 (a guest), arm64 (no vendor, model name or flags). */
static void test_host_cpu(void)
{
	static const char x86[] = "processor\t: 0\n"
				  "vendor_id\t: AuthenticAMD\n"
				  "cpu family\t: 25\n"
				  "model\t\t: 17\n"
				  "model name\t: AMD EPYC 9R14\n"
				  "flags\t\t: fpu vme de hypervisor lahf_lm\n"
				  "\n"
				  "processor\t: 1\n"
				  "vendor_id\t: GenuineIntel\n"
				  "model name\t: not the first CPU\n";
	static const char arm64[] = "processor\t: 0\n"
				    "BogoMIPS\t: 50.00\n"
				    "Features\t: fp asimd evtstrm\n"
				    "CPU implementer\t: 0x41\n"
				    "CPU part\t: 0xd0c\n";
	struct host_cpu h;

	host_cpu__parse(&h, x86);
	CHECK_STR(h.vendor, "AuthenticAMD");
	CHECK_EQ_INT(h.family, 25);
	CHECK_EQ_INT(h.model, 17);
	CHECK_STR(h.model_name, "AMD EPYC 9R14");
	CHECK(h.hypervisor);
	host_cpu__parse(&h, arm64);
	CHECK_STR(h.vendor, "");
	CHECK_EQ_INT(h.family, -1);
	CHECK_EQ_INT(h.model, -1);
	CHECK_STR(h.model_name, "");
	CHECK(!h.hypervisor);
	host_cpu__parse(&h, "flags\t: fpu hypervisor_x\nmodel name: X\n");
	CHECK(h.hypervisor); /* as doctor read it: " hypervisor" anywhere in flags */
	CHECK_STR(h.model_name, "X");
	/* this host's, read once: the same object each time */
	CHECK(host__cpu() == host__cpu());
}

static const __u64 *radix_keys;
static size_t radix_nw;

/* The stable order spelled out: by key, then by item number. */
static int cmp_radix_ref(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b, w;

	for (w = 0; w < radix_nw; w++) {
		__u64 kx = radix_keys[x * radix_nw + w], ky = radix_keys[y * radix_nw + w];

		if (kx != ky)
			return kx < ky ? -1 : 1;
	}
	return x < y ? -1 : x > y;
}

static void test_radix_order(void)
{
	static __u64 keys[3 * 5000];
	static size_t order[5000], ref[5000];
	unsigned int seed = 42;
	size_t n, i, trial;

	/* keys as the refreshes have them: small pids, few cgroups, 64-bit ids, duplicates */
	for (trial = 0; trial < 6; trial++) {
		size_t nw = 1 + trial % 3;

		n = trial == 0 ? 0 : trial == 1 ? 1 : 5000;
		for (i = 0; i < n * nw; i++) {
			__u64 r = (__u64)rand_r(&seed) << 31 ^ (__u64)rand_r(&seed);

			keys[i] = i % nw == 0 ? r % 40000 : i % nw == 1 ? 0xabc000 + r % 3 : r;
			if (trial == 5 && i % 7 == 0)
				keys[i] = 12345; /* many equal keys: stability */
		}
		radix_keys = keys;
		radix_nw = nw;
		for (i = 0; i < n; i++)
			ref[i] = i;
		qsort(ref, n, sizeof(*ref), cmp_radix_ref);
		CHECK(!radix__order(keys, nw, n, order));
		CHECK(!memcmp(order, ref, n * sizeof(*order)));
	}
	/* every key equal: the item order */
	for (i = 0; i < 100; i++)
		keys[i] = 7;
	CHECK(!radix__order(keys, 1, 100, order));
	for (i = 0; i < 100; i++)
		CHECK(order[i] == i);
}

int main(void)
{
	test_radix_order();
	test_duration();
	test_uint();
	test_cpulist();
	test_task_stat();
	test_printable();
	test_getline();
	test_read_all();
	test_host_cpu();
	return check_summary();
}
