// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Renderers: count humanizing, JSON Lines, CSV and the table, on a hand-built snapshot. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "output.h"

/* 2023-11-14T22:13:20.123456789Z */
#define TIME_NS	   1700000000123456789ULL
#define MAX_LINES  16
#define MAX_FIELDS 64

static struct event_info events[4];
static struct snapshot snap;

static struct pmbpf_reading rd(__u64 value, __u64 enabled, __u64 running)
{
	struct pmbpf_reading r = { .value = value, .enabled = enabled, .running = running };

	return r;
}

static void set_event(struct event_info *ev, const char *name, enum event_state state, int err)
{
	memset(ev, 0, sizeof(*ev));
	CHECK_EQ_INT(event__parse(name, &ev->spec), 0);
	ev->state = state;
	ev->err = err;
	ev->slot = state == EVENT_COUNTING ? 0 : -1;
}

/*
 * Four rows: a plain one (IPC 1.5, 25% CPU), one whose comm needs escaping,
 * one whose cycles never ran (IPC unknown), and the overflow entry.
 * LLC-load-misses is not supported on this "host".
 */
static void build_snapshot(void)
{
	struct proc_row *row;
	int i;

	set_event(&events[0], "cycles", EVENT_COUNTING, 0);
	set_event(&events[1], "instructions", EVENT_COUNTING, 0);
	set_event(&events[2], "LLC-load-misses", EVENT_NOT_SUPPORTED, ENOENT);
	set_event(&events[3], "dTLB-load-misses", EVENT_COUNTING, 0);

	memset(&snap, 0, sizeof(snap));
	snap.time_ns = TIME_NS;
	snap.interval_ns = 1000000000ULL;
	snap.nr_cpus = 2;
	snap.nr_events = 4;
	snap.events = events;
	snap.attach = "tp_btf";
	snap.map_entries = 4;
	snap.map_capacity = 1024;
	snap.stats[PMBPF_STAT_OVERFLOW] = 3;
	for (i = 0; i < 4; i++)
		snap.system[i] = rd(1000000 * (i + 1), 1000, 1000);

	row = snapshot__add_row(&snap);
	row->pid = 100;
	snprintf(row->comm, sizeof(row->comm), "worker");
	row->cgroup_id = 7;
	row->cgroup = "/system.slice/averyveryverylong.slice/x.service";
	row->f.n[PMBPF_N_ONCPU_NS] = 250000000ULL;
	row->f.n[PMBPF_N_NVCSW] = 5;
	row->f.n[PMBPF_N_NIVCSW] = 6;
	row->f.ev[0] = rd(2000000, 1000, 1000);
	row->f.ev[1] = rd(3000000, 1000, 1000);
	row->f.ev[2] = rd(999, 1000, 1000);
	row->f.ev[3] = rd(300, 1000, 500);

	row = snapshot__add_row(&snap);
	row->pid = 101;
	snprintf(row->comm, sizeof(row->comm), "a\"b\\c,d\x01");
	/* cgroup names are any bytes but '/': a newline, bad UTF-8, an escape */
	row->cgroup = "/a\nb\xff/\x1b[2J\xc3\xa9";
	row->f.n[PMBPF_N_ONCPU_NS] = 1000;
	row->f.ev[0] = rd(10, 10, 10);
	row->f.ev[1] = rd(10, 10, 10);

	row = snapshot__add_row(&snap);
	row->pid = 102;
	snprintf(row->comm, sizeof(row->comm), "gone");
	row->exited = true;
	row->f.n[PMBPF_N_ONCPU_NS] = 2000;
	row->f.ev[0] = rd(0, 1000, 0);
	row->f.ev[1] = rd(500, 1000, 1000);

	row = snapshot__add_row(&snap);
	row->pid = PMBPF_OVERFLOW_TGID;
	row->overflow = true;
	row->folded = 9;
	snprintf(row->comm, sizeof(row->comm), "[overflow]");
	row->f.n[PMBPF_N_ONCPU_NS] = 3000;
}

static char *render(enum output_format fmt, int times)
{
	struct output o = { .format = fmt, .procs = true };
	char *buf = NULL;
	size_t len = 0;

	o.f = open_memstream(&buf, &len);
	if (!o.f) {
		perror("open_memstream");
		exit(2);
	}
	while (times--)
		output__snapshot(&o, &snap);
	fclose(o.f);
	return buf;
}

