// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cgroup v2 ids to paths. A cgroup's id is its kernfs node id, which is the
 * inode number of its directory in the cgroup2 mount.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include "cgroup.h"
#include "container.h"
#include "util.h"

struct cg_node {
	__u64 id;
	char *path;
};

struct cgroup_cache {
	char mount[4096];
	int have_mount;
	struct cg_node *nodes;
	size_t nr, cap;
	__u64 scanned_gen;
};

/* mountinfo writes space, tab, newline and backslash as \ooo octal. */
static void unescape_octal(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

int cgroup__find_mount(const char *mountinfo, char *buf, size_t len)
{
	char line[8192];
	FILE *f = fopen(mountinfo, "r");
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char mnt[4096], *sep;

		/* id parent maj:min root mountpoint opts [optional...] - fstype src opts */
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		sep = strstr(line, " - ");
		if (!sep || strncmp(sep + 3, "cgroup2 ", 8))
			continue;
		unescape_octal(mnt);
		if (strlen(mnt) >= len) {
			err = -ENAMETOOLONG;
			break;
		}
		strcpy(buf, mnt);
		err = 0;
		break;
	}
	fclose(f);
	return err;
}

__u64 cgroup__id_of(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return 0;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return 0;
	}
	return st.st_ino;
}

/* path is mount or below it */
static bool path_below(const char *path, const char *mount)
{
	size_t n = strlen(mount);

	if (n == 1 && mount[0] == '/')
		return true;
	return !strncmp(path, mount, n) && (path[n] == '/' || !path[n]);
}

static int not_v2(const char *arg, const char *path, const char *mount)
{
	struct statfs sfs;

	if (!statfs(path, &sfs) && sfs.f_type == CGROUP_SUPER_MAGIC)
		pr_err("cgroup %s is a cgroup v1 directory, not cgroup v2 (mounted at %s)\n", arg,
		       mount);
	else
		pr_err("%s is not a cgroup v2 directory (cgroup v2 is mounted at %s)\n", arg,
		       mount);
	return -EINVAL;
}

#define ID_MATCHES 8

/* The cgroups named after containers whose id starts with prefix: one per container. */
struct id_matches {
	const char *prefix;
	size_t mount_len;
	int nr; /* distinct containers, the first ID_MATCHES kept */
	char long_id[ID_MATCHES][sizeof(((struct container_info *)0)->long_id)];
	char *path[ID_MATCHES];
};

static struct id_matches *id_target;

static int id_cb(const char *fpath, const struct stat *sb, int type, struct FTW *ftw)
{
	struct id_matches *m = id_target;
	struct container_info ci;
	int i;

	if (type != FTW_D)
		return 0;
	container__parse(fpath + m->mount_len, &ci);
	if (!container__id_is(&ci, m->prefix))
		return 0;
	/* parents come first: a container's own cgroup before those inside it */
	for (i = 0; i < m->nr && i < ID_MATCHES; i++)
		if (!strcmp(m->long_id[i], ci.long_id))
			return 0;
	if (m->nr < ID_MATCHES) {
		memcpy(m->long_id[m->nr], ci.long_id, sizeof(ci.long_id));
		m->path[m->nr] = strdup(fpath);
		if (!m->path[m->nr])
			return -1;
	}
	m->nr++;
	return 0;
}

/*
 * A container id, or a prefix of one (container__id_arg()), to the cgroup
 * named after that container, by the rule that labels cgroups everywhere
 * (container__parse(), top's filter): one line and -EINVAL when no
 * container or several have it.
 */
