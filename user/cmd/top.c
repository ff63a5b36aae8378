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
#include "commands.h"
#include "options.h"
#include "top.h"
#include "util.h"

static const struct cmdopt options[] = {
	{ OPTION_EVENTS },
	{ OPTION_METRICS },
	{ 'd', "delay", "TIME", "interval: 1, 0.5, 500ms (default 1s)" },
	{ 'i', "interval", "TIME", "the same as -d" },
	{ OPTION_PID },
	{ OPTION_CGROUP },
	OPTIONS_COLLECTION,
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
	top__setup_colors();
	return 0;
}

static int run(struct top *t)
{
	int err = 0;

	t->deadline = now_ns(CLOCK_MONOTONIC) + t->interval_ns;
	top__draw(t);
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
			top__draw(t);
		if (!t->paused && (t->deadline - now) / 1000000 < (__u64)wait_ms)
			wait_ms = (long)((t->deadline - now) / 1000000) + 1;
		timeout((int)wait_ms);
		ch = getch();
		/* a key wait is at most KEY_WAIT_MS: exit records are taken after each */
		if (!t->paused) {
			int n = session__drain(t->s);

			if (n < 0) {
				err = n;
				break;
			}
		}
		if (ch == ERR)
			continue;
		do {
			if (!key(t, ch))
				return t->fatal;
			/* take what else is queued (a held key) before one redraw */
			timeout(0);
			ch = getch();
		} while (ch != ERR);
		top__draw(t);
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
