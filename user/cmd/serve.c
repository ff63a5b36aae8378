// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pmbpf serve: the always-on service. Collects every interval, turns the
 * interval deltas into Prometheus counters and serves them on /metrics;
 * tells systemd when it is ready (sd_notify, with watchdog pings).
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include "cgroup.h"
#include "commands.h"
#include "cpi_live.h"
#include "http.h"
#include "options.h"
#include "output.h"
#include "prom.h"
#include "session.h"
#include "util.h"

#define DEFAULT_LISTEN	    "127.0.0.1:9465"
#define DEFAULT_INTERVAL_NS 5000000000ULL
#define DEFAULT_TOP_K	    20
#define DEFAULT_GRACE_NS    (300 * 1000000000ULL)

#define DEFAULT_DELAY_PAIRS 100

enum { OPT_GRACE = OPT_COMMAND, OPT_DELAY_PAIRS };

static const struct cmdopt options[] = {
	{ 'l', "listen", "ADDR:PORT", "where to serve (default " DEFAULT_LISTEN ")" },
	{ 'i', "interval", "TIME", "collection interval (default 5s)" },
	{ 'k', "top-k", "N",
	  "processes with their own series: the top N by CPU\n"
	  "(default 20; 0: cgroup series only); with --threads\n"
	  "as many threads too" },
	{ OPT_GRACE, "grace", "TIME",
	  "keep series of dead processes and removed cgroups\n"
	  "this long (default 5m)" },
	{ 'e', "events", "LIST",
	  "perf events (default " DEFAULT_EVENTS ",\n"
	  "software events where there is no PMU)" },
	{ OPTION_METRICS },
	{ OPTION_CGROUP },
	{ OPTION_MAX_PROCS },
	{ OPTION_RAW_TP },
	{ OPTION_DELAYS },
	{ OPTION_NO_DELAYS },
	/* OPTION_THREADS, worded for series instead of rows */
	{ OPT_THREADS, "threads", NULL,
	  "count each thread apart too (a map entry per thread,\n"
	  "and a switch costs more): the top --top-k threads by\n"
	  "CPU get series of their own (pmbpf_thread_*)" },
	{ OPT_DELAY_PAIRS, "delay-pairs", "N",
	  "(cgroup, by) pairs of run-queue delay with series:\n"
	  "the top N by delay (default 100)" },
	{ OPTION_CPI_WINDOW },
	{ OPTION_CPI_K },
	{ OPTION_VERBOSE },
	{ CMDOPT_HELP },
	{},
};

const struct cmdopts serve_cmdopts = {
	.cmd = "serve",
	.head = "Usage: pmbpf serve [OPTIONS]\n"
		"Collect continuously and serve Prometheus metrics on /metrics.\n",
	.opts = options,
	.tail = "Under systemd (Type=notify) it reports readiness and, with WatchdogSec=,\n"
		"watchdog pings. SIGTERM or SIGINT stop it; SIGHUP is logged and ignored\n"
		"(options come from the command line: restart to change them).\n",
};

struct serve_opts {
	struct session_opts s;
	const char *listen;
	__u64 interval_ns;
	__u64 grace_ns;
	unsigned int top_k;
	unsigned int delay_pairs;
	struct cpi_opts cpi;
	char cgroup_path[4096];
};

struct serve {
	struct serve_opts o;
	struct session *s;
	struct prom_state *ps;
	struct cpi_live *cpi;
	struct http_server *http;
	struct snapshot snap;
	struct cgroup_stats *cgs; /* the cgroups' own files: every cgroup is exported */
	struct strbuf out;
	struct prom_self self;
	char cg_mount[4096];
	bool have_mount;
	__u64 collect_ns_total;
};

/*
 * sd_notify(3) without libsystemd: one datagram to $NOTIFY_SOCKET (a path,
 * or '@' for the abstract namespace). Not under systemd: nothing to do.
 */
