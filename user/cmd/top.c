// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pmbpf top: the interactive view. The figures come from session__collect(),
 * as for record; this file draws a snapshot (top_view.c makes its rows) and
 * handles keys while it waits for the next interval.
 */
#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <linux/perf_event.h>
#include "cgroup.h"
#include "commands.h"
#include "cpi_live.h"
#include "options.h"
#include "session.h"
#include "top_user.h"
#include "top_view.h"
#include "util.h"

static const struct cmdopt options[] = {
	{ OPTION_EVENTS },
	{ OPTION_METRICS },
	{ 'd', "delay", "TIME", "interval: 1, 0.5, 500ms (default 1s)" },
	{ 'i', "interval", "TIME", "the same as -d" },
	{ OPTION_PID },
	{ OPTION_CGROUP },
	{ OPTION_MAX_PROCS },
	{ OPTION_RAW_TP },
	{ OPTION_HOT },
	{ OPTION_DELAYS },
	{ OPTION_NO_DELAYS },
	{ OPTION_THREADS },
	{ OPTION_CPI_WINDOW },
	{ OPTION_CPI_K },
	{ 'v', "verbose", NULL, "libbpf debug output (shown after the view closes)" },
	{ CMDOPT_HELP },
	{},
};

const struct cmdopts top_cmdopts = {
	.cmd = "top",
	.head = "Usage: pmbpf top [OPTIONS]\n"
		"Interactive per-process and per-cgroup view: CPU%, IPC, event rates, miss\n"
		"rates (MPKI), switches and run-queue latency, refreshed every interval.\n",
	.opts = options,
	.tail = "Keys: ? in the view. For pipes, files and scripts use `pmbpf record`.\n",
};

#define MIN_INTERVAL_NS 100000000ULL
#define MAX_INTERVAL_NS 3600000000000ULL
/* Keys are read at least this often, so a signal is seen at once. */
#define KEY_WAIT_MS 250

enum top_mode {
	MODE_NORMAL,
	MODE_HELP,
	MODE_SORT_MENU,
	MODE_FILTER_COMM,
	MODE_FILTER_CGROUP,
};

struct top {
	struct session_opts so;
	struct cpi_opts cpi_o;
	char cgroup_path[4096];
	__u64 interval_ns;

	struct session *s;
	const struct event_info *events;
	int nr_events;
	bool no_pmu;
	struct utsname uts;
	int online_cpus;

	struct snapshot snap;
	bool have_snap;
	struct top_view v;
	struct top_users *users;
	struct cpi_live *cpi;
	struct cgroup_stats *cgs; /* the cgroup view's rows' own files (throttling, PSI) */
	bool shown[TOP_MAX_COLS]; /* columns that fit, at the last draw */

	enum top_mode mode;
	bool paused;
	__u64 deadline; /* CLOCK_MONOTONIC of the next collection */
	__u64 last_collect;
	size_t sel, first; /* selected row, first row on screen */
	bool follow; /* the user moved the selection: keep it on its row */
	__u32 sel_pid;
	__u32 sel_tid; /* the thread view's selected thread */
	__u64 sel_id; /* cgroup id (of the process row, or of the cgroup) */
	int page; /* rows on screen */
	int menu_sel;
	bool descended; /* the scope was entered from the cgroup view */
	int fatal; /* a key's action failed: the view closes with it */

	/* pmbpf's own cost */
	__u64 prev_self_ns, prev_prog_ns, prev_prog_runs;
	double self_pct, prog_pct; /* of one CPU; prog_pct NaN without bpf_stats */
};

/* What the crash and exit handlers need to give the terminal back. */
static volatile sig_atomic_t curses_active;
static int saved_stderr = -1;
static int stderr_log = -1;

static void stderr_restore(void)
{
	char buf[4096];
	ssize_t n;

	if (saved_stderr < 0)
		return;
	dup2(saved_stderr, STDERR_FILENO);
	close(saved_stderr);
	saved_stderr = -1;
	if (stderr_log < 0)
		return;
	/* What was printed while the screen was ours (libbpf -v, errors). */
	lseek(stderr_log, 0, SEEK_SET);
	while ((n = read(stderr_log, buf, sizeof(buf))) > 0)
		if (write(STDERR_FILENO, buf, n) != n)
			break;
	close(stderr_log);
	stderr_log = -1;
}

static void terminal_restore(void)
{
	if (curses_active) {
		curses_active = 0;
		endwin();
	}
	stderr_restore();
}

static void on_crash(int sig)
{
	if (curses_active) {
		curses_active = 0;
		endwin();
	}
	if (saved_stderr >= 0)
		dup2(saved_stderr, STDERR_FILENO);
	/* SA_RESETHAND and SA_NODEFER: this ends the process as the signal would have. */
	raise(sig);
}

static int crash_handlers__setup(void)
{
	static const int sigs[] = { SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL };
	struct sigaction sa = { .sa_handler = on_crash, .sa_flags = SA_RESETHAND | SA_NODEFER };
	size_t i;

	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], &sa, NULL))
			return -errno;
	return 0;
}

/* Anything written to stderr while curses owns the screen would garble it. */
static void stderr_capture(void)
{
	stderr_log = memfd_create("pmbpf-top-stderr", MFD_CLOEXEC);
	if (stderr_log < 0)
		return;
	saved_stderr = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if (saved_stderr < 0 || dup2(stderr_log, STDERR_FILENO) < 0) {
		close(stderr_log);
		stderr_log = -1;
		if (saved_stderr >= 0)
			close(saved_stderr);
		saved_stderr = -1;
	}
}