static int resolve_container(const char *arg, const char *mount, char *buf, size_t len)
{
	struct id_matches m = { .prefix = arg, .mount_len = strlen(mount) };
	char more[1024];
	size_t off = 0;
	int i, err = 0;

	if (!strcmp(mount, "/"))
		m.mount_len = 0;
	id_target = &m;
	if (nftw(mount, id_cb, 32, FTW_PHYS | FTW_MOUNT))
		err = -ENOMEM;
	id_target = NULL;
	if (err) {
		pr_err("cannot look for container %s: %s\n", arg, strerror(-err));
	} else if (!m.nr) {
		pr_err("no container has an id starting %s: no cgroup below %s is named after one (docker-ID.scope, libpod-ID, ...)\n",
		       arg, mount);
		err = -EINVAL;
	} else if (m.nr > 1) {
		more[0] = '\0';
		for (i = 0; i < m.nr && i < 3 && off < sizeof(more); i++)
			off += snprintf(more + off, sizeof(more) - off, "%s%s", i ? ", " : "",
					m.path[i] + m.mount_len);
		pr_err("container id %s is ambiguous: %d containers' ids start with it: %s%s; give more digits\n",
		       arg, m.nr, more, m.nr > 3 ? ", ..." : "");
		err = -EINVAL;
	} else if ((size_t)snprintf(buf, len, "%s", m.path[0]) >= len) {
		pr_err("cgroup path too long: %s\n", m.path[0]);
		err = -ENAMETOOLONG;
	}
	for (i = 0; i < m.nr && i < ID_MATCHES; i++)
		free(m.path[i]);
	return err;
}

int cgroup__resolve(const char *arg, char *buf, size_t len)
{
	char mount[4096], joined[8192], *real = NULL;
	struct statfs sfs;
	int err, n;

	if (!*arg) {
		pr_err("empty cgroup path: give a cgroup v2 directory, / for all\n");
		return -EINVAL;
	}
	err = cgroup__find_mount("/proc/self/mountinfo", mount, sizeof(mount));
	if (err) {
		pr_err("no cgroup v2 hierarchy is mounted (%s)\n", strerror(-err));
		return err;
	}
	/*
	 * A path under the mount, or one relative to it ("/system.slice" and
	 * "system.slice" alike); then "." and ".." and links resolved, so the
	 * depth the kernel filter compares is the real one.
	 */
	if (arg[0] == '/' && path_below(arg, mount))
		n = snprintf(joined, sizeof(joined), "%s", arg);
	else
		n = snprintf(joined, sizeof(joined), "%s/%s", mount, arg[0] == '/' ? arg + 1 : arg);
	if (n < 0 || (size_t)n >= sizeof(joined)) {
		pr_err("cgroup path too long: %s\n", arg);
		return -ENAMETOOLONG;
	}
	real = realpath(joined, NULL);
	if (!real && container__id_arg(arg))
		return resolve_container(arg, mount, buf, len);
	if (!real && arg[0] == '/') {
		/* an absolute path elsewhere: say what it is */
		real = realpath(arg, NULL);
		if (real && !path_below(real, mount)) {
			free(real);
			return not_v2(arg, arg, mount);
		}
	}
	if (!real) {
		err = -errno;
		pr_err("cgroup %s: %s (cgroup v2 is mounted at %s)\n", arg, strerror(-err), mount);
		return err;
	}
	if (!path_below(real, mount)) {
		pr_err("cgroup %s is outside the cgroup v2 hierarchy (mounted at %s)\n", arg,
		       mount);
		free(real);
		return -EINVAL;
	}
	if (!cgroup__id_of(real)) {
		err = -errno;
		pr_err("cgroup %s: %s\n", arg, strerror(-err));
		free(real);
		return err;
	}
	if (statfs(real, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		err = not_v2(arg, real, mount);
		free(real);
		return err;
	}
	n = snprintf(buf, len, "%s", real);
	free(real);
	if (n < 0 || (size_t)n >= len) {
		pr_err("cgroup path too long: %s\n", arg);
		return -ENAMETOOLONG;
	}
	return 0;
}

int cgroup__create(const char *name, char *buf, size_t len)
{
	char mount[4096];
	int err, n;

	err = cgroup__find_mount("/proc/self/mountinfo", mount, sizeof(mount));
	if (err) {
		pr_err("no cgroup v2 hierarchy is mounted (%s)\n", strerror(-err));
		return err;
	}
	n = snprintf(buf, len, "%s/%s", mount, name);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	if (mkdir(buf, 0755)) {
		err = -errno;
		pr_err("cannot create cgroup %s: %s\n", buf, strerror(-err));
		return err;
	}
	return 0;
}

int cgroup__level(const char *abs_path)
{
	char mount[4096];
	const char *p;
	int level = 0;

	if (cgroup__find_mount("/proc/self/mountinfo", mount, sizeof(mount)) ||
	    strncmp(abs_path, mount, strlen(mount)))
		return 0;
	for (p = abs_path + strlen(mount); *p; p++)
		if (*p == '/' && p[1] && p[1] != '/')
			level++;
	return level;
}

struct cgroup_cache *cgroup_cache__new(void)
{
	struct cgroup_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->have_mount = !cgroup__find_mount("/proc/self/mountinfo", c->mount, sizeof(c->mount));
	c->scanned_gen = (__u64)-1;
	return c;
}

static struct cgroup_cache *scan_target;

static int add_node(struct cgroup_cache *c, __u64 id, const char *path)
{
	struct cg_node *n;
	size_t i;

	for (i = 0; i < c->nr; i++) {
		if (c->nodes[i].id != id)
			continue;
		if (strcmp(c->nodes[i].path, path)) {
			char *p = strdup(path);

			if (!p)
				return -ENOMEM;
			free(c->nodes[i].path);
			c->nodes[i].path = p;
		}
		return 0;
	}
	n = array__room(c->nodes, c->nr, &c->cap, sizeof(*n));
	if (!n)
		return -ENOMEM;
	c->nodes = n;
	c->nodes[c->nr].id = id;
	c->nodes[c->nr].path = strdup(path);
	if (!c->nodes[c->nr].path)
		return -ENOMEM;
	c->nr++;
	return 0;
}

static int scan_cb(const char *fpath, const struct stat *sb, int type, struct FTW *ftw)
{
	struct cgroup_cache *c = scan_target;
	const char *rel;

	if (type != FTW_D)
		return 0;
	rel = fpath + strlen(c->mount);
	if (add_node(c, sb->st_ino, *rel ? rel : "/"))
		return 1;
	return 0;
}

const char *cgroup_cache__path(struct cgroup_cache *c, __u64 id, __u64 gen)
{
	size_t i;
	int pass;

	if (!c->have_mount)
		return NULL;
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < c->nr; i++)
			if (c->nodes[i].id == id)
				return c->nodes[i].path;
		if (pass || c->scanned_gen == gen)
			break;
		c->scanned_gen = gen;
		scan_target = c;
		nftw(c->mount, scan_cb, 32, FTW_PHYS | FTW_MOUNT);
		scan_target = NULL;
	}
	return NULL;
}