static int notify(const char *msg)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n;
	int fd, err = 0;

	if (!path || !*path)
		return 0;
	n = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || n >= sizeof(sa.sun_path))
		return -EAFNOSUPPORT;
	memcpy(sa.sun_path, path, n);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0';
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa,
		   offsetof(struct sockaddr_un, sun_path) + n) < 0)
		err = -errno;
	close(fd);
	return err;
}

/* Watchdog ping period from $WATCHDOG_USEC (half of it), or 0. */
static __u64 watchdog_period_ns(void)
{
	const char *usec = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");
	unsigned long long v;

	if (!usec || uint__parse(usec, 1, ULLONG_MAX / 1000, &v))
		return 0;
	if (pid && (pid_t)strtol(pid, NULL, 10) != getpid())
		return 0;
	return v * 1000ULL / 2;
}

static int parse_args(int argc, char **argv, struct serve_opts *o)
{
	struct cmdopt_getopt g = {};
	unsigned long long v;
	int c, err;

	while ((c = cmdopt__next(&serve_cmdopts, &g, argc, argv)) != -1) {
		err = options__session(c, optarg, &o->s, o->cgroup_path, sizeof(o->cgroup_path));
		if (!err)
			err = options__cpi(c, optarg, &o->cpi);
		if (err < 0)
			return -EINVAL;
		if (err)
			continue;
		switch (c) {
		case 'l':
			o->listen = optarg;
			break;
		case 'i':
			if (options__interval(optarg, 100000000ULL, 0, &o->interval_ns))
				return -EINVAL;
			break;
		case 'k':
			if (uint__parse(optarg, 0, 100000, &v)) {
				pr_err("invalid --top-k '%s': give 0 to 100000\n", optarg);
				return -EINVAL;
			}
			o->top_k = (unsigned int)v;
			break;
		case OPT_DELAY_PAIRS:
			if (uint__parse(optarg, 1, 100000, &v)) {
				pr_err("invalid --delay-pairs '%s': give 1 to 100000\n", optarg);
				return -EINVAL;
			}
			o->delay_pairs = (unsigned int)v;
			break;
		case OPT_GRACE:
			if (duration__parse(optarg, &o->grace_ns)) {
				pr_err("invalid --grace '%s': give 300, 300s, 5m or 500ms\n",
				       optarg);
				return -EINVAL;
			}
			break;
		default:
			cmdopt__default(&serve_cmdopts, c);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		pr_err("unexpected argument '%s'; try 'pmbpf serve --help'\n", argv[optind]);
		return -EINVAL;
	}
	return options__cpi_check(&o->cpi);
}

static bool cgroup_exists(const char *path, void *ctx)
{
	struct serve *sv = ctx;
	char buf[8192];
	struct stat st;

	if (!sv->have_mount)
		return true;
	snprintf(buf, sizeof(buf), "%s%s", sv->cg_mount, path);
	if (stat(buf, &st))
		return errno != ENOENT && errno != ENOTDIR;
	return S_ISDIR(st.st_mode);
}

static void more_families(struct strbuf *out, void *ctx)
{
	struct serve *sv = ctx;

	prom__cpi(out, sv->cpi, &sv->snap);
}

static bool read_flag(const char *path)
{
	char c = '0';
	FILE *f = fopen(path, "r");

	if (!f)
		return false;
	if (fread(&c, 1, 1, f) != 1)
		c = '0';
	fclose(f);
	return c != '0';
}

static void self_figures(struct serve *sv)
{
	struct prom_self *p = &sv->self;
	unsigned long long size = 0, rss = 0;
	long page = sysconf(_SC_PAGESIZE);
	struct rusage ru;
	struct dirent *de;
	DIR *d;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%llu %llu", &size, &rss) != 2)
			size = rss = 0;
		fclose(f);
	}
	p->rss_bytes = (double)rss * page;
	p->vsize_bytes = (double)size * page;
	if (!getrusage(RUSAGE_SELF, &ru))
		p->cpu_seconds = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
				 (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	p->open_fds = 0;
	d = opendir("/proc/self/fd");
	if (d) {
		while ((de = readdir(d)))
			if (de->d_name[0] != '.')
				p->open_fds++;
		closedir(d);
		p->open_fds--; /* the directory itself */
	}
	p->bpf_stats_enabled = read_flag("/proc/sys/kernel/bpf_stats_enabled");
	p->collection_seconds = sv->collect_ns_total / 1e9;
	if (sv->http)
		http__requests(sv->http, p->http_requests);
}

/* HTTP connections and per-CPU counters each hold a descriptor. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* One collection, and a new exposition for the scrapes that follow. */
static int collect(struct serve *sv)
{
	__u64 t0 = now_ns(CLOCK_MONOTONIC), t1;
	int err;

	err = session__collect(sv->s, &sv->snap);
	t1 = now_ns(CLOCK_MONOTONIC);
	sv->collect_ns_total += t1 - t0;
	if (err) {
		sv->self.collection_errors++;
		return err;
	}
	sv->self.collections++;
	if (sv->cgs)
		cgroups__read_stats(sv->cgs, &sv->snap, NULL, NULL);
	err = prom__update(sv->ps, &sv->snap, t1);
	if (!err)
		err = cpi_live__update(sv->cpi, &sv->snap);
	if (err) {
		pr_err("cannot update metrics: %s\n", strerror(-err));
		return err;
	}
	self_figures(sv);
	prom__render(sv->ps, &sv->snap, &sv->self, &sv->out);
	if (sv->out.failed) {
		pr_err("cannot render metrics: %s\n", strerror(ENOMEM));
		return -ENOMEM;
	}
	if (sv->http)
		return http__publish(sv->http, sv->out.buf, sv->out.len);
	return 0;
}

static struct timespec ns_to_ts(__u64 ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000ULL, .tv_nsec = ns % 1000000000ULL };

	return ts;
}