static int parse_args(int argc, char **argv, struct top *t)
{
	struct cmdopt_getopt g = {};
	int c, err;

	while ((c = cmdopt__next(&top_cmdopts, &g, argc, argv)) != -1) {
		err = options__session(c, optarg, &t->so, t->cgroup_path, sizeof(t->cgroup_path));
		if (!err)
			err = options__cpi(c, optarg, &t->cpi_o);
		if (err < 0)
			return -EINVAL;
		if (err)
			continue;
		switch (c) {
		case 'd':
		case 'i':
			if (options__interval(optarg, MIN_INTERVAL_NS, MAX_INTERVAL_NS,
					      &t->interval_ns))
				return -EINVAL;
			break;
		default:
			cmdopt__default(&top_cmdopts, c);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		pr_err("unexpected argument '%s'; try 'pmbpf top --help'\n", argv[optind]);
		return -EINVAL;
	}
	return options__cpi_check(&t->cpi_o) ? -EINVAL : 0;
}

static __u64 self_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (__u64)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
	       (__u64)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

static const char *user_of(void *ctx, const struct proc_row *row)
{
	struct top *t = ctx;

	if (row->overflow)
		return "-";
	return top_users__name(t->users, row->pid, row->start_ns);
}

/* ---- selection ---- */

static void selection_remember(struct top *t)
{
	const struct top_item *it;

	if (t->sel >= t->v.nr_items)
		return;
	it = &t->v.items[t->sel];
	t->sel_pid = it->proc ? it->proc->pid : 0;
	t->sel_tid = it->proc ? it->proc->tid : 0;
	t->sel_id = it->proc ? it->proc->cgroup_id : it->cg->id;
}

static void selection_clamp(struct top *t)
{
	if (t->sel >= t->v.nr_items)
		t->sel = t->v.nr_items ? t->v.nr_items - 1 : 0;
}

/* After a rebuild, keep the selection on the same process or cgroup. */
static void selection_restore(struct top *t)
{
	size_t i;

	if (t->follow) {
		for (i = 0; i < t->v.nr_items; i++) {
			const struct top_item *it = &t->v.items[i];

			if (it->proc ? it->proc->pid == t->sel_pid &&
					       (!it->proc->tid || !t->sel_tid ||
						it->proc->tid == t->sel_tid) &&
					       it->proc->cgroup_id == t->sel_id :
				       it->cg->id == t->sel_id) {
				if (t->first + i >= t->sel)
					t->first = t->first + i - t->sel;
				else
					t->first = 0;
				t->sel = i;
				break;
			}
		}
	}
	selection_clamp(t);
}

/* Rows from the snapshot; keep_selection: on the process or cgroup last remembered. */
static void build_rows(struct top *t, bool keep_selection)
{
	if (!t->have_snap)
		return;
	top_view__columns(&t->v, &t->snap);
	if (top_view__build(&t->v, &t->snap, user_of, t)) {
		t->v.nr_items = 0;
		return;
	}
	if (keep_selection)
		selection_restore(t);
	else
		t->sel = t->first = 0;
	selection_clamp(t);
}

/* The same snapshot seen another way (sort, filter, view). */
static void rebuild(struct top *t, bool keep_selection)
{
	if (keep_selection)
		selection_remember(t);
	build_rows(t, keep_selection);
}

static bool cgroup_shown(const struct cgroup_row *cg, const void *v)
{
	return top_view__cgroup_shown(v, cg);
}

static int collect(struct top *t)
{
	__u64 self, prog = 0, runs = 0;
	int i, err;

	/* the rows point into the snapshot, which the collection overwrites */
	selection_remember(t);
	t->v.nr_items = 0;
	err = session__collect(t->s, &t->snap);
	if (!err)
		err = cpi_live__update(t->cpi, &t->snap);
	if (err)
		return err;
	cgroups__read_stats(t->cgs, &t->snap, cgroup_shown, &t->v);
	t->last_collect = now_ns(CLOCK_MONOTONIC);
	self = self_cpu_ns();
	for (i = 0; i < t->snap.nr_progs; i++) {
		prog += t->snap.progs[i].run_time_ns;
		runs += t->snap.progs[i].run_cnt;
	}
	if (t->have_snap && t->snap.interval_ns) {
		t->self_pct = (double)(self - t->prev_self_ns) * 100.0 / t->snap.interval_ns;
		/* runs are counted only while kernel.bpf_stats_enabled=1 */
		t->prog_pct = runs != t->prev_prog_runs ? (double)(prog - t->prev_prog_ns) * 100.0 /
								  t->snap.interval_ns :
							  NAN;
	} else {
		t->self_pct = t->prog_pct = NAN;
	}
	t->prev_self_ns = self;
	t->prev_prog_ns = prog;
	t->prev_prog_runs = runs;
	t->have_snap = true;
	top_users__next_gen(t->users);
	build_rows(t, true);
	return 0;
}

/* ---- drawing ---- */

enum {
	PAIR_COLHEAD = 1,
	PAIR_SELECT,
	PAIR_WARN,
	PAIR_LABEL,
	PAIR_SORTED,
};

static attr_t a_colhead, a_select, a_warn, a_label, a_sorted, a_key;

static void colors__setup(void)
{
	a_colhead = A_REVERSE;
	a_select = A_REVERSE | A_BOLD;
	a_warn = A_BOLD;
	a_label = A_BOLD;
	a_sorted = A_REVERSE | A_BOLD | A_UNDERLINE;
	a_key = A_BOLD;
	if (!has_colors())
		return;
	start_color();
	use_default_colors();
	init_pair(PAIR_COLHEAD, COLOR_BLACK, COLOR_GREEN);
	init_pair(PAIR_SELECT, COLOR_BLACK, COLOR_CYAN);
	init_pair(PAIR_WARN, COLOR_YELLOW, -1);
	init_pair(PAIR_LABEL, COLOR_CYAN, -1);
	init_pair(PAIR_SORTED, COLOR_BLACK, COLOR_CYAN);
	a_colhead = COLOR_PAIR(PAIR_COLHEAD);
	a_select = COLOR_PAIR(PAIR_SELECT) | A_BOLD;
	a_warn = COLOR_PAIR(PAIR_WARN) | A_BOLD;
	a_label = COLOR_PAIR(PAIR_LABEL) | A_BOLD;
	a_sorted = COLOR_PAIR(PAIR_SORTED) | A_BOLD;
}

/* Bytes a terminal could take as controls, or that would break alignment. */
static void sanitize(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			*s = '?';
}

/* Write s from (y, 0), broken at spaces; at most max_lines lines. Returns lines used. */
static int put_wrapped(int y, int max_lines, attr_t attr, const char *s)
{
	int used = 0, width = COLS;

	while (*s && used < max_lines && y + used < LINES) {
		int n = (int)strlen(s);

		if (n > width && used + 1 < max_lines) {
			int cut = width;

			while (cut > width / 2 && s[cut] != ' ')
				cut--;
			if (s[cut] != ' ')
				cut = width;
			n = cut;
		}
		attrset(attr);
		mvaddnstr(y + used, 0, s, n < width ? n : width);
		clrtoeol();
		s += n;
		while (*s == ' ')
			s++;
		used++;
	}
	attrset(A_NORMAL);
	return used;
}

static const char *interval_str(char *buf, size_t len, __u64 ns)
{
	snprintf(buf, len, "%gs", ns / 1e9);
	return buf;
}

/*
 * The events in one line, for a small terminal: grouped by state, the
 * state first ("No PMU; counting: task-clock, page-faults; not-supported:
 * cycles"), multiplexed events with their coverage.
 */
static const char *events_brief(const struct top *t, char *line, size_t len)
{
	static const enum event_state states[] = { EVENT_COUNTING, EVENT_NOT_SUPPORTED,
						   EVENT_PERMISSION_DENIED, EVENT_INVALID,
						   EVENT_ERROR };
	const struct snapshot *snap = t->have_snap ? &t->snap : NULL;
	size_t off, k;
	int i, n;

	off = snprintf(line, len, "%s", t->no_pmu ? "No PMU;" : "Events");
	for (k = 0; k < sizeof(states) / sizeof(states[0]) && off < len; k++) {
		for (i = 0, n = 0; i < t->nr_events && off < len; i++) {
			const struct event_info *e = &t->events[i];
			double cov = snap ? reading__coverage(&snap->system[i]) : 1.0;

			if (e->state != states[k])
				continue;
			if (!n++)
				off += snprintf(line + off, len - off, "%s %s:", off > 8 ? ";" : "",
						event_state__str(states[k]));
			if (off < len)
				off += snprintf(line + off, len - off, "%s %s", n > 1 ? "," : "",
						e->spec.name);
			if (e->state == EVENT_COUNTING && cov < 0.995 && off < len)
				off += snprintf(line + off, len - off, " (multiplexed %.0f%%)",
						cov * 100);
		}
	}
	if (!t->nr_events && off < len)
		snprintf(line + off, len - off, ": none");
	return line;
}

static int draw_header(struct top *t)
{
	const struct snapshot *snap = t->have_snap ? &t->snap : NULL;
	/* on a small terminal (80x24) the header keeps to 4 lines, the rows get the rest */
	bool compact = LINES < 40;
	char line[2048], part[512], tbuf[16], ibuf[32];
	double busy = 0;
	size_t off, r;
	time_t now = time(NULL);
	struct tm tm;
	int y = 0, i, nr_sw = 0, cpus;

	localtime_r(&now, &tm);
	strftime(tbuf, sizeof(tbuf), "%H:%M:%S", &tm);
	cpus = snap && snap->nr_cpus ? snap->nr_cpus : t->online_cpus;
	off = snprintf(line, sizeof(line), "pmbpf top  %s%s", tbuf, t->paused ? "  [PAUSED]" : "");
	if (snap) {
		for (r = 0; r < snap->nr_rows; r++)
			if (snap->rows[r].pid || snap->rows[r].overflow)
				busy += snap->rows[r].f.n[PMBPF_N_ONCPU_NS];
		busy = ratio(busy * 100.0, (double)snap->interval_ns);
		off += snprintf(line + off, sizeof(line) - off, "  busy %.0f%%/%d%%", busy,
				cpus * 100);
	}
	off += snprintf(line + off, sizeof(line) - off, "  every %s",
			interval_str(ibuf, sizeof(ibuf), t->interval_ns));
	if (snap && fabs((double)snap->interval_ns - t->interval_ns) > 0.2 * t->interval_ns)
		off += snprintf(line + off, sizeof(line) - off, " (last %.2fs)",
				snap->interval_ns / 1e9);
	if (t->so.pid)
		off += snprintf(line + off, sizeof(line) - off, "  only PID %d", t->so.pid);
	if (t->so.cgroup)
		off += snprintf(line + off, sizeof(line) - off, "  only %.256s", t->so.cgroup);
	/* what a narrow terminal cuts first */
	snprintf(line + off, sizeof(line) - off, "  %d CPUs  %s  %s %s", cpus, t->uts.nodename,
		 t->uts.sysname, t->uts.release);
	y += put_wrapped(y, compact ? 1 : 2, A_BOLD, line);

	if (compact) {
		y += put_wrapped(y, 1, t->no_pmu ? a_warn : A_NORMAL,
				 events_brief(t, line, sizeof(line)));
		goto stats;
	}
	off = snprintf(line, sizeof(line), "Events:");
	for (i = 0; i < t->nr_events; i++) {
		const struct event_info *e = &t->events[i];
		double cov = snap ? reading__coverage(&snap->system[i]) : 1.0;

		if (e->state == EVENT_COUNTING && cov < 0.995)
			snprintf(part, sizeof(part), "%s multiplexed %.0f%%", e->spec.name,
				 cov * 100);
		else if (e->state == EVENT_COUNTING)
			snprintf(part, sizeof(part), "%s counting", e->spec.name);
		else
			snprintf(part, sizeof(part), "%s %s", e->spec.name,
				 event_state__str(e->state));
		off += snprintf(line + off, sizeof(line) - off, "%s %s", i ? "," : "", part);
		if (off >= sizeof(line))
			off = sizeof(line) - 1;
	}
	if (!t->nr_events)
		snprintf(line + off, sizeof(line) - off, " none");
	y += put_wrapped(y, 2, A_NORMAL, line);

	if (t->no_pmu) {
		off = snprintf(
			line, sizeof(line),
			"No hardware PMU on this host: hardware counters are unavailable; shown instead: CPU%%, switches, run-queue latency");
		for (i = 0; i < t->nr_events; i++) {
			if (t->events[i].state != EVENT_COUNTING)
				continue;
			off += snprintf(line + off, sizeof(line) - off, ", %s",
					t->events[i].spec.name);
			if (off >= sizeof(line))
				off = sizeof(line) - 1;
			nr_sw++;
		}
		snprintf(line + off, sizeof(line) - off, "%s",
			 nr_sw ? "" : " (add software events: -e task-clock,page-faults)");
		y += put_wrapped(y, 3, a_warn, line);
	}

stats:
	if (snap) {
		off = snprintf(line, sizeof(line), "%zu processes, ", snap->nr_rows);
		if (snap->threads_on)
			off += snprintf(line + off, sizeof(line) - off, "%zu threads, ",
					snap->nr_threads);
		off += snprintf(line + off, sizeof(line) - off,
				compact ? "%zu cgroup%s | pmbpf %.1f%% CPU, poll %.1fms" :
					  "%zu cgroup%s  |  pmbpf %.1f%% CPU, poll %.1fms",
				snap->nr_cgroups, snap->nr_cgroups == 1 ? "" : "s",
				isfinite(t->self_pct) ? t->self_pct : 0, snap->poll_ns / 1e6);
		if (isfinite(t->prog_pct))
			snprintf(line + off, sizeof(line) - off, ", BPF %.2f%% CPU", t->prog_pct);
		else
			snprintf(line + off, sizeof(line) - off,
				 compact ? ", BPF time n/a" :
					   ", BPF time: sysctl kernel.bpf_stats_enabled=1");
	} else {
		snprintf(line, sizeof(line), "collecting the first interval...");
	}
	y += put_wrapped(y, compact ? 1 : 2, A_NORMAL, line);

	{
		const struct top_col *sc =
			t->v.nr_cols ? &t->v.cols[top_view__sort_col(&t->v)] : NULL;
		const struct top_sort *s = &t->v.sort[t->v.by_cgroup];
		bool natural_low = sc && (sc->text || sc->kind == TOP_PID || sc->kind == TOP_TID);

		off = snprintf(line, sizeof(line),
			       compact ? "[%s] Sort: %s %s Filter: %s Container: %s" :
					 "[%s]  Sort: %s %s  Filter: %s  Container: %s",
			       t->v.by_cgroup ? (t->v.time_view ? "cgroups, time" : "cgroups") :
			       t->v.threads   ? (t->v.time_view ? "threads, time" : "threads") :
			       t->v.time_view ? "processes, time" :
						"processes",
			       sc ? sc->title : "CPU%",
			       natural_low != s->reverse ? "(low first)" : "(high first)",
			       t->v.comm_filter[0] ? t->v.comm_filter : "-",
			       t->v.cg_filter[0] ? t->v.cg_filter : "-");
		if (t->have_snap)
			off += snprintf(line + off, sizeof(line) - off, "%sShown: %zu of %zu",
					compact ? " " : "  ", t->v.nr_items, t->v.nr_candidates);
		if (t->v.scope[0])
			snprintf(line + off, sizeof(line) - off, "%sIn: %s", compact ? " " : "  ",
				 t->v.scope);
		sanitize(line);
		y += put_wrapped(y, compact ? 1 : 2, a_label, line);
	}
	return y;
}

static int cell_into(char *line, int pos, int cap, const char *cell, int width, bool text,
		     bool flex)
{
	int n = (int)strlen(cell);

	if (pos + width > cap)
		width = cap - pos;
	if (width <= 0)
		return pos;
	if (flex && n > width && width > 3) {
		/* a path: its end says most, from a '/' where one fits */
		const char *tail = cell + n - (width - 3), *slash = strchr(tail, '/');

		if (slash && slash[1])
			tail = slash;
		memset(line + pos, ' ', width);
		memcpy(line + pos, "...", 3);
		memcpy(line + pos + 3, tail, strlen(tail));
	} else if (text) {
		memset(line + pos, ' ', width);
		memcpy(line + pos, cell, n < width ? n : width);
	} else {
		memset(line + pos, ' ', width);
		if (n > width)
			n = width;
		memcpy(line + pos + width - n, cell, n);
	}
	return pos + width;
}

/* bottom: lines kept free above the footer */
static void draw_table(struct top *t, int y, int bottom)
{
	char line[4096], cell[256];
	int flex_w, i, cap = COLS < (int)sizeof(line) ? COLS : (int)sizeof(line) - 1;
	int sort = top_view__sort_col(&t->v), sort_x = -1, sort_w = 0, rows, pos;
	size_t r;

	flex_w = top_view__layout(&t->v, cap, t->shown);
	pos = 0;
	memset(line, ' ', cap);
	for (i = 0; i < t->v.nr_cols; i++) {
		const struct top_col *c = &t->v.cols[i];
		int w = c->flex ? flex_w : c->width;

		if (!t->shown[i])
			continue;
		if (pos && pos < cap)
			pos++;
		if (i == sort) {
			sort_x = pos;
			sort_w = w;
		}
		pos = cell_into(line, pos, cap, c->title, w, c->text, false);
	}
	line[cap] = '\0';
	attrset(a_colhead);
	mvaddnstr(y, 0, line, cap);
	if (sort_x >= 0 && sort_x < cap) {
		attrset(a_sorted);
		mvaddnstr(y, sort_x, line + sort_x, sort_w < cap - sort_x ? sort_w : cap - sort_x);
	}
	attrset(A_NORMAL);
	y++;

	rows = LINES - y - 1 - bottom;
	if (rows < 1)
		rows = 1;
	t->page = rows;
	if (t->sel < t->first)
		t->first = t->sel;
	if (t->sel >= t->first + rows)
		t->first = t->sel - rows + 1;
	if (t->first + rows > t->v.nr_items)
		t->first = t->v.nr_items > (size_t)rows ? t->v.nr_items - rows : 0;

	if (!t->have_snap)
		return;
	if (!t->v.nr_items) {
		mvaddnstr(y, 0,
			  t->v.nr_candidates ? "(nothing matches the filters: Esc clears them)" :
					       "(nothing ran in this interval)",
			  cap);
		return;
	}
	for (r = t->first; r < t->v.nr_items && (int)(r - t->first) < rows; r++) {
		const struct top_item *it = &t->v.items[r];

		pos = 0;
		memset(line, ' ', cap);
		for (i = 0; i < t->v.nr_cols; i++) {
			const struct top_col *c = &t->v.cols[i];

			if (!t->shown[i])
				continue;
			if (pos && pos < cap)
				pos++;
			top_view__cell(&t->v, &t->snap, it, c, cell, sizeof(cell));
			if (c->text)
				sanitize(cell);
			pos = cell_into(line, pos, cap, cell, c->flex ? flex_w : c->width, c->text,
					c->flex);
		}
		line[cap] = '\0';
		attrset(r == t->sel ? a_select : A_NORMAL);
		mvaddnstr(y + (int)(r - t->first), 0, line, cap);
	}
	attrset(A_NORMAL);
}

/*
 * Above the footer (and above the CPI line, when there is one: above more
 * lines), who delayed the selected row and whom it delayed; returns the
 * lines it took.
 */
static int draw_delay_line(struct top *t, int y, int above)
{
	char line[1024];

	if (!t->have_snap || !t->snap.delays_on || t->sel >= t->v.nr_items || LINES - y < 5 + above)
		return 0;
	top_view__delay_line(&t->snap, &t->v.items[t->sel], line, sizeof(line));
	sanitize(line);
	mvaddnstr(LINES - 2 - above, 0, line, COLS);
	return 1;
}

/* Above the footer, the selected row's CPI outlier; returns the lines it took. */
static int draw_cpi_line(struct top *t, int y)
{
	char line[1024];

	if (!t->have_snap || t->sel >= t->v.nr_items || LINES - y < 5 ||
	    !top_view__cpi_line(&t->v, &t->snap, &t->v.items[t->sel], line, sizeof(line)))
		return 0;
	sanitize(line);
	attrset(a_warn);
	mvaddnstr(LINES - 2, 0, line, COLS);
	attrset(A_NORMAL);
	return 1;
}

static void draw_footer(struct top *t)
{
	static const char *const keys[][2] = {
		{ "?", "Help" },   { "<>", "Sort" },	  { "r", "Reverse" },
		{ "/", "Filter" }, { "\\", "Container" }, { "c", "Cgroups" },
		{ "t", "Time" },   { "Enter", "Into" },	  { "Esc", "Back" },
		{ "p", "Pause" },  { "+-", "Interval" },  { "q", "Quit" },
	};
	int y = LINES - 1, x = 0;
	size_t i;

	move(y, 0);
	clrtoeol();
	if (t->mode == MODE_FILTER_COMM || t->mode == MODE_FILTER_CGROUP) {
		const char *label = t->mode == MODE_FILTER_COMM ? "Filter command: " :
								  "Filter cgroup/container: ";
		char text[256];

		snprintf(text, sizeof(text), "%s",
			 t->mode == MODE_FILTER_COMM ? t->v.comm_filter : t->v.cg_filter);
		sanitize(text);
		attrset(a_key);
		mvaddnstr(y, 0, label, COLS);
		attrset(A_NORMAL);
		addnstr(text, COLS - (int)strlen(label) > 0 ? COLS - (int)strlen(label) : 0);
		addnstr("_   (Enter: keep, Esc: clear)", COLS - getcurx(stdscr));
		return;
	}
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]) && x < COLS; i++) {
		attrset(a_key);
		mvaddnstr(y, x, keys[i][0], COLS - x);
		x += (int)strlen(keys[i][0]);
		if (x >= COLS)
			break;
		attrset(a_select);
		mvaddnstr(y, x, keys[i][1], COLS - x);
		x += (int)strlen(keys[i][1]) + 1;
	}
	attrset(A_NORMAL);
}