void cgroup_cache__free(struct cgroup_cache *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->nr; i++)
		free(c->nodes[i].path);
	free(c->nodes);
	free(c);
}

__u64 cgroup_cache__parent(struct cgroup_cache *c, const char *path, int *depth)
{
	char parent[4096];
	const char *p;
	size_t i, len;
	int d = 0;

	for (p = path; *p; p++)
		if (*p == '/' && p[1])
			d++;
	*depth = d;
	if (!strcmp(path, "/"))
		return 0;
	p = strrchr(path, '/');
	if (!p)
		return 0;
	len = p == path ? 1 : (size_t)(p - path);
	if (len >= sizeof(parent))
		return 0;
	memcpy(parent, path, len);
	parent[len] = '\0';
	for (i = 0; i < c->nr; i++)
		if (!strcmp(c->nodes[i].path, parent))
			return c->nodes[i].id;
	return 0;
}

/* ---- the kernel's own per-cgroup figures: cpu.stat and PSI ---- */

static void stat_set(struct cgroup_stat *st, int i, __u64 v)
{
	st->v[i] = v;
	st->have |= 1u << i;
}

void cgroup_stat__parse_cpu(const char *text, struct cgroup_stat *st)
{
	static const struct {
		const char *key;
		int index;
		__u64 scale;
	} keys[] = {
		{ "nr_periods", CGS_NR_PERIODS, 1 },
		{ "nr_throttled", CGS_NR_THROTTLED, 1 },
		{ "throttled_usec", CGS_THROTTLED_NS, 1000 },
	};
	const char *line = text;

	while (line && *line) {
		size_t n = strcspn(line, " \n");
		unsigned long long v;
		char *end;
		size_t k;

		for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			if (strlen(keys[k].key) != n || strncmp(line, keys[k].key, n) ||
			    line[n] != ' ')
				continue;
			errno = 0;
			v = strtoull(line + n + 1, &end, 10);
			if (!errno && end != line + n + 1 && (*end == '\n' || !*end))
				stat_set(st, keys[k].index, (__u64)v * keys[k].scale);
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
}

void cgroup_stat__parse_pressure(const char *text, struct cgroup_stat *st, int some)
{
	const char *line = text;

	while (line && *line) {
		int which = !strncmp(line, "some ", 5) ? 0 : !strncmp(line, "full ", 5) ? 1 : -1;
		const char *t = which >= 0 ? strstr(line, " total=") : NULL;
		const char *eol = strchr(line, '\n');
		unsigned long long v;
		char *end;

		if (t && (!eol || t < eol)) {
			errno = 0;
			v = strtoull(t + 7, &end, 10);
			if (!errno && end != t + 7 && (*end == '\n' || !*end))
				stat_set(st, some + which, (__u64)v * 1000);
		}
		line = eol ? eol + 1 : NULL;
	}
}

/* The files read per cgroup: cpu.stat, then the three *.pressure */
enum { CGF_CPU_STAT, CGF_CPU_PSI, CGF_MEMORY_PSI, CGF_IO_PSI, CGF_NR };

static const struct {
	const char *name;
	int some; /* a pressure file's "some" index; -1: cpu.stat */
} cg_files[CGF_NR] = {
	{ "cpu.stat", -1 },
	{ "cpu.pressure", CGS_PSI_CPU_SOME_NS },
	{ "memory.pressure", CGS_PSI_MEMORY_SOME_NS },
	{ "io.pressure", CGS_PSI_IO_SOME_NS },
};

struct cg_prev {
	__u64 id;
	struct cgroup_stat cum; /* cumulative, as read */
	__u64 round; /* the round of that reading */
	int fd1[CGF_NR]; /* a file kept open, + 1 (0: none) */
};

/*
 * Reading a cgroup's four files costs about 120 us a round when each is
 * opened, read and closed (path walk, kernfs open), and a few us when kept
 * open and read again from offset 0. They are kept open for at most
 * CGROUP_KEEP_OPEN cgroups and within a sixteenth of the descriptor limit
 * (the perf counters need theirs: one per CPU and event); the others are
 * opened each round.
 */
#define CGROUP_KEEP_OPEN 256

struct cgroup_stats {
	char mount[4096];
	bool have_mount;
	struct cg_prev *prev;
	__u64 round; /* rounds ended so far */
	unsigned int keep_rounds;
	size_t nr, nr_sorted, cap; /* [0, nr_sorted) sorted by id, then this round's new ones */
	size_t nr_open, max_open; /* files kept open, and their budget */
};

struct cgroup_stats *cgroup_stats__new(unsigned int keep_rounds)
{
	struct cgroup_stats *s = calloc(1, sizeof(*s));
	struct rlimit rl;

	if (!s)
		return NULL;
	s->keep_rounds = keep_rounds ? keep_rounds : 1;
	s->have_mount = !cgroup__find_mount("/proc/self/mountinfo", s->mount, sizeof(s->mount));
	s->max_open = CGROUP_KEEP_OPEN * CGF_NR;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur / 16 < s->max_open)
		s->max_open = rl.rlim_cur / 16;
	return s;
}

