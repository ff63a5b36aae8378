// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Perf maps (/tmp/perf-PID.map) as the symbolizer reads them. */
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "symbolize.h"

static struct perf_map *map_of(const char *text)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct perf_map *pm;

	if (!f)
		return NULL;
	pm = perf_map__read(f);
	fclose(f);
	return pm;
}

static void check_find(const struct perf_map *pm, __u64 addr, const char *want, int line)
{
	const char *got = perf_map__find(pm, addr);

	check_record(want ? got && !strcmp(got, want) : !got, __FILE__, line,
		     "perf_map__find(0x%llx): '%s', want '%s'", (unsigned long long)addr,
		     got ? got : "(null)", want ? want : "(null)");
}

/* An empty map (a runtime that has written nothing yet) once sorted a NULL array. */
static void test_empty(void)
{
	const char *texts[] = { "", "\n", "garbage\n", "10 0 zero-sized\n", "zz 10 x\n" };
	size_t i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct perf_map *pm = map_of(texts[i]);

		if (!CHECK(pm))
			continue;
		CHECK_EQ_INT(perf_map__nr(pm), 0);
		check_find(pm, 0x10, NULL, __LINE__);
		check_find(pm, 0, NULL, __LINE__);
		perf_map__free(pm);
	}
}

static void test_lookup(void)
{
	struct perf_map *pm = map_of("1000 100 first\n"
				     "3000 10 [jit] second with spaces\n" /* sizes are hex too */
				     "1000 20 later at the same start\n"
				     "not a line\n"
				     "2000 100 third");

	if (!CHECK(pm))
		return;
	CHECK_EQ_INT(perf_map__nr(pm), 4);
	check_find(pm, 0xfff, NULL, __LINE__);
	/* the later line wins where both hold the address */
	check_find(pm, 0x1000, "later at the same start", __LINE__);
	check_find(pm, 0x101f, "later at the same start", __LINE__);
	check_find(pm, 0x1020, "first", __LINE__);
	check_find(pm, 0x10ff, "first", __LINE__);
	check_find(pm, 0x1100, NULL, __LINE__);
	check_find(pm, 0x2050, "third", __LINE__);
	check_find(pm, 0x300f, "[jit] second with spaces", __LINE__);
	check_find(pm, 0x3010, NULL, __LINE__);
	perf_map__free(pm);
}

/* A symbol whose end is past 2^64 holds the addresses up to the top, no more. */
static void test_wrap(void)
{
	struct perf_map *pm = map_of("ffffffffffffff00 1000 top\n10 10 low\n");

	if (!CHECK(pm))
		return;
	check_find(pm, 0xffffffffffffffffULL, "top", __LINE__);
	check_find(pm, 0x15, "low", __LINE__);
	check_find(pm, 0x25, NULL, __LINE__);
	perf_map__free(pm);
}

/* Whose perf map is read, as perf decides it. */
static void test_refusal(void)
{
	struct stat st = { .st_mode = S_IFREG | 0644, .st_uid = 1000 };
	char buf[128];

	CHECK(!perf_map__refusal(&st, 1000, buf, sizeof(buf)));
	st.st_uid = 0;
	CHECK(!perf_map__refusal(&st, 1000, buf, sizeof(buf)));
	st.st_uid = 1001;
	CHECK_STR(perf_map__refusal(&st, 1000, buf, sizeof(buf)),
		  "owned by uid 1001, neither the process's user (uid 1000) nor root");
	st.st_uid = 1000;
	st.st_mode = S_IFREG | 0666;
	CHECK_STR(perf_map__refusal(&st, 1000, buf, sizeof(buf)), "writable by others (mode 0666)");
	st.st_mode = S_IFREG | 0664;
	CHECK_STR(perf_map__refusal(&st, 0, buf, sizeof(buf)),
		  "owned by uid 1000, neither the process's user (uid 0) nor root");
	st.st_uid = 0;
	CHECK_STR(perf_map__refusal(&st, 0, buf, sizeof(buf)), "writable by its group (mode 0664)");
	st.st_mode = S_IFREG | 0644;
	st.st_size = (1LL << 30) + 1;
	CHECK_STR(perf_map__refusal(&st, 0, buf, sizeof(buf)), "larger than 1 GiB");
	st.st_size = 0;
	st.st_mode = S_IFIFO | 0600;
	CHECK_STR(perf_map__refusal(&st, 0, buf, sizeof(buf)), "not a regular file");
}

int main(void)
{
	test_empty();
	test_lookup();
	test_wrap();
	test_refusal();
	return check_summary();
}