static const char *const help_lines[] = {
	"pmbpf top: keys",
	"",
	"  Up Down j k PgUp PgDn Home End  move the selection",
	"  < >  or F6 (a menu)            choose the sort column (P: CPU%)",
	"  r  or I                        reverse the sort order",
	"  /  or F4                       filter processes by command (substring)",
	"  \\  or C                        filter by cgroup path or container id",
	"  c  or Tab                      processes <-> cgroups (rolled-up totals)",
	"  H                              processes <-> threads (counts each thread)",
	"  t                              the time view: each row's time as shares",
	"  Enter                          on a cgroup: show its processes",
	"  Esc or Backspace               leave the cgroup, else clear the filters",
	"  i                              show the idle task (pid 0)",
	"  p  or Space                    pause / resume",
	"  +  -                           longer / shorter interval",
	"  ?  or F1                       this help",
	"  q  or F10                      quit",
	"",
	"CPU%: on-CPU time / interval (one CPU = 100). IPC: instructions / cycles.",
	"NAME/s: events per second (clock events: CPU time per second).",
	"X-MPKI: misses per 1000 instructions. CSW/s: switches per second.",
	"RUNQ-p99: 99th percentile of wakeup-to-run latency.",
	"Cgroup view, from the cgroup's own files (read for the rows shown):",
	"THROTL/s: time its CPU quota (cpu.max) held it back, per second;",
	"PSI-CPU/s PSI-MEM/s PSI-IO/s: time some of its tasks stalled, per second.",
	"CPI!: a CPI outlier (its CPI, or without a PMU its mean run-queue wait,",
	"above mean + 2 sd of its baseline for --cpi-k intervals): how far above;",
	"the selected outlier's suspects are named above the keys.",
	"Time view (t): of each row's time (its threads' on- and off-CPU time",
	"in the interval), ONCPU% on a CPU (IPC next to it), RUNQ% runnable and",
	"waiting for a CPU, BLOCK% uninterruptible (D), SLEEP% asleep (S),",
	"OTHER% the rest (or OFF%: off-CPU less the run queue, without the split);",
	"THROTL% (cgroups): time its CPU quota throttled it, part of RUNQ%.",
	"'-': not available (event not counting on this host, or no data).",
	"'*' after a command: it exited in this interval. Cgroup rows include",
	"everything below them.",
	"",
	"Press any key to return.",
};

