// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The cost of rendering one refresh, with no BPF: a snapshot of N processes
 * (or threads) with the four software events, rendered as JSON, CSV and the
 * Prometheus exposition, REPEAT times each. Prints one JSON line per format
 * with the CPU time (user + system) per row.
 *
 *   render [-n ROWS] [-r REPEAT] [-t] [-o FILE]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include "output.h"
#include "prom.h"

static struct event_info events[4];

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* The figures of an idle-ish process: a few ms on a CPU, some faults, switches. */
static void fill(struct proc_row *row, unsigned int k, unsigned int gen)
{
	int i;

	row->pid = 1000 + k;
	snprintf(row->comm, sizeof(row->comm), "worker-%u", k % 97);
	row->cgroup_id = 10 + k % 8;
	row->start_ns = 1000000000ULL + k;
	row->f.n[PMBPF_N_ONCPU_NS] = 1234567ULL * (k % 13 + 1) + gen;
	row->f.n[PMBPF_N_NVCSW] = 2 + k % 5;
	row->f.n[PMBPF_N_NIVCSW] = k % 3;
	row->f.runq_hist[k % 4] = 2;
	row->f.runq_max_ns = 3000 + k;
	for (i = 0; i < 4; i++)
		row->f.ev[i] = (struct pmbpf_reading){ .value = 1000003ULL * (i + 1) * (k % 7 + 1),
						       .enabled = 1000000 + k,
						       .running = 1000000 + k };
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * serve's refresh (prom__update and prom__render) with top_k series: all
 * rows in the first two refreshes, then a tenth of them (the processes
 * that ran; the others' series have not moved).
 */
static int prom_bench(FILE *f, struct snapshot *snap, unsigned int top_k, unsigned int repeat)
{
	struct prom_opts po = { .top_k = top_k,
				.threads = snap->threads_on,
				.grace_ns = 3600000000000ULL };
	struct prom_state *ps = prom__new(&po);
	struct prom_self self = { .version = "bench" };
	struct snapshot part = *snap;
	struct strbuf out = {};
	__u64 now = 1000000000ULL;
	size_t k, n = snap->nr_rows;
	unsigned int r;
	double t0, w0, render = 0;

	part.rows = calloc(n / 10 + 1, sizeof(*part.rows));
	part.threads = calloc(n / 10 + 1, sizeof(*part.threads));
	if (!ps || !part.rows || !part.threads)
		return -1;
	part.nr_rows = part.nr_threads = 0;
	for (k = 0; k < n; k += 10) {
		part.rows[part.nr_rows++] = snap->rows[k];
		if (snap->threads_on)
			part.threads[part.nr_threads++] = snap->threads[k];
	}
	for (r = 0; r < 2; r++, now += 1000000000ULL) {
		prom__update(ps, snap, now);
		prom__render(ps, snap, &self, &out);
	}
	t0 = cpu_s();
	for (r = 0; r < repeat; r++, now += 1000000000ULL) {
		prom__update(ps, &part, now);
		w0 = now_s();
		prom__render(ps, &part, &self, &out);
		render += now_s() - w0;
		fwrite(out.buf, 1, out.len, f);
	}
	printf("{\"format\":\"prometheus\",\"rows\":%zu,\"changed\":%zu,\"top_k\":%u,"
	       "\"threads\":%s,\"us_per_row\":%.3f,\"us_per_changed_row\":%.3f,"
	       "\"render_us_per_refresh\":%.1f,\"bytes\":%zu}\n",
	       n, part.nr_rows, top_k, snap->threads_on ? "true" : "false",
	       (cpu_s() - t0) * 1e6 / repeat / n, (cpu_s() - t0) * 1e6 / repeat / part.nr_rows,
	       render * 1e6 / repeat, out.len);
	strbuf__free(&out);
	prom__free(ps);
	free(part.rows);
	free(part.threads);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const names[4] = { "cpu-clock", "task-clock", "page-faults",
					      "context-switches" };
	static const char *const cgroups[8] = {
		"/system.slice/a.service", "/user.slice/b", "/c", "/d", "/e", "/f", "/g", "/h"
	};
	unsigned int n = 10000, repeat = 20, k, r;
	bool threads = false;
	const char *path = "/dev/null";
	struct snapshot snap;
	struct output o;
	FILE *f;
	int c, i, fmt;
	double t0;

	while ((c = getopt(argc, argv, "n:r:to:")) != -1) {
		switch (c) {
		case 'n':
			n = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			repeat = strtoul(optarg, NULL, 0);
			break;
		case 't':
			threads = true;
			break;
		case 'o':
			path = optarg;
			break;
		default:
			fprintf(stderr, "usage: render [-n ROWS] [-r REPEAT] [-t] [-o FILE]\n");
			return 2;
		}
	}
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		return 1;
	}
	for (i = 0; i < 4; i++) {
		if (event__parse(names[i], &events[i].spec)) {
			fprintf(stderr, "render: %s: cannot parse\n", names[i]);
			return 1;
		}
		events[i].state = EVENT_COUNTING;
		events[i].slot = i;
		events[i].cpus = 2;
	}
	memset(&snap, 0, sizeof(snap));
	snap.time_ns = 1700000000123456789ULL;
	snap.interval_ns = 1000123456ULL;
	snap.nr_cpus = 2;
	snap.nr_events = 4;
	snap.events = events;
	snap.attach = "tp_btf";
	snap.threads_on = threads;
	for (k = 0; k < n; k++) {
		struct proc_row *row = snapshot__add_row(&snap);

		if (!row)
			return 1;
		fill(row, k, 0);
		row->cgroup = cgroups[k % 8];
		if (threads) {
			struct proc_row *t;

			row->nr_threads = 1;
			if (snap.nr_threads == snap.cap_threads) {
				size_t cap = snap.cap_threads ? snap.cap_threads * 2 : 1024;

				snap.threads = realloc(snap.threads, cap * sizeof(*snap.threads));
				if (!snap.threads)
					return 1;
				snap.cap_threads = cap;
			}
			t = &snap.threads[snap.nr_threads++];
			*t = *row;
			t->tid = row->pid;
		}
	}

	for (fmt = 0; fmt < 2; fmt++) {
		memset(&o, 0, sizeof(o));
		o.format = fmt ? OUTPUT_CSV : OUTPUT_JSON;
		o.f = f;
		o.procs = !threads || !fmt;
		o.threads = threads;
		t0 = cpu_s();
		for (r = 0; r < repeat; r++)
			if (output__snapshot(&o, &snap))
				return 1;
		printf("{\"format\":\"%s\",\"rows\":%u,\"threads\":%s,\"us_per_row\":%.3f}\n",
		       fmt ? "csv" : "json", n, threads ? "true" : "false",
		       (cpu_s() - t0) * 1e6 / repeat / (n * (threads && !fmt ? 2 : 1)));
	}

	/* serve: its default top 20, and every process with series */
	prom_bench(f, &snap, 20, repeat);
	prom_bench(f, &snap, n, repeat);
	fclose(f);
	snapshot__free(&snap);
	return 0;
}