/* Split buf into lines in place; returns the count. */
static int split_lines(char *buf, char **lines, int max)
{
	char *p = buf, *nl;
	int n = 0;

	while (*p && n < max) {
		nl = strchr(p, '\n');
		lines[n++] = p;
		if (!nl)
			break;
		*nl = '\0';
		p = nl + 1;
	}
	return n;
}

static void test_fmt_count(void)
{
	char buf[32];

	CHECK_STR(fmt_count(buf, sizeof(buf), 0), "0");
	CHECK_STR(fmt_count(buf, sizeof(buf), 1234), "1234");
	CHECK_STR(fmt_count(buf, sizeof(buf), 99999), "99999");
	CHECK_STR(fmt_count(buf, sizeof(buf), 100000), "100K");
	CHECK_STR(fmt_count(buf, sizeof(buf), 123456), "123K");
	CHECK_STR(fmt_count(buf, sizeof(buf), 12345678), "12.3M");
	CHECK_STR(fmt_count(buf, sizeof(buf), 1e9), "1.0G");
	CHECK_STR(fmt_count(buf, sizeof(buf), 2.5e12), "2.5T");
	CHECK_STR(fmt_count(buf, sizeof(buf), 1.8e19), "18.0E");
	CHECK_STR(fmt_count(buf, sizeof(buf), 1e22), "10000E");
	CHECK_STR(fmt_count(buf, sizeof(buf), NAN), "-");
	CHECK_STR(fmt_count(buf, sizeof(buf), INFINITY), "-");
	CHECK(fmt_count(buf, sizeof(buf), 1) == buf);
	/* a short buffer is truncated, never overrun */
	memset(buf, 'x', sizeof(buf));
	fmt_count(buf, 3, 12345678);
	CHECK_STR(buf, "12");
	CHECK(buf[3] == 'x');
}

static void test_format_parse(void)
{
	enum output_format fmt = OUTPUT_CSV;

	CHECK_EQ_INT(output_format__parse("table", &fmt), 0);
	CHECK_EQ_INT(fmt, OUTPUT_TABLE);
	CHECK_EQ_INT(output_format__parse("json", &fmt), 0);
	CHECK_EQ_INT(fmt, OUTPUT_JSON);
	CHECK_EQ_INT(output_format__parse("csv", &fmt), 0);
	CHECK_EQ_INT(fmt, OUTPUT_CSV);
	CHECK_EQ_INT(output_format__parse("JSON", &fmt), -EINVAL);
	CHECK_EQ_INT(output_format__parse("", &fmt), -EINVAL);
	CHECK_EQ_INT(output_format__parse("jsonl", &fmt), -EINVAL);
	CHECK_EQ_INT(fmt, OUTPUT_CSV);
}