static void draw_help(void)
{
	size_t i;

	for (i = 0; i < sizeof(help_lines) / sizeof(help_lines[0]) && (int)i < LINES; i++)
		mvaddnstr((int)i, 0, help_lines[i], COLS);
}

static void draw_sort_menu(struct top *t, int y)
{
	int i, w = 24, rows = LINES - y - 1;
	int first = t->menu_sel >= rows ? t->menu_sel - rows + 1 : 0;

	for (i = first; i < t->v.nr_cols && i - first < rows; i++) {
		char text[64];

		snprintf(text, sizeof(text), " %-*.*s", w - 1, w - 1, t->v.cols[i].title);
		attrset(i == t->menu_sel ? a_select : a_colhead);
		mvaddnstr(y + i - first, 0, text, COLS);
	}
	attrset(A_NORMAL);
}

static void draw(struct top *t)
{
	int y, bottom;

	erase();
	if (COLS < 20 || LINES < 6) {
		mvaddnstr(0, 0, "terminal too small", COLS);
		refresh();
		return;
	}
	if (t->mode == MODE_HELP) {
		draw_help();
		refresh();
		return;
	}
	y = draw_header(t);
	if (y > LINES - 3)
		y = LINES - 3;
	bottom = draw_cpi_line(t, y);
	bottom += draw_delay_line(t, y, bottom);
	draw_table(t, y, bottom);
	if (t->mode == MODE_SORT_MENU)
		draw_sort_menu(t, y + 1);
	draw_footer(t);
	refresh();
}