static void prev_close(struct cgroup_stats *s, struct cg_prev *p)
{
	int k;

	for (k = 0; k < CGF_NR; k++)
		if (p->fd1[k]) {
			close(p->fd1[k] - 1);
			p->fd1[k] = 0;
			s->nr_open--;
		}
}

void cgroup_stats__free(struct cgroup_stats *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nr; i++)
		prev_close(s, &s->prev[i]);
	free(s->prev);
	free(s);
}

size_t cgroup_stats__open_files(const struct cgroup_stats *s)
{
	return s->nr_open;
}

static int cmp_prev(const void *a, const void *b)
{
	const struct cg_prev *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static struct cg_prev *prev_get(struct cgroup_stats *s, __u64 id)
{
	struct cg_prev key = { .id = id }, *p, *n;
	size_t i;

	p = s->nr_sorted ? bsearch(&key, s->prev, s->nr_sorted, sizeof(*p), cmp_prev) : NULL;
	if (p)
		return p;
	for (i = s->nr_sorted; i < s->nr; i++)
		if (s->prev[i].id == id)
			return &s->prev[i];
	n = array__room(s->prev, s->nr, &s->cap, sizeof(*n));
	if (!n)
		return NULL;
	s->prev = n;
	p = &s->prev[s->nr++];
	memset(p, 0, sizeof(*p));
	p->id = id;
	return p;
}

/*
 * The contents of a cgroup's file k (at most len - 1 bytes), or -errno:
 * from its kept descriptor, else opened (and kept while the budget allows;
 * p may be NULL: not kept).
 */
static int read_file(struct cgroup_stats *s, struct cg_prev *p, const char *dir, int k, char *buf,
		     size_t len)
{
	char path[4200];
	ssize_t n;
	int fd;

	if (p && p->fd1[k]) {
		n = pread(p->fd1[k] - 1, buf, len - 1, 0);
		if (n >= 0) {
			buf[n] = '\0';
			return 0;
		}
		/* ENODEV: the cgroup went; a new one at its path has another id */
		n = -errno;
		close(p->fd1[k] - 1);
		p->fd1[k] = 0;
		s->nr_open--;
		return n;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, cg_files[k].name) >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	buf[n] = '\0';
	if (p && s->nr_open < s->max_open) {
		p->fd1[k] = fd + 1;
		s->nr_open++;
	} else {
		close(fd);
	}
	return 0;
}

__u32 cgroup_stats__read(struct cgroup_stats *s, __u64 id, const char *path,
			 struct cgroup_stat *out)
{
	struct cgroup_stat now = {};
	char dir[4200], buf[1024];
	struct cg_prev *p;
	int i, k;

	memset(out, 0, sizeof(*out));
	if (!s->have_mount || !path || !id ||
	    (size_t)snprintf(dir, sizeof(dir), "%s%s", s->mount, strcmp(path, "/") ? path : "") >=
		    sizeof(dir))
		return 0;
	p = prev_get(s, id);
	for (k = 0; k < CGF_NR; k++) {
		if (read_file(s, p, dir, k, buf, sizeof(buf)))
			continue;
		if (cg_files[k].some < 0)
			cgroup_stat__parse_cpu(buf, &now);
		else
			cgroup_stat__parse_pressure(buf, &now, cg_files[k].some);
	}
	if (!p)
		return now.have;
	/* a reading older than keep_rounds rounds is no earlier reading */
	if (p->round + s->keep_rounds < s->round)
		p->cum.have = 0;
	/* the growth since the previous read; a counter that went back (a new cgroup with its id) has none */
	for (i = 0; i < CGS_NR; i++)
		if ((p->cum.have & now.have & (1u << i)) && now.v[i] >= p->cum.v[i])
			stat_set(out, i, now.v[i] - p->cum.v[i]);
	p->cum = now;
	p->round = s->round;
	return now.have;
}

static struct cgroup_stats *prime_target;

static int prime_cb(const char *fpath, const struct stat *sb, int type, struct FTW *ftw)
{
	struct cgroup_stats *s = prime_target;
	const char *rel = fpath + strlen(s->mount);
	struct cgroup_stat unused;

	if (type == FTW_D)
		cgroup_stats__read(s, sb->st_ino, *rel ? rel : "/", &unused);
	return 0;
}

void cgroup_stats__prime(struct cgroup_stats *s, const char *dir)
{
	if (!s->have_mount || (dir && !path_below(dir, s->mount)))
		return;
	prime_target = s;
	nftw(dir ? dir : s->mount, prime_cb, 32, FTW_PHYS | FTW_MOUNT);
	prime_target = NULL;
}

void cgroup_stats__end(struct cgroup_stats *s)
{
	size_t i, n = 0;

	s->round++;
	for (i = 0; i < s->nr; i++)
		if (s->prev[i].round + s->keep_rounds >= s->round)
			s->prev[n++] = s->prev[i];
		else
			prev_close(s, &s->prev[i]);
	s->nr = s->nr_sorted = n;
	if (n > 1)
		qsort(s->prev, n, sizeof(*s->prev), cmp_prev);
}