/* Wait until deadline (CLOCK_MONOTONIC) or a signal in set; returns the signal or 0. */
static int wait_signal(const sigset_t *set, __u64 deadline)
{
	__u64 now = now_ns(CLOCK_MONOTONIC);
	struct timespec ts;
	int sig;

	if (now >= deadline)
		return 0;
	ts = ns_to_ts(deadline - now);
	sig = sigtimedwait(set, NULL, &ts);
	return sig > 0 ? sig : 0;
}

static int run(struct serve *sv, const sigset_t *set)
{
	__u64 wd = watchdog_period_ns(), next, next_ping, now;
	int sig, err;

	now = now_ns(CLOCK_MONOTONIC);
	next = now + sv->o.interval_ns;
	next_ping = wd ? now + wd : ULLONG_MAX;
	for (;;) {
		__u64 wake = next < next_ping ? next : next_ping;

		/* exit records are taken every SESSION_DRAIN_NS between collections */
		if (wake > now + SESSION_DRAIN_NS)
			wake = now + SESSION_DRAIN_NS;
		sig = wait_signal(set, wake);
		if (sig == SIGTERM || sig == SIGINT)
			return 0;
		if (sig == SIGHUP) {
			pr_err("SIGHUP ignored: options come from the command line, restart to change them\n");
			continue;
		}
		now = now_ns(CLOCK_MONOTONIC);
		if (now < next) {
			err = session__drain(sv->s);
			if (err < 0)
				return err;
		}
		if (now >= next) {
			err = collect(sv);
			if (err) {
				pr_err("collection failed: %s\n", strerror(-err));
				return err;
			}
			next += sv->o.interval_ns;
			now = now_ns(CLOCK_MONOTONIC);
			/* fell behind (suspend, stopped): start again from now */
			if (next <= now)
				next = now + sv->o.interval_ns;
		}
		if (now >= next_ping) {
			notify("WATCHDOG=1");
			next_ping = now + wd;
		}
	}
}

