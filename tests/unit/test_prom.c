// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Prometheus exposition: counters accumulated from interval deltas, label
 * escaping, the run-queue histogram, the idle task kept out of the root
 * cgroup, top-K selection, the lingering cap and the grace period.
 */
#include <stdio.h>
#include <string.h>
#include "check.h"

#ifdef PMBPF_MINIMAL
int main(void)
{
	return 0; /* serve is not part of minimal (static) builds */
}
#else
#include "prom.h"

#define S 1000000000ULL

static struct event_info events[2];
static struct snapshot snap;
static struct prom_self self = { .version = "test" };
static struct strbuf out;
static __u64 now = 100 * S;
static bool removed;

static bool exists(const char *path, void *ctx)
{
	return !(removed && !strcmp(path, "/gone"));
}

static void begin(void)
{
	snapshot__reset(&snap);
	snap.interval_ns = S;
	snap.nr_events = 2;
	snap.events = events;
	snap.attach = "tp_btf";
	now += S;
}

static struct proc_row *proc(__u32 pid, const char *comm, const char *cgroup, __u64 cpu_ms)
{
	struct proc_row *r = snapshot__add_row(&snap);

	r->pid = pid;
	r->cgroup_id = cgroup && !strcmp(cgroup, "/") ? 1 : 7;
	r->cgroup = cgroup;
	r->start_ns = pid * 10;
	snprintf(r->comm, sizeof(r->comm), "%s", comm);
	r->f.n[PMBPF_N_ONCPU_NS] = cpu_ms * 1000000ULL;
	r->f.ev[1].value = cpu_ms;
	r->f.ev[1].enabled = r->f.ev[1].running = r->f.n[PMBPF_N_ONCPU_NS];
	return r;
}

static struct cgroup_row *cgroup(__u64 id, const char *path, __u64 cpu_ms)
{
	struct cgroup_row *c = snapshot__add_cgroup(&snap);

	c->id = id;
	c->path = path;
	c->total.n[PMBPF_N_ONCPU_NS] = cpu_ms * 1000000ULL;
	c->total.ev[1].value = cpu_ms;
	c->total.ev[1].enabled = c->total.ev[1].running = c->total.n[PMBPF_N_ONCPU_NS];
	return c;
}

static const char *render(struct prom_state *ps)
{
	CHECK_EQ_INT(prom__update(ps, &snap, now), 0);
	prom__render(ps, &snap, &self, &out);
	CHECK(!out.failed);
	return out.buf;
}

static void test_label_escaping(void)
{
	struct strbuf sb = {};

	prom__label_value(&sb, "a\"b\\c\nd");
	CHECK_STR(sb.buf, "\"a\\\"b\\\\c\\nd\"");
	sb.len = 0;
	/* invalid UTF-8 (a lone continuation byte, a truncated sequence) is replaced */
	prom__label_value(&sb, "x\x80y\xc3");
	CHECK_STR(sb.buf, "\"x?y?\"");
	sb.len = 0;
	prom__label_value(&sb, "caf\xc3\xa9");
	CHECK_STR(sb.buf, "\"caf\xc3\xa9\"");
	strbuf__free(&sb);
}

static void test_counters(void)
{
	struct prom_opts o = { .top_k = 2, .grace_ns = 3 * S, .cgroup_exists = exists };
	struct prom_state *ps = prom__new(&o);
	const char *t;
	struct proc_row *idle;

	begin();
	idle = proc(0, "[idle]", "/", 900);
	(void)idle;
	proc(10, "web", "/svc", 300);
	cgroup(1, "/", 1200);
	cgroup(7, "/svc", 300)->ci = (struct container_info){ .runtime = "docker", .id = "abc" };
	snap.cgroups[0].id = 1;
	t = render(ps);
	begin();
	proc(10, "web", "/svc", 200);
	cgroup(1, "/", 200);
	cgroup(7, "/svc", 200);
	t = render(ps);
	/* deltas add up; the root does not count the idle task */
	CHECK_SUBSTR(t, "pmbpf_cgroup_cpu_seconds_total{cgroup=\"/svc\",runtime=\"docker\","
			"container_id=\"abc\",pod_uid=\"\"} 0.500000000\n");
	CHECK_SUBSTR(t,
		     "pmbpf_cgroup_cpu_seconds_total{cgroup=\"/\",runtime=\"\",container_id=\"\","
		     "pod_uid=\"\"} 0.500000000\n");
	CHECK_SUBSTR(t, "pmbpf_idle_cpu_seconds_total 0.900000000\n");
	CHECK_SUBSTR(t, "pmbpf_process_cpu_seconds_total{pid=\"10\",comm=\"web\",cgroup=\"/svc\"} "
			"0.500000000\n");
	/* counting events only; the other has a state, not a zero */
	CHECK_SUBSTR(t, "pmbpf_cgroup_perf_events_total{cgroup=\"/svc\",runtime=\"docker\","
			"container_id=\"abc\",pod_uid=\"\",event=\"page-faults\"} 500\n");
	CHECK(!strstr(t, "event=\"cycles\"} "));
	CHECK_SUBSTR(t, "pmbpf_event_supported{event=\"cycles\",class=\"hardware\","
			"state=\"not-supported\"} 0\n");
	/* every family once, histogram with 24 buckets ending at +Inf */
	CHECK_SUBSTR(t, "# TYPE pmbpf_cgroup_runqueue_latency_seconds histogram\n");
	CHECK_SUBSTR(t, "le=\"0.000002\"} 0\n");
	CHECK_SUBSTR(t, "le=\"8.388608\"} 0\n");
	CHECK_SUBSTR(t, "le=\"+Inf\"} 0\n");
	CHECK_SUBSTR(t, "# TYPE pmbpf_process_runqueue_latency_seconds summary\n");
	prom__free(ps);
}