/* ---- keys ---- */

static void move_sel(struct top *t, long delta)
{
	long n = (long)t->v.nr_items, s = (long)t->sel + delta;

	if (s >= n)
		s = n - 1;
	if (s < 0)
		s = 0;
	t->sel = (size_t)s;
	t->follow = true;
	selection_remember(t);
}

static void change_interval(struct top *t, int dir)
{
	static const __u64 steps_ms[] = {
		100, 200, 500, 1000, 2000, 3000, 5000, 10000, 30000, 60000
	};
	size_t n = sizeof(steps_ms) / sizeof(steps_ms[0]), i;
	__u64 cur = t->interval_ns, next = cur;

	if (dir > 0) {
		for (i = 0; i < n; i++)
			if (steps_ms[i] * 1000000ULL > cur) {
				next = steps_ms[i] * 1000000ULL;
				break;
			}
	} else {
		for (i = n; i-- > 0;)
			if (steps_ms[i] * 1000000ULL < cur) {
				next = steps_ms[i] * 1000000ULL;
				break;
			}
	}
	t->interval_ns = next;
	t->deadline = (t->last_collect ? t->last_collect : now_ns(CLOCK_MONOTONIC)) + next;
}

/* < and >: the next column that is on screen. */
static void sort_step(struct top *t, int dir)
{
	int n = t->v.nr_cols, i = top_view__sort_col(&t->v), k;

	for (k = 0; k < n; k++) {
		i = (i + dir + n) % n;
		if (t->shown[i])
			break;
	}
	top_view__set_sort(&t->v, i);
	rebuild(t, true);
}