static void test_json(void)
{
	char *buf = render(OUTPUT_JSON, 1), *lines[MAX_LINES];
	int n, i;

	n = split_lines(buf, lines, MAX_LINES);
	CHECK_EQ_INT(n, 5);
	for (i = 0; i < n; i++)
		if (!CHECK(json_valid(lines[i])))
			fprintf(stderr, "  line %d: %s\n", i, lines[i]);
	if (n != 5)
		goto out;

	for (i = 0; i < 4; i++) {
		CHECK_SUBSTR(lines[i], "\"type\":\"process\"");
		CHECK_SUBSTR(lines[i], "\"time\":\"2023-11-14T22:13:20.123Z\"");
		CHECK_SUBSTR(lines[i], "\"interval_s\":1.000000");
		/* not counting: null, in events and in mpki */
		CHECK_SUBSTR(lines[i], "\"events\":{\"cycles\":{");
		CHECK_SUBSTR(lines[i], "\"LLC-load-misses\":null,\"dTLB-load-misses\":{");
		CHECK_SUBSTR(lines[i], "\"mpki\":{\"LLC-load-misses\":null,\"dTLB-load-misses\":");
	}
	CHECK_SUBSTR(lines[0], "\"pid\":100,\"comm\":\"worker\",\"cgroup_id\":7,"
			       "\"cgroup\":\"/system.slice/averyveryverylong.slice/x.service\","
			       "\"exited\":false,"
			       "\"overflow\":false,\"cpu_pct\":25.00,\"oncpu_ns\":250000000,");
	CHECK_SUBSTR(
		lines[0],
		"\"voluntary_switches\":5,\"involuntary_switches\":6,\"migrations\":0,\"offcpu_ns\":0,"
		"\"offcpu\":{\"sleep_ns\":0,\"blocked_ns\":0,\"other_ns\":0},"
		"\"runq\":{\"count\":0,\"total_ns\":0,\"avg_ns\":null,");
	CHECK_SUBSTR(lines[0], "\"cycles\":{\"count\":2000000,\"raw\":2000000,\"enabled_ns\":1000,"
			       "\"running_ns\":1000,\"coverage\":1.0000}");
	CHECK_SUBSTR(lines[0], "\"dTLB-load-misses\":{\"count\":600,\"raw\":300,"
			       "\"enabled_ns\":1000,\"running_ns\":500,\"coverage\":0.5000}");
	CHECK_SUBSTR(lines[0], "\"ipc\":1.5000");
	CHECK_SUBSTR(lines[0], "\"dTLB-load-misses\":0.2000}");
	CHECK(!strstr(lines[0], "folded_processes"));

	CHECK_SUBSTR(lines[1], "\"comm\":\"a\\\"b\\\\c,d\\u0001\"");
	CHECK_SUBSTR(lines[1], "\"cgroup\":\"/a\\nb\\ufffd/\\u001b[2J\xc3\xa9\"");
	CHECK_SUBSTR(lines[2], "\"cgroup\":null");
	CHECK_SUBSTR(lines[1], "\"ipc\":1.0000");

	/* cycles never running: its count and the IPC are null, never 0 or inf */
	CHECK_SUBSTR(lines[2], "\"exited\":true");
	CHECK_SUBSTR(lines[2], "\"cycles\":{\"count\":null,");
	CHECK_SUBSTR(lines[2], "\"coverage\":0.0000}");
	CHECK_SUBSTR(lines[2], "\"ipc\":null");

	CHECK_SUBSTR(lines[3], "\"pid\":null");
	CHECK_SUBSTR(lines[3], "\"overflow\":true,\"folded_processes\":9");
	CHECK_SUBSTR(lines[3], "\"ipc\":null");

	CHECK_SUBSTR(lines[4], "\"type\":\"system\"");
	CHECK_SUBSTR(lines[4], "\"cpus\":2,\"processes\":4");
	CHECK_SUBSTR(lines[4], "\"ipc\":2.0000");
	CHECK_SUBSTR(lines[4], "\"attach\":\"tp_btf\"");
	CHECK_SUBSTR(lines[4], "\"map_capacity\":1024");
	CHECK_SUBSTR(lines[4], "\"overflow_credits\":3");
	CHECK(!strstr(lines[4], "cpu_pct"));
	CHECK(!strstr(buf, "nan") && !strstr(buf, "inf"));
out:
	free(buf);
}

/* JSON output with no rows and no events is still one valid system line. */
static void test_json_empty(void)
{
	struct snapshot saved = snap;
	char *buf;

	snap.nr_rows = 0;
	snap.nr_events = 0;
	snap.attach = NULL;
	buf = render(OUTPUT_JSON, 1);
	CHECK(json_valid(buf));
	CHECK_SUBSTR(buf, "\"events\":{},\"ipc\":null,\"ipc_same_group\":false,\"mpki\":{}");
	CHECK(strchr(buf, '\n') == buf + strlen(buf) - 1);
	free(buf);
	snap = saved;
}

static void test_json_start(void)
{
	struct output o = { .format = OUTPUT_JSON, .procs = true };
	char *buf = NULL, *lines[MAX_LINES];
	size_t len = 0;
	int n, i;

	o.f = open_memstream(&buf, &len);
	if (!CHECK(o.f))
		return;
	output__start(&o, events, 4, false, "raw_tp", 8);
	fclose(o.f);
	n = split_lines(buf, lines, MAX_LINES);
	CHECK_EQ_INT(n, 5);
	for (i = 0; i < n; i++)
		CHECK(json_valid(lines[i]));
	CHECK_SUBSTR(lines[0], "\"type\":\"session\",\"version\":\"" PMBPF_VERSION
			       "\",\"schema\":1,\"attach\":\"raw_tp\",\"cpus\":8,\"pmu\":true");
	CHECK_SUBSTR(lines[1], "\"name\":\"cycles\",\"class\":\"hardware\",\"state\":\"counting\","
			       "\"group\":null,\"cpus\":0,\"error\":null");
	CHECK_SUBSTR(lines[3],
		     "\"name\":\"LLC-load-misses\",\"class\":\"hw-cache\","
		     "\"state\":\"not-supported\",\"group\":null,\"cpus\":0,\"error\":\"");
	free(buf);
}

