// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pmbpf doctor: what this host offers pmbpf, before it is deployed: kernel
 * and BTF, cgroup v2, capabilities, perf_event_paranoid, each default event
 * and why it is not counting, the tracepoint flavour, BPF statistics; and a
 * trial load of the real programs. Exit 0 when pmbpf can run here.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <bpf/btf.h>
#include "cgroup.h"
#include "cmdrun.h"
#include "commands.h"
#include "host.h"
#include "json_writer.h"
#include "pmu.h"
#include "kfeatures.h"
#include "session.h"
#include "util.h"

#define MAX_CHECKS 24
#define MAX_MAPS   16

static const struct cmdopt options[] = {
	{ 'o', "output", "FORMAT", "text (default) or json" },
	{ 'e', "events", "LIST", "events to check (default " DEFAULT_EVENTS ")" },
	{ 'v', "verbose", NULL,
	  "libbpf debug output during the trial load, with each\nprogram's verifier statistics (time, instructions, states)" },
	{ CMDOPT_HELP },
	{},
};

const struct cmdopts doctor_cmdopts = {
	.cmd = "doctor",
	.head = "Usage: pmbpf doctor [-o text|json] [-e EVENTS] [-v]\n"
		"Check what this host offers pmbpf: kernel and BTF, cgroup v2, capabilities,\n"
		"perf_event_paranoid, each event's state and why, the tracepoint flavour and\n"
		"fallbacks; then load the BPF programs once. Exit 0 when pmbpf can run.\n",
	.opts = options,
};

enum status { ST_OK, ST_WARN, ST_FAIL, ST_INFO };

static const char *const status_str[] = { "ok", "warn", "fail", "info" };

struct check {
	const char *name;
	enum status st;
	char detail[512];
};

struct event_check {
	struct event_spec spec;
	enum event_state state;
	int err;
	char reason[256];
};

struct doctor {
	struct check checks[MAX_CHECKS];
	int nr_checks;
	struct event_check ev[PMBPF_MAX_EVENTS];
	int nr_ev;
	bool runnable;
	bool have_pmu;
	bool hypervisor;
	char pmu_dev[256];
	int paranoid;
	bool cap_bpf, cap_perfmon, cap_admin;
	const char *attach; /* from the trial load, or NULL */
	char meaning[6][512];
	int nr_meaning;
	struct features feat;
	struct map_memory maps[MAX_MAPS];
	int nr_maps;
	__u64 map_bytes;
	int possible_cpus, online_cpus;
	__u32 max_procs;
	__u32 value_size; /* of the counts map: its counting slots only */
};

static struct check *add(struct doctor *d, const char *name, enum status st, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static struct check *add(struct doctor *d, const char *name, enum status st, const char *fmt, ...)
{
	struct check *c = &d->checks[d->nr_checks < MAX_CHECKS ? d->nr_checks++ : MAX_CHECKS - 1];
	va_list ap;

	c->name = name;
	c->st = st;
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
	if (st == ST_FAIL)
		d->runnable = false;
	return c;
}

static int read_int(const char *path, int *v)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%d", v) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

static void check_kernel(struct doctor *d)
{
	struct utsname u;
	if (!uname(&u))
		add(d, "kernel", ST_INFO, "%s %s", u.release, u.machine);
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		add(d, "btf", ST_FAIL,
		    "no /sys/kernel/btf/vmlinux (%s): CO-RE needs a kernel built with CONFIG_DEBUG_INFO_BTF=y",
		    strerror(errno));
		return;
	}
	add(d, "btf", ST_OK, "/sys/kernel/btf/vmlinux: CO-RE relocations resolve against it");
	if (kernel__has_tp_btf())
		add(d, "tracepoints", ST_OK,
		    "tp_btf (BTF-typed sched_switch/sched_wakeup tracepoints); raw_tp is the fallback if tp_btf fails to load");
	else
		add(d, "tracepoints", ST_WARN,
		    "no btf_trace_sched_switch in the kernel BTF: raw_tp tracepoints will be used (same figures, slightly more costly)");
}

static void meaning_add(struct doctor *d, const char *text)
{
	if (d->nr_meaning < (int)(sizeof(d->meaning) / sizeof(d->meaning[0])))
		snprintf(d->meaning[d->nr_meaning++], sizeof(d->meaning[0]), "%s", text);
}