/*
 * H: threads are counted only by a session that counts them (a switch then
 * costs more): the session is reopened with or without --threads, and the
 * view waits for its first interval.
 */
static int toggle_threads(struct top *t)
{
	__u64 now = now_ns(CLOCK_MONOTONIC);

	selection_remember(t);
	session__close(t->s);
	t->s = NULL;
	t->so.threads = !t->so.threads;
	if (session__open(&t->s, &t->so)) {
		t->so.threads = !t->so.threads;
		if (session__open(&t->s, &t->so))
			return -EIO;
	}
	t->events = session__events(t->s, &t->nr_events);
	t->v.threads = t->so.threads;
	t->v.by_cgroup = false;
	t->v.nr_items = 0;
	t->have_snap = false;
	t->follow = true;
	/* a first interval of at most a second, so the view comes back soon */
	t->deadline = now + (t->interval_ns < 1000000000ULL ? t->interval_ns : 1000000000ULL);
	return 0;
}

static void toggle_view(struct top *t)
{
	t->v.by_cgroup = !t->v.by_cgroup;
	t->descended = false;
	t->follow = false;
	rebuild(t, false);
}

/* t: each row's time as shares, or the figures; the same rows, the selection kept. */
static void toggle_time(struct top *t)
{
	t->v.time_view = !t->v.time_view;
	rebuild(t, true);
}

