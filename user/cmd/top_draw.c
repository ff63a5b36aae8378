// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pmbpf top's screen (ncursesw): the header (host, events, pmbpf's own
 * cost, the scope), the table of top_view.c's rows and cells, the selected
 * row's CPI outlier and delay lines, the footer of keys, the help and the
 * sort menu. Drawn from struct top (top.h); top.c reads the keys and
 * collects.
 */
#include <curses.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "top.h"
#include "util.h"

enum {
	PAIR_COLHEAD = 1,
	PAIR_SELECT,
	PAIR_WARN,
	PAIR_LABEL,
	PAIR_SORTED,
};

static attr_t a_colhead, a_select, a_warn, a_label, a_sorted, a_key;

void top__setup_colors(void)
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

void top__draw(struct top *t)
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