/*
 * Split one RFC 4180 line into fields, unquoting; returns the number of
 * fields, or -1 for a malformed quoted field.
 */
static int csv_split(const char *line, char fields[][64], int max)
{
	const char *p = line;
	int n = 0;

	for (;;) {
		size_t len = 0;

		if (n == max)
			return -1;
		if (*p == '"') {
			p++;
			for (;;) {
				if (!*p)
					return -1;
				if (*p == '"' && p[1] == '"') {
					p++;
				} else if (*p == '"') {
					p++;
					break;
				}
				if (len < 63)
					fields[n][len++] = *p;
				p++;
			}
		} else {
			while (*p && *p != ',') {
				if (*p == '"')
					return -1;
				if (len < 63)
					fields[n][len++] = *p;
				p++;
			}
		}
		fields[n++][len] = '\0';
		if (!*p)
			return n;
		if (*p != ',')
			return -1;
		p++;
	}
}

static int column(char header[][64], int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(header[i], name))
			return i;
	fprintf(stderr, "  no CSV column %s\n", name);
	return 0;
}

static void test_csv(void)
{
	static char header[MAX_FIELDS][64], f[MAX_FIELDS][64];
	char *buf = render(OUTPUT_CSV, 2), *lines[MAX_LINES];
	int n, nf, i, ipc, llc, llc_cov, llc_mpki, dtlb, dtlb_cov, dtlb_mpki, pid, comm, cpu;

	n = split_lines(buf, lines, MAX_LINES);
	/* the header once, then four rows per snapshot */
	CHECK_EQ_INT(n, 9);
	if (n < 1)
		goto out;
	nf = csv_split(lines[0], header, MAX_FIELDS);
	CHECK_EQ_INT(nf, 22 + 2 * 4 + 1 + 2);
	CHECK_STR(lines[0], "time,interval_s,pid,comm,cgroup_id,cgroup,exited,cpu_pct,oncpu_ns,"
			    "cycles,instructions,LLC-load-misses,dTLB-load-misses,cycles_coverage,"
			    "instructions_coverage,LLC-load-misses_coverage,"
			    "dTLB-load-misses_coverage,ipc,LLC-load-misses_mpki,"
			    "dTLB-load-misses_mpki,voluntary_switches,involuntary_switches,"
			    "migrations,offcpu_ns,offcpu_sleep_ns,offcpu_blocked_ns,offcpu_other_ns,"
			    "runq_count,runq_total_ns,runq_avg_ns,runq_p50_ns,"
			    "runq_p99_ns,runq_max_ns");
	for (i = 1; i < n; i++)
		if (!CHECK_EQ_INT(csv_split(lines[i], f, MAX_FIELDS), nf))
			fprintf(stderr, "  line %d: %s\n", i, lines[i]);
	if (n != 9 || nf < 0)
		goto out;

	pid = column(header, nf, "pid");
	comm = column(header, nf, "comm");
	cpu = column(header, nf, "cpu_pct");
	ipc = column(header, nf, "ipc");
	llc = column(header, nf, "LLC-load-misses");
	llc_cov = column(header, nf, "LLC-load-misses_coverage");
	llc_mpki = column(header, nf, "LLC-load-misses_mpki");
	dtlb = column(header, nf, "dTLB-load-misses");
	dtlb_cov = column(header, nf, "dTLB-load-misses_coverage");
	dtlb_mpki = column(header, nf, "dTLB-load-misses_mpki");

	csv_split(lines[1], f, MAX_FIELDS);
	CHECK_STR(f[0], "2023-11-14T22:13:20.123Z");
	CHECK_STR(f[pid], "100");
	CHECK_STR(f[comm], "worker");
	CHECK_STR(f[column(header, nf, "cgroup")],
		  "/system.slice/averyveryverylong.slice/x.service");
	CHECK_STR(f[cpu], "25.00");
	CHECK_STR(f[ipc], "1.5000");
	CHECK_STR(f[dtlb], "600");
	CHECK_STR(f[dtlb_cov], "0.5000");
	CHECK_STR(f[dtlb_mpki], "0.2000");
	/* not counting: empty fields */
	CHECK_STR(f[llc], "");
	CHECK_STR(f[llc_cov], "");
	CHECK_STR(f[llc_mpki], "");

	/* quotes doubled; control bytes and bad UTF-8 replaced by U+FFFD */
	csv_split(lines[2], f, MAX_FIELDS);
	CHECK_STR(f[comm], "a\"b\\c,d\xef\xbf\xbd");
	CHECK_SUBSTR(lines[2], ",\"a\"\"b\\c,d\xef\xbf\xbd\",");
	CHECK_STR(f[column(header, nf, "cgroup")], "/a\xef\xbf\xbd"
						   "b\xef\xbf\xbd/\xef\xbf\xbd[2J\xc3\xa9");

	csv_split(lines[4], f, MAX_FIELDS);
	CHECK_STR(f[column(header, nf, "cgroup")], "");

	csv_split(lines[3], f, MAX_FIELDS);
	CHECK_STR(f[column(header, nf, "exited")], "1");
	CHECK_STR(f[column(header, nf, "cycles")], "");
	CHECK_STR(f[column(header, nf, "cycles_coverage")], "0.0000");
	CHECK_STR(f[ipc], "");

	csv_split(lines[4], f, MAX_FIELDS);
	CHECK_STR(f[pid], "");
	CHECK_STR(f[comm], "[overflow]");
	CHECK_STR(f[ipc], "");

	CHECK_STR(lines[1], lines[5]);
	CHECK(!strstr(lines[1], "nan") && !strstr(lines[3], "nan") && !strstr(lines[4], "nan"));
out:
	free(buf);
}