static void descend(struct top *t)
{
	const struct top_item *it;

	if (!t->v.by_cgroup || t->sel >= t->v.nr_items)
		return;
	it = &t->v.items[t->sel];
	if (!it->cg->path)
		return;
	snprintf(t->v.scope, sizeof(t->v.scope), "%s", it->cg->path);
	t->sel_id = it->cg->id;
	t->v.by_cgroup = false;
	t->descended = true;
	t->follow = false;
	rebuild(t, false);
}

static void back(struct top *t)
{
	if (t->v.scope[0]) {
		t->v.scope[0] = '\0';
		if (t->descended) {
			/* back to the cgroup we came from */
			t->v.by_cgroup = true;
			t->descended = false;
			t->follow = true;
			t->sel_pid = 0;
			rebuild(t, false);
			t->sel = 0;
			t->first = 0;
			selection_restore(t);
			return;
		}
	} else {
		t->v.comm_filter[0] = '\0';
		t->v.cg_filter[0] = '\0';
	}
	rebuild(t, true);
}

static bool is_backspace(int ch)
{
	return ch == KEY_BACKSPACE || ch == 127 || ch == 8;
}

static bool is_enter(int ch)
{
	return ch == '\n' || ch == '\r' || ch == KEY_ENTER;
}

static void key_filter(struct top *t, int ch)
{
	char *f = t->mode == MODE_FILTER_COMM ? t->v.comm_filter : t->v.cg_filter;
	size_t cap =
		t->mode == MODE_FILTER_COMM ? sizeof(t->v.comm_filter) : sizeof(t->v.cg_filter);
	size_t n = strlen(f);

	if (is_enter(ch)) {
		t->mode = MODE_NORMAL;
		return;
	}
	if (ch == 27) {
		f[0] = '\0';
		t->mode = MODE_NORMAL;
	} else if (is_backspace(ch)) {
		if (n)
			f[n - 1] = '\0';
	} else if (ch >= 0x20 && ch < 0x7f && n + 1 < cap) {
		f[n] = (char)ch;
		f[n + 1] = '\0';
	} else {
		return;
	}
	t->follow = false;
	rebuild(t, false);
}

static void key_sort_menu(struct top *t, int ch)
{
	if (ch == KEY_UP || ch == 'k') {
		if (t->menu_sel > 0)
			t->menu_sel--;
	} else if (ch == KEY_DOWN || ch == 'j') {
		if (t->menu_sel + 1 < t->v.nr_cols)
			t->menu_sel++;
	} else if (ch == KEY_HOME) {
		t->menu_sel = 0;
	} else if (ch == KEY_END) {
		t->menu_sel = t->v.nr_cols - 1;
	} else if (is_enter(ch)) {
		top_view__set_sort(&t->v, t->menu_sel);
		t->mode = MODE_NORMAL;
		rebuild(t, true);
	} else if (ch == 27 || ch == 'q' || ch == KEY_F(6)) {
		t->mode = MODE_NORMAL;
	}
}

/* Returns false to quit. */
static bool key_normal(struct top *t, int ch)
{
	switch (ch) {
	case 'q':
	case 'Q':
	case KEY_F(10):
	case 3: /* Ctrl-C, should the terminal pass it through */
		return false;
	case KEY_UP:
	case 'k':
		move_sel(t, -1);
		break;
	case KEY_DOWN:
	case 'j':
		move_sel(t, 1);
		break;
	case KEY_PPAGE:
		move_sel(t, -t->page);
		break;
	case KEY_NPAGE:
		move_sel(t, t->page);
		break;
	case KEY_HOME:
		t->sel = 0;
		t->follow = false;
		break;
	case KEY_END:
		move_sel(t, (long)t->v.nr_items);
		break;
	case '<':
	case ',':
		sort_step(t, -1);
		break;
	case '>':
	case '.':
		sort_step(t, 1);
		break;
	case KEY_F(6):
		t->mode = MODE_SORT_MENU;
		t->menu_sel = top_view__sort_col(&t->v);
		break;
	case 'P':
		top_view__sort_cpu(&t->v);
		rebuild(t, true);
		break;
	case 'r':
	case 'I':
		t->v.sort[t->v.by_cgroup].reverse = !t->v.sort[t->v.by_cgroup].reverse;
		rebuild(t, true);
		break;
	case '/':
	case KEY_F(4):
		t->mode = MODE_FILTER_COMM;
		break;
	case '\\':
	case 'C':
		t->mode = MODE_FILTER_CGROUP;
		break;
	case 'H':
		if (toggle_threads(t)) {
			t->fatal = -EIO;
			return false;
		}
		break;
	case 'c':
	case '\t':
		toggle_view(t);
		break;
	case 't':
		toggle_time(t);
		break;
	case '\n':
	case '\r':
	case KEY_ENTER:
		descend(t);
		break;
	case 27:
	case KEY_BACKSPACE:
	case 127:
	case 8:
		back(t);
		break;
	case 'p':
	case ' ':
		t->paused = !t->paused;
		if (!t->paused)
			t->deadline = now_ns(CLOCK_MONOTONIC);
		break;
	case '+':
	case '=':
		change_interval(t, 1);
		break;
	case '-':
	case '_':
		change_interval(t, -1);
		break;
	case '?':
	case 'h':
	case KEY_F(1):
		t->mode = MODE_HELP;
		break;
	case 'i':
		t->v.show_idle = !t->v.show_idle;
		rebuild(t, true);
		break;
	}
	return true;
}