int cmd_serve(int argc, char **argv)
{
	struct serve sv = {
		.o = {
			.listen = DEFAULT_LISTEN,
			.interval_ns = DEFAULT_INTERVAL_NS,
			.grace_ns = DEFAULT_GRACE_NS,
			.top_k = DEFAULT_TOP_K,
			.delay_pairs = DEFAULT_DELAY_PAIRS,
			.s.delays = DELAYS_AUTO,
			.cpi = { .window = CPI_WINDOW,
				 .k = CPI_K,
				 .min_cpu = CPI_MIN_CPU,
				 .max_suspects = CPI_SUSPECTS },
		},
	};
	struct output out = { .format = OUTPUT_TABLE, .f = stderr };
	struct prom_opts po = {};
	const struct event_info *ev;
	char status[512], where[128];
	sigset_t set;
	int err, fd, nr;

	if (parse_args(argc, argv, &sv.o))
		return 2;
	if (options__default_events(&sv.o.s))
		return 2;
	if (privileges__check())
		return 1;
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		pr_err("no kernel BTF (/sys/kernel/btf/vmlinux: %s): pmbpf needs a kernel built with CONFIG_DEBUG_INFO_BTF=y\n",
		       strerror(errno));
		return 1;
	}

	/* Signals are taken synchronously; every thread (libmicrohttpd's too) blocks them. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	raise_fd_limit();
	fd = http__listen(sv.o.listen);
	if (fd < 0)
		return fd == -EINVAL ? 2 : 1;
	/* What was bound, not what was asked: port 0 is the kernel's choice. */
	if (http__local_addr(fd, where, sizeof(where)))
		snprintf(where, sizeof(where), "%s", sv.o.listen);
	sv.have_mount =
		!cgroup__find_mount("/proc/self/mountinfo", sv.cg_mount, sizeof(sv.cg_mount));
	po.top_k = sv.o.top_k;
	po.threads = sv.o.s.threads;
	po.delay_pairs = sv.o.delay_pairs;
	po.grace_ns = sv.o.grace_ns;
	po.cgroup_exists = cgroup_exists;
	po.more = more_families;
	po.ctx = &sv;
	sv.ps = prom__new(&po);
	sv.cpi = cpi_live__new(&sv.o.cpi, false);
	sv.cgs = cgroup_stats__new(CGROUP_STATS_KEEP);
	if (!sv.ps || !sv.cpi || !sv.cgs) {
		pr_err("%s\n", strerror(ENOMEM));
		close(fd);
		prom__free(sv.ps);
		cpi_live__free(sv.cpi);
		cgroup_stats__free(sv.cgs);
		return 1;
	}
	sv.self.version = PMBPF_VERSION;
	sv.self.start_time_seconds = now_ns(CLOCK_REALTIME) / 1e9;

	sv.o.s.interval_ns = sv.o.interval_ns;
	err = session__open(&sv.s, &sv.o.s);
	if (err) {
		close(fd);
		goto cleanup;
	}
	ev = session__events(sv.s, &nr);
	output__start(&out, ev, nr, session__no_pmu(sv.s), session__attach_kind(sv.s),
		      (int)sysconf(_SC_NPROCESSORS_ONLN));
	sv.self.no_pmu = session__no_pmu(sv.s);
	cgroup_stats__prime(sv.cgs, sv.o.s.cgroup);

	sv.http = http__start(fd);
	if (!sv.http) {
		err = -EIO;
		goto cleanup;
	}
	/* Metrics from the start: event states, self figures. */
	err = collect(&sv);
	if (err)
		goto cleanup;

	snprintf(
		status, sizeof(status),
		"READY=1\nSTATUS=serving http://%s/metrics, collecting every %.3gs (%s)\nMAINPID=%d",
		where, sv.o.interval_ns / 1e9, session__attach_kind(sv.s), (int)getpid());
	notify(status);
	pr_err("serving http://%s/metrics, collecting every %.3gs\n", where,
	       sv.o.interval_ns / 1e9);

	err = run(&sv, &set);
	notify("STOPPING=1");
cleanup:
	http__stop(sv.http);
	session__close(sv.s);
	prom__free(sv.ps);
	cpi_live__free(sv.cpi);
	cgroup_stats__free(sv.cgs);
	snapshot__free(&sv.snap);
	strbuf__free(&sv.out);
	return err ? 1 : 0;
}