static void test_table(void)
{
	char *buf = render(OUTPUT_TABLE, 1), *lines[MAX_LINES];
	int n;

	n = split_lines(buf, lines, MAX_LINES);
	/*
	 * blank line, title, column header, four rows, the note of the
	 * cgroup-less overflow row (the fixture's has no cgroup), the overflow
	 * note
	 */
	CHECK_EQ_INT(n, 9);
	if (n != 9)
		goto out;
	CHECK_STR(lines[0], "");
	CHECK_SUBSTR(lines[1], "interval 1.00s  4 processes");
	CHECK_SUBSTR(lines[2], "PID COMM");
	CHECK_SUBSTR(lines[2], " IPC ");
	CHECK_SUBSTR(lines[2], "LLC-MPKI");
	CHECK_SUBSTR(lines[2], "dTLB-MPKI");
	CHECK_SUBSTR(lines[3], "    100 worker ");
	/* a path cut to its column is marked, from a '/' */
	CHECK_SUBSTR(lines[3], " .../x.service ");
	CHECK_SUBSTR(lines[4], "a\"b\\c,d\xef\xbf\xbd ");
	CHECK_SUBSTR(lines[4], " /a\xef\xbf\xbd"
			       "b\xef\xbf\xbd/\xef\xbf\xbd[2J\xc3\xa9 ");
	CHECK(!strchr(buf, '\x1b') && !strchr(buf, '\x01') && !strstr(buf, "\xff"));
	CHECK_SUBSTR(lines[3], "  25.0 ");
	/* cycles and instructions multiplexed separately (50% coverage): marked */
	CHECK_SUBSTR(lines[3], "  1.50* ");
	/*
	 * IPC, then one MPKI column per miss event: LLC not counting, dTLB 600
	 * misses (300 counted in half the time) per 3,000,000 instructions =
	 * 0.20 per 1000; then the switches. No PMU here counts a miss event
	 * (nor the emulated arm64 guest's), so this is the MPKI end to end.
	 */
	CHECK_SUBSTR(lines[3], "  1.50*         -      0.20       5       6 ");
	CHECK_SUBSTR(lines[5], "gone*");
	CHECK_SUBSTR(lines[6], "      - [overflow]");
	CHECK_SUBSTR(lines[7], "([overflow] in cgroup -: processes (");
	CHECK_SUBSTR(lines[7], "their figures are in no cgroup's");
	CHECK_SUBSTR(lines[8], "credits folded into [overflow] rows");
	CHECK(!strstr(buf, "nan") && !strstr(buf, "inf"));
out:
	free(buf);
}