static bool key(struct top *t, int ch)
{
	if (ch == KEY_RESIZE)
		return true; /* the redraw that follows fits the new size */
	switch (t->mode) {
	case MODE_HELP:
		t->mode = MODE_NORMAL;
		return true;
	case MODE_SORT_MENU:
		key_sort_menu(t, ch);
		return true;
	case MODE_FILTER_COMM:
	case MODE_FILTER_CGROUP:
		key_filter(t, ch);
		return true;
	case MODE_NORMAL:
		break;
	}
	return key_normal(t, ch);
}

static int curses__start(void)
{
	setlocale(LC_CTYPE, "");
	if (!newterm(NULL, stdout, stdin))
		return -ENOTTY;
	curses_active = 1;
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);
	colors__setup();
	return 0;
}

static int run(struct top *t)
{
	int err = 0;

	t->deadline = now_ns(CLOCK_MONOTONIC) + t->interval_ns;
	draw(t);
	while (!exiting) {
		__u64 now = now_ns(CLOCK_MONOTONIC);
		long wait_ms = KEY_WAIT_MS;
		bool dirty = false;
		int ch;

		if (!t->paused && now >= t->deadline) {
			err = collect(t);
			if (err)
				break;
			t->deadline += t->interval_ns;
			now = now_ns(CLOCK_MONOTONIC);
			if (t->deadline <= now)
				t->deadline = now + t->interval_ns;
			dirty = true;
		}
		if (dirty)
			draw(t);
		if (!t->paused && (t->deadline - now) / 1000000 < (__u64)wait_ms)
			wait_ms = (long)((t->deadline - now) / 1000000) + 1;
		timeout((int)wait_ms);
		ch = getch();
		if (ch == ERR)
			continue;
		do {
			if (!key(t, ch))
				return t->fatal;
			/* take what else is queued (a held key) before one redraw */
			timeout(0);
			ch = getch();
		} while (ch != ERR);
		draw(t);
	}
	return err;
}

int cmd_top(int argc, char **argv)
{
	struct top *t = calloc(1, sizeof(*t));
	int err = 1;

	if (!t) {
		pr_err("out of memory\n");
		return 1;
	}
	t->interval_ns = 1000000000ULL;
	t->so.delays = DELAYS_AUTO;
	t->cpi_o = (struct cpi_opts){ .window = CPI_WINDOW,
				      .k = CPI_K,
				      .min_cpu = CPI_MIN_CPU,
				      .max_suspects = CPI_SUSPECTS };
	top_view__init(&t->v);
	if (parse_args(argc, argv, t)) {
		err = 2;
		goto cleanup;
	}
	if (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO)) {
		pr_err("top needs a terminal (standard %s is not one); for pipes, files and scripts use 'pmbpf record' (-o json, -o csv)\n",
		       isatty(STDOUT_FILENO) ? "input" : "output");
		goto cleanup;
	}
	if (options__default_events(&t->so)) {
		err = 2;
		goto cleanup;
	}
	if (t->so.pid && process__check_running(&t->so.pid))
		goto cleanup;
	if (privileges__check() || signals__setup() || crash_handlers__setup())
		goto cleanup;
	t->users = top_users__new("/proc");
	t->cpi = cpi_live__new(&t->cpi_o, true);
	t->v.cpi = t->cpi;
	t->cgs = cgroup_stats__new(1);
	if (!t->users || !t->cpi || !t->cgs) {
		pr_err("out of memory\n");
		goto cleanup;
	}
	t->v.threads = t->so.threads;
	if (session__open(&t->s, &t->so))
		goto cleanup;
	t->events = session__events(t->s, &t->nr_events);
	t->no_pmu = session__no_pmu(t->s);
	uname(&t->uts);
	t->online_cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);

	atexit(terminal_restore);
	stderr_capture();
	if (curses__start()) {
		stderr_restore();
		pr_err("cannot set up the terminal (TERM=%s): try TERM=xterm\n",
		       getenv("TERM") ? getenv("TERM") : "");
		goto cleanup;
	}
	err = run(t);
	terminal_restore();
	if (err) {
		pr_err("collection failed: %s\n", strerror(-err));
		err = 1;
	}

cleanup:
	if (t->s)
		session__close(t->s);
	snapshot__free(&t->snap);
	top_view__free(&t->v);
	top_users__free(t->users);
	cpi_live__free(t->cpi);
	cgroup_stats__free(t->cgs);
	free(t);
	return err;
}