/* Each kernel feature pmbpf's programs use, on or off, and what changes without it. */
static void check_features(struct doctor *d)
{
	int missing;

	features__probe(&d->feat);
	missing = features__missing_required(&d->feat);
	if (missing >= 0)
		add(d, "kernel-features", ST_FAIL, "missing %s (since Linux %s): pmbpf cannot load",
		    features__table[missing].name, features__table[missing].since);
	if (!features__exit_records(&d->feat))
		meaning_add(
			d,
			"exits: this kernel cannot sum an exited process over CPUs in BPF (bpf_loop 5.17, map_lookup_percpu_elem 5.19): a process's last counts are reported at the next read instead of through the ring buffer; nothing is lost, and a PID reused in the same cgroup before that read is merged with the exited one");
	if (d->feat.on[FEAT_TP_BTF] && !d->feat.on[FEAT_TASK_STORAGE])
		meaning_add(
			d,
			"no task storage (5.11): raw_tp programs with a per-thread hash are used: same figures, more cost per context switch");
}

static void check_cgroup(struct doctor *d)
{
	char mnt[4096];

	if (cgroup__find_mount("/proc/self/mountinfo", mnt, sizeof(mnt)))
		add(d, "cgroup2", ST_WARN,
		    "no cgroup2 mount: per-cgroup (container) figures have no paths and the -G filter does not work");
	else
		add(d, "cgroup2", ST_OK,
		    "mounted at %s: per-cgroup and container figures available", mnt);
}

struct stale {
	int busy;
	char first[256];
};

static void count_stale(const char *path, bool busy, void *ctx)
{
	struct stale *st = ctx;

	st->busy += busy;
	if (!st->first[0])
		snprintf(st->first, sizeof(st->first), "%s", path);
}

/* Cgroups of a pmbpf stat or profile that was killed (the next one removes empty ones). */
static void check_stale_stat_cgroups(struct doctor *d)
{
	struct stale st = {};
	int n = cmdrun__stale_cgroups(false, count_stale, &st);

	if (n)
		add(d, "stale-cgroups", ST_WARN,
		    "%d cgroup%s left by a killed pmbpf stat or profile (%d holding processes), e.g. %s",
		    n, n == 1 ? "" : "s", st.busy, st.first);
}

static void check_caps(struct doctor *d)
{
	struct caps c;
	int last = 0, err;

	err = caps__read(&c);
	if (err) {
		add(d, "capabilities", ST_WARN, "cannot read capabilities: %s", strerror(-err));
		return;
	}
	d->cap_bpf = c.bpf;
	d->cap_perfmon = c.perfmon;
	d->cap_admin = c.admin;
	if (!read_int("/proc/sys/kernel/cap_last_cap", &last) && last < 39 /* CAP_BPF */)
		add(d, "kernel-caps", ST_WARN,
		    "kernel knows no CAP_BPF/CAP_PERFMON (before 5.8): only CAP_SYS_ADMIN (root) works");
	if (d->cap_admin || (d->cap_bpf && d->cap_perfmon))
		add(d, "capabilities", ST_OK,
		    "held: CAP_BPF %s, CAP_PERFMON %s, CAP_SYS_ADMIN %s; needed: CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN)",
		    d->cap_bpf ? "yes" : "no", d->cap_perfmon ? "yes" : "no",
		    d->cap_admin ? "yes" : "no");
	else
		add(d, "capabilities", ST_FAIL,
		    "missing %s%s%s: pmbpf needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN); run as root or grant them (AmbientCapabilities= in the unit)",
		    d->cap_bpf ? "" : "CAP_BPF", !d->cap_bpf && !d->cap_perfmon ? " and " : "",
		    d->cap_perfmon ? "" : "CAP_PERFMON");
}