static void test_histogram(void)
{
	struct prom_opts o = { .top_k = 0, .grace_ns = S };
	struct prom_state *ps = prom__new(&o);
	struct cgroup_row *c;
	const char *t;

	begin();
	c = cgroup(7, "/h", 1);
	c->total.runq_hist[0] = 3; /* < 2 us */
	c->total.runq_hist[3] = 2; /* [8, 16) us */
	c->total.runq_hist[PMBPF_RUNQ_SLOTS - 1] = 1; /* the last slot: only in +Inf */
	c->total.n[PMBPF_N_RUNQ_TOTAL_NS] = 5000000;
	t = render(ps);
	CHECK_SUBSTR(t, "le=\"0.000002\"} 3\n");
	CHECK_SUBSTR(t, "le=\"0.000008\"} 3\n");
	CHECK_SUBSTR(t, "le=\"0.000016\"} 5\n");
	CHECK_SUBSTR(t, "le=\"8.388608\"} 5\n");
	CHECK_SUBSTR(t, "le=\"+Inf\"} 6\n");
	CHECK_SUBSTR(t, "pmbpf_cgroup_runqueue_latency_seconds_count{cgroup=\"/h\",runtime=\"\","
			"container_id=\"\",pod_uid=\"\"} 6\n");
	CHECK_SUBSTR(t, "pmbpf_cgroup_runqueue_latency_seconds_sum{cgroup=\"/h\",runtime=\"\","
			"container_id=\"\",pod_uid=\"\"} 0.005000000\n");
	/* no process series with --top-k 0 */
	CHECK(!strstr(t, "pmbpf_process_cpu_seconds_total{"));
	prom__free(ps);
}

static size_t exported(struct prom_state *ps)
{
	size_t p, c, t;

	prom__counts(ps, &p, &c, &t);
	return p;
}

static void test_top_k_and_grace(void)
{
	struct prom_opts o = { .top_k = 2, .grace_ns = 3 * S, .cgroup_exists = exists };
	struct prom_state *ps = prom__new(&o);
	const char *t;
	int i;

	/* a steady pair holds the top 2; a small newcomer does not displace them */
	for (i = 0; i < 3; i++) {
		begin();
		proc(1, "a", "/", 500);
		proc(2, "b", "/", 400);
		proc(3, "c", "/", 10);
		t = render(ps);
	}
	CHECK(strstr(t, "pid=\"1\""));
	CHECK(strstr(t, "pid=\"2\""));
	CHECK(!strstr(t, "pid=\"3\""));
	CHECK_EQ_U64(exported(ps), 2);
	/* a hog at 100% displaces the steady 40% within 30 s; the one it displaced lingers */
	for (i = 0; i < 30; i++) {
		begin();
		proc(1, "a", "/", 500);
		proc(2, "b", "/", 400);
		proc(4, "hog", "/", 1000);
		t = render(ps);
		if (strstr(t, "pid=\"4\""))
			break;
	}
	CHECK(i > 0 && i < 30);
	CHECK(strstr(t, "pid=\"2\""));
	CHECK_EQ_U64(exported(ps), 3);
	/* the hog exits: its final value stays for the grace period, then goes */
	begin();
	proc(4, "hog", "/", 300)->exited = true;
	proc(1, "a", "/", 500);
	t = render(ps);
	CHECK_SUBSTR(t, "pmbpf_process_cpu_seconds_total{pid=\"4\",comm=\"hog\",cgroup=\"/\"} "
			"1.300000000\n");
	for (i = 0; i < 2; i++) {
		begin();
		proc(1, "a", "/", 500);
		t = render(ps);
		CHECK(strstr(t, "pid=\"4\""));
	}
	begin();
	proc(1, "a", "/", 500);
	t = render(ps);
	CHECK(!strstr(t, "pid=\"4\""));
	/* many short-lived processes: never more than 2 x K series */
	for (i = 0; i < 50; i++) {
		int j;

		begin();
		for (j = 0; j < 10; j++)
			proc(1000 + i * 10 + j, "short", "/", 600 + j)->exited = true;
		render(ps);
		CHECK(exported(ps) <= 4);
	}
	prom__free(ps);
}

static void test_removed_cgroup(void)
{
	struct prom_opts o = { .top_k = 1, .grace_ns = 2 * S, .cgroup_exists = exists };
	struct prom_state *ps = prom__new(&o);
	const char *t;
	int i;

	removed = false;
	begin();
	cgroup(9, "/gone", 100);
	t = render(ps);
	CHECK(strstr(t, "cgroup=\"/gone\""));
	removed = true;
	for (i = 0; i < 2; i++) {
		begin();
		t = render(ps);
		CHECK(strstr(t, "cgroup=\"/gone\""));
	}
	begin();
	t = render(ps);
	CHECK(!strstr(t, "cgroup=\"/gone\""));
	removed = false;
	prom__free(ps);
}

int main(void)
{
	memset(events, 0, sizeof(events));
	CHECK_EQ_INT(event__parse("cycles", &events[0].spec), 0);
	events[0].state = EVENT_NOT_SUPPORTED;
	events[0].slot = -1;
	CHECK_EQ_INT(event__parse("page-faults", &events[1].spec), 0);
	events[1].state = EVENT_COUNTING;
	test_label_escaping();
	test_counters();
	test_histogram();
	test_top_k_and_grace();
	test_removed_cgroup();
	snapshot__free(&snap);
	strbuf__free(&out);
	return check_summary();
}
#endif