/* pmbpf stat's report, table and JSON: the MPKI of the summed figures. */
static void test_command(void)
{
	struct output o = { .format = OUTPUT_TABLE };
	char *const argv[] = { "cmd", "arg", NULL };
	char *buf = NULL, *lines[32], *line = NULL;
	size_t len = 0;
	int n, i;

	o.f = open_memstream(&buf, &len);
	output__command(&o, &snap, &snap.rows[0].f, argv, 0, 1);
	fclose(o.f);
	n = split_lines(buf, lines, 32);
	for (i = 0; i < n; i++)
		if (strstr(lines[i], "dTLB-load-misses"))
			line = lines[i];
	CHECK(line != NULL);
	if (line) {
		CHECK_SUBSTR(line, " 600      dTLB-load-misses ");
		CHECK_SUBSTR(line, "(50.0% counted) # 0.20 per 1000 instructions");
	}
	free(buf);

	buf = NULL;
	o.format = OUTPUT_JSON;
	o.f = open_memstream(&buf, &len);
	output__command(&o, &snap, &snap.rows[0].f, argv, 0, 1);
	fclose(o.f);
	CHECK(json_valid(buf));
	CHECK_SUBSTR(buf, "\"type\":\"command\"");
	CHECK_SUBSTR(buf, "\"mpki\":{\"LLC-load-misses\":null,\"dTLB-load-misses\":0.2000}");
	free(buf);
}

/* An interval with no rows: sorting and rendering it is defined behaviour. */
static void test_empty_snapshot(void)
{
	struct snapshot empty = { .time_ns = TIME_NS,
				  .interval_ns = 1000000000ULL,
				  .nr_events = 4,
				  .events = events,
				  .attach = "tp_btf" };
	struct output o = { .format = OUTPUT_TABLE, .procs = true, .cgroups = true };
	char *buf = NULL;
	size_t len = 0;

	snapshot__sort_cpu(&empty);
	snapshot__sort_cgroups(&empty);
	o.f = open_memstream(&buf, &len);
	if (!CHECK(o.f != NULL))
		return;
	CHECK_EQ_INT(output__snapshot(&o, &empty), 0);
	fclose(o.f);
	CHECK_SUBSTR(buf, "0 processes  0 cgroups");
	free(buf);
}

/* A stream that counts the writes it gets (unbuffered: one per fwrite or fputc). */
static ssize_t count_write(void *cookie, const char *buf, size_t size)
{
	size_t *n = cookie;

	(void)buf;
	n[0]++;
	n[1] += size;
	return size;
}

/*
 * 10,000 rows of JSON and of CSV reach the stream in large pieces, not a
 * stdio call per character or number: at least 4 KiB a call on average
 * (the renderers format into an 8 KiB buffer). The cost per row is
 * measured by bench/render, not here (a loaded host).
 */
static void test_few_writes(void)
{
	static const enum output_format fmts[] = { OUTPUT_JSON, OUTPUT_CSV };
	struct snapshot big = snap;
	size_t r, k;

	big.rows = NULL;
	big.nr_rows = big.cap_rows = 0;
	big.threads = NULL;
	big.nr_threads = big.cap_threads = 0;
	big.cgroups = NULL;
	big.nr_cgroups = big.cap_cgroups = 0;
	big.strings = NULL;
	for (r = 0; r < 10000; r++) {
		struct proc_row *row = snapshot__add_row(&big);

		if (!row)
			return;
		*row = snap.rows[0];
		row->pid = 1000 + r;
	}
	for (k = 0; k < 2; k++) {
		cookie_io_functions_t io = { .write = count_write };
		struct output o = { .format = fmts[k], .procs = true };
		size_t n[2] = {};

		o.f = fopencookie(n, "w", io);
		if (!o.f)
			return;
		setvbuf(o.f, NULL, _IONBF, 0);
		CHECK_EQ_INT(output__snapshot(&o, &big), 0);
		fclose(o.f);
		check_record(n[1] > 10000 * 100 && n[0] * 4096 <= n[1], __FILE__, __LINE__,
			     "%s: %zu bytes in %zu writes", k ? "CSV" : "JSON", n[1], n[0]);
	}
	snapshot__free(&big);
}

int main(void)
{
	build_snapshot();
	test_fmt_count();
	test_format_parse();
	test_json();
	test_json_empty();
	test_json_start();
	test_csv();
	test_table();
	test_command();
	test_empty_snapshot();
	test_few_writes();
	snapshot__free(&snap);
	return check_summary();
}