static void check_sysctls(struct doctor *d)
{
	int v;

	d->paranoid = 2;
	if (read_int("/proc/sys/kernel/perf_event_paranoid", &v)) {
		add(d, "perf_event_paranoid", ST_WARN,
		    "cannot read /proc/sys/kernel/perf_event_paranoid");
	} else {
		d->paranoid = v;
		if (v > 2 && !d->cap_admin)
			/* Debian's level 3: perf_event_open needs CAP_SYS_ADMIN */
			add(d, "perf_event_paranoid", ST_WARN,
			    "%d: above 2 (Debian's default), opening any perf event needs CAP_SYS_ADMIN, CAP_PERFMON is not enough: no perf counter (CPU time, switches and run-queue latency still work); fix, as root: " PARANOID_FIX,
			    v);
		else if (v > 2)
			/* root counts; the service, with CAP_PERFMON only, does not */
			add(d, "perf_event_paranoid", ST_WARN,
			    "%d: above 2 (Debian's default): counting here only by CAP_SYS_ADMIN; pmbpf.service, which holds CAP_BPF and CAP_PERFMON only, gets no perf counter; fix, as root: " PARANOID_FIX,
			    v);
		else if (d->cap_perfmon || d->cap_admin || v <= 0)
			add(d, "perf_event_paranoid", ST_OK, "%d: CPU-wide counters allowed (%s)",
			    v,
			    d->cap_perfmon || d->cap_admin ? "CAP_PERFMON overrides it" :
							     "paranoid <= 0");
		else
			add(d, "perf_event_paranoid", ST_WARN,
			    "%d: CPU-wide counters need CAP_PERFMON (or paranoid <= 0)", v);
	}
	if (!read_int("/proc/sys/kernel/unprivileged_bpf_disabled", &v))
		add(d, "unprivileged_bpf_disabled", ST_INFO,
		    "%d (does not matter: pmbpf loads BPF with CAP_BPF)", v);
	if (!read_int("/proc/sys/kernel/bpf_stats_enabled", &v))
		add(d, "bpf_stats", v ? ST_OK : ST_INFO,
		    v ? "kernel.bpf_stats_enabled=1: per-program run time and runs are measured" :
			"kernel.bpf_stats_enabled=0: per-program run time and run counts read 0; sysctl kernel.bpf_stats_enabled=1 measures them (costs ~20-30 ns per program run)");
}

/* pmu__available() decides; sysfs names the core PMUs. */
static void find_pmu(struct doctor *d)
{
	const struct pmu *all;
	size_t n = 0;
	int nr, i;

	d->hypervisor = host__cpu()->hypervisor;
	d->have_pmu = pmu__available();
	all = pmus__all(&nr);
	for (i = 0; i < nr && n < sizeof(d->pmu_dev); i++)
		if (all[i].core)
			n += snprintf(d->pmu_dev + n, sizeof(d->pmu_dev) - n, "%s%s", n ? ", " : "",
				      all[i].name);
}

/*
 * Counter health: how many general-purpose counters each core PMU has
 * (where the kernel exposes it), whether the NMI watchdog holds one, and
 * whether each requested group fits.
 */
static void check_counters(struct doctor *d, const struct session_opts *so)
{
	const struct pmu *all;
	int nr, i, g, wd = -1, counters = -1;
	char buf[256];
	size_t n = 0;

	all = pmus__all(&nr);
	buf[0] = '\0';
	for (i = 0; i < nr; i++) {
		if (!all[i].core)
			continue;
		if (all[i].num_counters > 0 && (counters < 0 || all[i].num_counters < counters))
			counters = all[i].num_counters;
		n += snprintf(buf + n, n < sizeof(buf) ? sizeof(buf) - n : 0, "%s%s: %d",
			      n ? ", " : "", all[i].name, all[i].num_counters);
	}
	if (!n)
		add(d, "counters", ST_INFO, "no core PMU in sysfs: no general-purpose counters");
	else if (counters < 0)
		add(d, "counters", ST_INFO,
		    "general-purpose counters: not exposed by this kernel (caps/num_counters absent)");
	else
		add(d, "counters", ST_OK, "general-purpose counters per core PMU: %s", buf);
	if (!read_int("/proc/sys/kernel/nmi_watchdog", &wd))
		add(d, "nmi_watchdog", wd && d->have_pmu ? ST_WARN : ST_INFO,
		    wd ? "kernel.nmi_watchdog=1: it holds a hardware counter on every CPU (sysctl kernel.nmi_watchdog=0 frees it)" :
			 "kernel.nmi_watchdog=0: no counter held by the watchdog");
	for (g = 0; g < PMBPF_MAX_EVENTS; g++) {
		int hw = 0, members = 0;

		for (i = 0; i < so->nr_events; i++) {
			if (so->events[i].group != g)
				continue;
			members++;
			hw += !!(so->events[i].kind & EVENT_HW);
		}
		if (!members)
			continue;
		if (counters < 0)
			add(d, "group", ST_INFO,
			    "group %d: %d hardware events; whether it fits is not known (counter number not exposed)",
			    g, hw);
		else
			add(d, "group", hw + (wd > 0) <= counters ? ST_OK : ST_WARN,
			    "group %d: %d hardware events on %d counters%s: %s", g, hw, counters,
			    wd > 0 ? " (one held by the NMI watchdog)" : "",
			    hw + (wd > 0) <= counters ? "fits" : "may not be scheduled: split it");
	}
}

static void check_events(struct doctor *d, const struct session_opts *so)
{
	int i, hw = 0, hw_ok = 0;

	find_pmu(d);
	if (d->have_pmu)
		add(d, "pmu", ST_OK, "hardware counters open; core PMUs: %s%s",
		    d->pmu_dev[0] ? d->pmu_dev : "none named in sysfs",
		    d->hypervisor ? " (virtualized: the hypervisor passes counters through)" : "");
	else
		add(d, "pmu", ST_WARN,
		    "no core PMU (/sys/bus/event_source/devices/cpu missing)%s: hardware events cannot be counted",
		    d->hypervisor ? "; a hypervisor is present and exposes no PMU to this guest" :
				    "");

	check_counters(d, so);
	for (i = 0; i < so->nr_events; i++) {
		struct event_check *e = &d->ev[d->nr_ev++];
		struct perf_event_attr attr = {
			.size = sizeof(attr),
			.type = so->events[i].type,
			.config = so->events[i].config,
			.config1 = so->events[i].config1,
			.config2 = so->events[i].config2,
		};
		long fd;

		e->spec = so->events[i];
		fd = perf_event_open(&attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
		e->err = fd < 0 ? errno : 0;
		if (fd >= 0)
			close((int)fd);
		e->state = event_state__from_errno(e->err);
		switch (e->state) {
		case EVENT_COUNTING:
			snprintf(e->reason, sizeof(e->reason), "counts on this host");
			break;
		case EVENT_NOT_SUPPORTED:
			if ((e->spec.kind & EVENT_HW) && !d->have_pmu)
				snprintf(e->reason, sizeof(e->reason), "no PMU%s",
					 d->hypervisor ?
						 " (virtual machine without a virtual PMU)" :
						 "");
			else
				snprintf(e->reason, sizeof(e->reason),
					 "this PMU has no such event (%s)", strerror(e->err));
			break;
		case EVENT_PERMISSION_DENIED:
			snprintf(e->reason, sizeof(e->reason),
				 "permission denied: needs CAP_PERFMON (perf_event_paranoid=%d)",
				 d->paranoid);
			break;
		default:
			snprintf(e->reason, sizeof(e->reason), "refused by the kernel: %s",
				 strerror(e->err));
		}
		if (e->spec.kind & EVENT_HW) {
			hw++;
			hw_ok += e->state == EVENT_COUNTING;
		}
	}
	if (hw && !hw_ok)
		snprintf(
			d->meaning[d->nr_meaning++], sizeof(d->meaning[0]),
			"no hardware event counts here: IPC and MPKI are unavailable (shown as '-' or absent, never 0); CPU time, switches, run-queue latency and software events are exact");
	else if (hw_ok < hw)
		snprintf(d->meaning[d->nr_meaning++], sizeof(d->meaning[0]),
			 "some hardware events are unavailable: figures that need them are absent");
	else if (hw)
		snprintf(
			d->meaning[d->nr_meaning++], sizeof(d->meaning[0]),
			"hardware events count: IPC and MPKI per process and container are available (coverage < 1 means multiplexing: counts are scaled)");
}

/* Load, attach and read once, as pmbpf record would. */
static void trial_load(struct doctor *d, const struct session_opts *so)
{
	struct snapshot snap = {};
	long live;
	struct session *s = NULL;
	int err;

	if (!d->runnable) {
		add(d, "bpf-load", ST_FAIL, "skipped: fix the failures above first");
		return;
	}
	err = session__open(&s, so);
	if (err) {
		add(d, "bpf-load", ST_FAIL, "cannot load and attach the BPF programs: %s",
		    strerror(-err));
		return;
	}
	d->attach = session__attach_kind(s);
	d->nr_maps = session__map_memory(s, d->maps, MAX_MAPS, &d->map_bytes);
	d->possible_cpus = session__possible_cpus(s);
	d->max_procs = session__max_procs(s);
	d->value_size = session__value_size(s);
	err = session__collect(s, &snap);
	if (err)
		add(d, "bpf-load", ST_FAIL, "programs loaded (%s) but the first read failed: %s",
		    d->attach, strerror(-err));
	else
		add(d, "bpf-load", ST_OK,
		    "programs loaded and attached (%s), first read: %zu processes", d->attach,
		    snap.nr_rows);
	d->online_cpus = snap.nr_cpus;
	add(d, "bpf-maps", ST_INFO,
	    "%.1f MiB of kernel memory (memlock, charged to pmbpf's memory cgroup); counts map: %u processes x %u B%s (%d possible CPUs, %d online)",
	    d->map_bytes / 1048576.0, d->max_procs, d->value_size,
	    snap.thread_fold ? ", shared (not per CPU)" : " x possible CPUs", d->possible_cpus,
	    d->online_cpus);
	live = host__live_tasks(false);
	if (live > (long)d->max_procs)
		add(d, "capacity", ST_WARN,
		    "%ld live processes, more than the counts map holds (%u): those without an entry are counted in their cgroup's [overflow] row; -m sets its size",
		    live, d->max_procs);
	else
		add(d, "capacity", ST_OK, "%ld live processes, the counts map holds %u", live,
		    d->max_procs);
	if (!strcmp(d->attach, "raw_tp"))
		snprintf(
			d->meaning[d->nr_meaning++], sizeof(d->meaning[0]),
			"raw_tp fallback in use: same figures, a little more cost per context switch");
	snapshot__free(&snap);
	session__close(s);
}

static void print_text(const struct doctor *d)
{
	int i;

	printf("pmbpf doctor\n\n");
	for (i = 0; i < d->nr_checks; i++)
		printf("  %-6s %-26s %s\n", status_str[d->checks[i].st], d->checks[i].name,
		       d->checks[i].detail);
	printf("\nevents (CPU-wide, as pmbpf opens them):\n");
	for (i = 0; i < d->nr_ev; i++)
		printf("  %-20s %-18s %s\n", d->ev[i].spec.name, event_state__str(d->ev[i].state),
		       d->ev[i].reason);
	printf("\nkernel features (BPF):\n");
	for (i = 0; i < FEAT_NR; i++)
		printf("  %-3s %-24s since %-5.5s %s\n", d->feat.on[i] ? "on" : "off",
		       features__table[i].name, features__table[i].since,
		       d->feat.on[i] ? features__table[i].use : features__table[i].without);
	if (d->nr_maps) {
		printf("\nBPF maps (kernel memory, memlock):\n");
		for (i = 0; i < d->nr_maps; i++)
			printf("  %-16s %12llu B  %u entries x %u B%s\n", d->maps[i].name,
			       (unsigned long long)d->maps[i].bytes, d->maps[i].max_entries,
			       d->maps[i].value_size, d->maps[i].percpu ? " x possible CPUs" : "");
		printf("  %-16s %12llu B\n", "total", (unsigned long long)d->map_bytes);
	}
	printf("\nwhat it means for the figures:\n");
	for (i = 0; i < d->nr_meaning; i++)
		printf("  - %s\n", d->meaning[i]);
	printf("\n%s\n", d->runnable ? "pmbpf can run on this host" :
				       "pmbpf cannot run on this host: see the 'fail' lines");
}

static void print_json(const struct doctor *d)
{
	struct json_writer w;
	int i;

	jw_init(&w, stdout);
	jw_start_object(&w);
	jw_key(&w, "runnable");
	jw_bool(&w, d->runnable);
	jw_key(&w, "attach");
	if (d->attach)
		jw_string(&w, d->attach);
	else
		jw_null(&w);
	jw_key(&w, "pmu");
	jw_bool(&w, d->have_pmu);
	jw_key(&w, "hypervisor");
	jw_bool(&w, d->hypervisor);
	jw_key(&w, "perf_event_paranoid");
	jw_s64(&w, d->paranoid);
	jw_key(&w, "capabilities");
	jw_start_object(&w);
	jw_key(&w, "CAP_BPF");
	jw_bool(&w, d->cap_bpf);
	jw_key(&w, "CAP_PERFMON");
	jw_bool(&w, d->cap_perfmon);
	jw_key(&w, "CAP_SYS_ADMIN");
	jw_bool(&w, d->cap_admin);
	jw_end_object(&w);
	jw_key(&w, "checks");
	jw_start_array(&w);
	for (i = 0; i < d->nr_checks; i++) {
		jw_start_object(&w);
		jw_key(&w, "name");
		jw_string(&w, d->checks[i].name);
		jw_key(&w, "status");
		jw_string(&w, status_str[d->checks[i].st]);
		jw_key(&w, "detail");
		jw_string(&w, d->checks[i].detail);
		jw_end_object(&w);
	}
	jw_end_array(&w);
	jw_key(&w, "events");
	jw_start_array(&w);
	for (i = 0; i < d->nr_ev; i++) {
		jw_start_object(&w);
		jw_key(&w, "name");
		jw_string(&w, d->ev[i].spec.name);
		jw_key(&w, "state");
		jw_string(&w, event_state__str(d->ev[i].state));
		jw_key(&w, "error");
		if (d->ev[i].err)
			jw_string(&w, strerror(d->ev[i].err));
		else
			jw_null(&w);
		jw_key(&w, "reason");
		jw_string(&w, d->ev[i].reason);
		jw_end_object(&w);
	}
	jw_end_array(&w);
	jw_key(&w, "features");
	jw_start_array(&w);
	for (i = 0; i < FEAT_NR; i++) {
		jw_start_object(&w);
		jw_key(&w, "name");
		jw_string(&w, features__table[i].name);
		jw_key(&w, "on");
		jw_bool(&w, d->feat.on[i]);
		jw_key(&w, "since");
		jw_string(&w, features__table[i].since);
		jw_key(&w, "required");
		jw_bool(&w, features__table[i].required);
		jw_key(&w, "effect");
		jw_string(&w, d->feat.on[i] ? features__table[i].use : features__table[i].without);
		jw_end_object(&w);
	}
	jw_end_array(&w);
	jw_key(&w, "bpf_maps");
	jw_start_object(&w);
	jw_key(&w, "total_bytes");
	jw_u64(&w, d->map_bytes);
	jw_key(&w, "possible_cpus");
	jw_s64(&w, d->possible_cpus);
	jw_key(&w, "online_cpus");
	jw_s64(&w, d->online_cpus);
	jw_key(&w, "max_procs");
	jw_u64(&w, d->max_procs);
	jw_key(&w, "counts_value_bytes");
	jw_u64(&w, d->value_size);
	jw_key(&w, "maps");
	jw_start_array(&w);
	for (i = 0; i < d->nr_maps; i++) {
		jw_start_object(&w);
		jw_key(&w, "name");
		jw_string(&w, d->maps[i].name);
		jw_key(&w, "bytes");
		jw_u64(&w, d->maps[i].bytes);
		jw_key(&w, "max_entries");
		jw_u64(&w, d->maps[i].max_entries);
		jw_key(&w, "value_size");
		jw_u64(&w, d->maps[i].value_size);
		jw_key(&w, "percpu");
		jw_bool(&w, d->maps[i].percpu);
		jw_end_object(&w);
	}
	jw_end_array(&w);
	jw_end_object(&w);
	jw_key(&w, "meaning");
	jw_start_array(&w);
	for (i = 0; i < d->nr_meaning; i++)
		jw_string(&w, d->meaning[i]);
	jw_end_array(&w);
	jw_end_object(&w);
	putchar('\n');
}

int cmd_doctor(int argc, char **argv)
{
	struct session_opts so = {};
	struct doctor *d;
	const char *events = DEFAULT_EVENTS;
	struct events_error err;
	bool json = false;
	struct cmdopt_getopt g = {};
	int c, n, ret;

	while ((c = cmdopt__next(&doctor_cmdopts, &g, argc, argv)) != -1) {
		switch (c) {
		case 'o':
			if (strcmp(optarg, "json") && strcmp(optarg, "text")) {
				pr_err("unknown output format '%s': use text or json\n", optarg);
				return 2;
			}
			json = !strcmp(optarg, "json");
			break;
		case 'e':
			events = optarg;
			break;
		case 'v':
			so.verbose = true;
			break;
		default:
			cmdopt__default(&doctor_cmdopts, c);
			return 2;
		}
	}
	if (optind < argc) {
		pr_err("unexpected argument '%s'; try 'pmbpf doctor --help'\n", argv[optind]);
		return 2;
	}
	n = events__parse(events, so.events, PMBPF_MAX_EVENTS, &err);
	if (n < 0) {
		pr_err("%s\n", err.msg);
		return 2;
	}
	so.nr_events = n;
	d = calloc(1, sizeof(*d));
	if (!d) {
		pr_err("%s\n", strerror(ENOMEM));
		return 1;
	}
	d->runnable = true;
	check_kernel(d);
	check_features(d);
	check_cgroup(d);
	check_stale_stat_cgroups(d);
	check_caps(d);
	check_sysctls(d);
	check_events(d, &so);
	trial_load(d, &so);
	if (json)
		print_json(d);
	else
		print_text(d);
	ret = d->runnable ? 0 : 1;
	free(d);
	return ret;
}
