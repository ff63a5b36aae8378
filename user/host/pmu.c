// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sysfs PMUs (type, cpus, format/, events/, caps/) and tracefs tracepoints. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/perf_event.h>
#include "pmu.h"
#include "util.h"

#define TRACEFS_MAGIC 0x74726163

/* A path (or name) too long for its buffer is cut, and then simply not found. */
static __attribute__((format(printf, 3, 4))) void pathf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

#define PATHF(buf, ...) pathf(buf, sizeof(buf), __VA_ARGS__)

static char sysfs_root[PATH_MAX] = "/sys";
static char tracefs_dir[PATH_MAX] = "/sys/kernel/tracing";
static bool fake_roots;
static struct pmu *pmus;
static int nr_pmus = -1;

static void pmus_free(void)
{
	int i;

	for (i = 0; i < nr_pmus; i++) {
		free(pmus[i].cpus);
		free(pmus[i].formats);
		free(pmus[i].aliases);
	}
	free(pmus);
	pmus = NULL;
	nr_pmus = -1;
}

static void tps_free(void);

void pmu__set_roots(const char *sysfs, const char *tracefs)
{
	pmus_free();
	tps_free();
	snprintf(sysfs_root, sizeof(sysfs_root), "%s", sysfs);
	snprintf(tracefs_dir, sizeof(tracefs_dir), "%s", tracefs);
	fake_roots = true;
}

/* First line of a small file, trailing newline cut; -errno if unreadable. */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	n = strlen(buf);
	while (n && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	return 0;
}

/* "config:0-7,32-35" (or "config1:3") */
static int parse_format(const char *text, struct pmu_format *f)
{
	const char *p = strchr(text, ':');

	if (!p)
		return -EINVAL;
	if (!strncmp(text, "config:", 7))
		f->field = 0;
	else if (!strncmp(text, "config1:", 8))
		f->field = 1;
	else if (!strncmp(text, "config2:", 8))
		f->field = 2;
	else
		return -EINVAL;
	p++;
	f->nr = 0;
	while (*p) {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;

		if (end == p || lo < 0 || lo > 63 || f->nr == PMU_FORMAT_BITS)
			return -EINVAL;
		p = end;
		if (*p == '-') {
			hi = strtol(p + 1, &end, 10);
			if (end == p + 1 || hi < lo || hi > 63)
				return -EINVAL;
			p = end;
		}
		f->lo[f->nr] = (__u8)lo;
		f->hi[f->nr] = (__u8)hi;
		f->nr++;
		if (*p == ',')
			p++;
		else if (*p)
			return -EINVAL;
	}
	return f->nr ? 0 : -EINVAL;
}

/*
 * Call fn for each file of dir whose name fits max_name (and has no '.'
 * when plain: an alias's .scale and .unit belong to it), with its first
 * line; stops when fn returns non-zero.
 */
static void each_line(struct pmu *p, const char *dir, size_t max_name, bool plain,
		      int (*fn)(struct pmu *p, const char *dir, const char *name, const char *text))
{
	char path[PATH_MAX], text[128];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= max_name ||
		    (plain && strchr(de->d_name, '.')))
			continue;
		PATHF(path, "%s/%s", dir, de->d_name);
		if (read_line(path, text, sizeof(text)) || !text[0])
			continue;
		if (fn(p, dir, de->d_name, text))
			break;
	}
	closedir(d);
}

static int add_format(struct pmu *p, const char *dir, const char *name, const char *text)
{
	struct pmu_format *f, *nf = realloc(p->formats, (p->nr_formats + 1) * sizeof(*nf));

	(void)dir;
	if (!nf)
		return -ENOMEM;
	p->formats = nf;
	f = &nf[p->nr_formats];
	memset(f, 0, sizeof(*f));
	PATHF(f->name, "%s", name);
	if (!parse_format(text, f))
		p->nr_formats++;
	return 0;
}

static int cmp_alias(const void *a, const void *b)
{
	return strcmp(((const struct pmu_alias *)a)->name, ((const struct pmu_alias *)b)->name);
}

static int add_alias(struct pmu *p, const char *dir, const char *name, const char *terms)
{
	struct pmu_alias *a, *na = realloc(p->aliases, (p->nr_aliases + 1) * sizeof(*na));
	char path[PATH_MAX], text[128];

	if (!na)
		return -ENOMEM;
	p->aliases = na;
	a = &na[p->nr_aliases++];
	memset(a, 0, sizeof(*a));
	PATHF(a->name, "%s", name);
	PATHF(a->terms, "%s", terms);
	a->scale = 1.0;
	PATHF(path, "%s/%s.scale", dir, name);
	if (!read_line(path, text, sizeof(text))) {
		char *end;
		double v = strtod(text, &end);

		if (end != text && v > 0)
			a->scale = v;
	}
	PATHF(path, "%s/%s.unit", dir, name);
	if (!read_line(path, text, sizeof(text)))
		PATHF(a->unit, "%s", text);
	return 0;
}

static void load_formats(struct pmu *p, const char *dir)
{
	each_line(p, dir, sizeof(p->formats->name), false, add_format);
}

static void load_aliases(struct pmu *p, const char *dir)
{
	each_line(p, dir, sizeof(p->aliases->name), true, add_alias);
	if (p->nr_aliases)
		qsort(p->aliases, p->nr_aliases, sizeof(*p->aliases), cmp_alias);
}

static int read_int(const char *path, int dflt)
{
	char text[32], *end;
	long v;

	if (read_line(path, text, sizeof(text)))
		return dflt;
	v = strtol(text, &end, 0);
	return end == text ? dflt : (int)v;
}

static int load_pmu(struct pmu *p, const char *dir, const char *name)
{
	char path[PATH_MAX], text[4096], *end;
	unsigned long type;
	bool has_cpus;

	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	PATHF(path, "%s/type", dir);
	if (read_line(path, text, sizeof(text)))
		return -ENOENT;
	type = strtoul(text, &end, 10);
	if (end == text || type > UINT_MAX)
		return -EINVAL;
	p->type = (__u32)type;
	PATHF(path, "%s/cpus", dir);
	has_cpus = !read_line(path, text, sizeof(text));
	if (!has_cpus) {
		PATHF(path, "%s/cpumask", dir);
		if (read_line(path, text, sizeof(text)))
			text[0] = '\0';
	}
	if (text[0]) {
		p->cpus = calloc(PMU_MAX_CPUS, sizeof(*p->cpus));
		if (!p->cpus)
			return -ENOMEM;
		if (cpulist__parse(text, p->cpus, PMU_MAX_CPUS)) {
			free(p->cpus);
			p->cpus = NULL;
		} else {
			PATHF(p->cpulist, "%s", text);
		}
	}
	p->core = !strcmp(name, "cpu") || has_cpus;
	PATHF(path, "%s/format", dir);
	load_formats(p, path);
	PATHF(path, "%s/events", dir);
	load_aliases(p, path);
	PATHF(path, "%s/caps/num_counters", dir);
	p->num_counters = read_int(path, -1);
	PATHF(path, "%s/caps/slots", dir);
	p->slots = read_int(path, 0);
	return 0;
}

static int cmp_pmu(const void *a, const void *b)
{
	return strcmp(((const struct pmu *)a)->name, ((const struct pmu *)b)->name);
}

static void pmus_load(void)
{
	char dir[PATH_MAX], sub[PATH_MAX + 256];
	struct dirent *de;
	DIR *d;

	if (nr_pmus >= 0)
		return;
	nr_pmus = 0;
	PATHF(dir, "%s/bus/event_source/devices", sysfs_root);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		struct pmu *np;

		if (de->d_name[0] == '.' || strlen(de->d_name) >= PMU_NAME_LEN)
			continue;
		np = realloc(pmus, (nr_pmus + 1) * sizeof(*np));
		if (!np)
			break;
		pmus = np;
		PATHF(sub, "%s/%s", dir, de->d_name);
		if (!load_pmu(&pmus[nr_pmus], sub, de->d_name))
			nr_pmus++;
	}
	closedir(d);
	if (nr_pmus)
		qsort(pmus, nr_pmus, sizeof(*pmus), cmp_pmu);
}

const struct pmu *pmus__all(int *nr)
{
	pmus_load();
	*nr = nr_pmus;
	return pmus;
}

const struct pmu *pmu__find(const char *name)
{
	int i;

	pmus_load();
	for (i = 0; i < nr_pmus; i++)
		if (!strcmp(pmus[i].name, name))
			return &pmus[i];
	return NULL;
}

int pmus__nr_core(void)
{
	int i, n = 0;

	pmus_load();
	for (i = 0; i < nr_pmus; i++)
		n += pmus[i].core;
	return n;
}

bool pmu__has_cpu(const struct pmu *p, int cpu)
{
	if (!p->cpus)
		return true;
	return cpu >= 0 && cpu < PMU_MAX_CPUS && p->cpus[cpu];
}

const struct pmu *pmu__core_of_cpu(int cpu)
{
	int i;

	pmus_load();
	for (i = 0; i < nr_pmus; i++)
		if (pmus[i].core && pmus[i].cpus && pmu__has_cpu(&pmus[i], cpu))
			return &pmus[i];
	return NULL;
}

const struct pmu_alias *pmu__alias(const struct pmu *p, const char *name)
{
	struct pmu_alias key;

	if (!p->nr_aliases || strlen(name) >= sizeof(key.name))
		return NULL;
	snprintf(key.name, sizeof(key.name), "%s", name);
	return bsearch(&key, p->aliases, p->nr_aliases, sizeof(key), cmp_alias);
}

static const struct pmu_format *pmu_format(const struct pmu *p, const char *name)
{
	int i;

	for (i = 0; i < p->nr_formats; i++)
		if (!strcmp(p->formats[i].name, name))
			return &p->formats[i];
	return NULL;
}

/* Spread value over the format's bit ranges, low bits first (perf's pmu_format_value). */
static int format_place(const struct pmu_format *f, __u64 value, __u64 cfg[3])
{
	int r, width = 0, shift = 0;

	for (r = 0; r < f->nr; r++)
		width += f->hi[r] - f->lo[r] + 1;
	if (width < 64 && value >> width)
		return -ERANGE;
	for (r = 0; r < f->nr; r++) {
		int w = f->hi[r] - f->lo[r] + 1;
		__u64 mask = w == 64 ? ~0ULL : (1ULL << w) - 1;

		cfg[f->field] |= ((value >> shift) & mask) << f->lo[r];
		shift += w;
	}
	return 0;
}

static void format_names(const struct pmu *p, char *buf, size_t len)
{
	size_t n = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < p->nr_formats && n < len; i++)
		n += snprintf(buf + n, len - n, "%s%s", i ? "," : "", p->formats[i].name);
}

static int encode(const struct pmu *p, const char *terms, __u64 cfg[3],
		  const struct pmu_alias **alias, char *err, size_t len, int depth)
{
	char buf[256], *tok, *save = NULL;
	const char *given[sizeof(buf) / 2];
	size_t nr_given = 0, i;

	if (strlen(terms) >= sizeof(buf)) {
		snprintf(err, len, "terms too long");
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", terms);
	if (!buf[0]) {
		snprintf(err, len, "no terms between %s/ and /", p->name);
		return -EINVAL;
	}
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '='), *end;
		const struct pmu_format *f;
		const struct pmu_alias *a;
		__u64 value = 1;

		while (isspace((unsigned char)*tok))
			tok++;
		if (eq)
			*eq = '\0';
		/* perf would keep the last of two; a typo is likelier than intent */
		for (i = 0; depth == 0 && i < nr_given; i++)
			if (!strcmp(given[i], tok)) {
				snprintf(err, len, "term '%s' given twice in %s/%s/", tok, p->name,
					 terms);
				return -EINVAL;
			}
		if (depth == 0)
			given[nr_given++] = tok;
		if (eq) {
			if (!eq[1]) {
				snprintf(err, len, "missing value for term '%s' of %s", tok,
					 p->name);
				return -EINVAL;
			}
			errno = 0;
			value = strtoull(eq + 1, &end, 0);
			if (errno || *end || eq[1] == '-') {
				snprintf(err, len, "bad value '%s' for term '%s' of %s", eq + 1,
					 tok, p->name);
				return -EINVAL;
			}
		}
		if (!eq && depth == 0 && (a = pmu__alias(p, tok))) {
			int e = encode(p, a->terms, cfg, NULL, err, len, depth + 1);

			if (e)
				return e;
			if (alias)
				*alias = a;
			continue;
		}
		if (!strcmp(tok, "config") || !strcmp(tok, "config1") || !strcmp(tok, "config2")) {
			cfg[tok[6] ? tok[6] - '0' : 0] |= value;
			continue;
		}
		f = pmu_format(p, tok);
		if (!f) {
			char names[160];

			/* sysfs aliases also carry terms that are not formats (period=) */
			if (depth > 0 && (!strcmp(tok, "period") || !strcmp(tok, "percore")))
				continue;
			format_names(p, names, sizeof(names));
			snprintf(err, len, "unknown term '%s' for PMU %s (its terms: %s)", tok,
				 p->name, names[0] ? names : "none");
			return -EINVAL;
		}
		if (format_place(f, value, cfg)) {
			snprintf(err, len, "value 0x%llx does not fit term '%s' of %s",
				 (unsigned long long)value, tok, p->name);
			return -EINVAL;
		}
	}
	return 0;
}

int pmu__encode(const struct pmu *p, const char *terms, __u64 cfg[3],
		const struct pmu_alias **alias, char *err, size_t len)
{
	return encode(p, terms, cfg, alias, err, len, 0);
}

bool pmu__available(void)
{
	static int cached = -1;
	struct perf_event_attr attr = {
		.type = PERF_TYPE_HARDWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_HW_CPU_CYCLES,
		.disabled = 1,
	};
	long fd;

	if (cached >= 0)
		return cached;
	fd = perf_event_open(&attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0) {
		close((int)fd);
		cached = 1;
	} else if (errno == ENOENT || errno == EOPNOTSUPP || errno == ENODEV) {
		cached = 0;
	} else {
		cached = pmus__nr_core() > 0;
	}
	return cached;
}

static bool is_tracefs(const char *dir)
{
	struct statfs sf;

	return !statfs(dir, &sf) && (unsigned long)sf.f_type == TRACEFS_MAGIC;
}

const char *tracefs__root(char *err, size_t len)
{
	static bool mounted;
	char probe[PATH_MAX + 16];

	PATHF(probe, "%s/events", tracefs_dir);
	if (fake_roots || mounted || !access(probe, F_OK))
		return tracefs_dir;
	if (!is_tracefs(tracefs_dir)) {
		if (mount("tracefs", tracefs_dir, "tracefs", 0, NULL)) {
			snprintf(
				err, len,
				"tracefs is not mounted and cannot be mounted at %s (%s): mount it with 'mount -t tracefs tracefs %s'",
				tracefs_dir, strerror(errno), tracefs_dir);
			return NULL;
		}
		pr_err("mounted tracefs at %s (it was not mounted)\n", tracefs_dir);
	}
	mounted = true;
	return tracefs_dir;
}

static bool name_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.')
			return false;
	return true;
}

int tracepoint__id(const char *sys, const char *name, char *err, size_t len)
{
	char path[PATH_MAX + 256], text[32], *end;
	const char *root;
	long id;

	if (!name_ok(sys) || !name_ok(name)) {
		snprintf(err, len, "bad tracepoint name '%s:%s'", sys, name);
		return -EINVAL;
	}
	root = tracefs__root(err, len);
	if (!root)
		return -ENODEV;
	PATHF(path, "%s/events/%s/%s/id", root, sys, name);
	if (read_line(path, text, sizeof(text))) {
		snprintf(err, len, "unknown tracepoint '%s:%s'", sys, name);
		return -ENOENT;
	}
	id = strtol(text, &end, 10);
	if (end == text || id < 0) {
		snprintf(err, len, "unreadable id of tracepoint '%s:%s'", sys, name);
		return -EINVAL;
	}
	return (int)id;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted entry names of a directory that hold an entry called has (or any, if NULL). */
static char **dir_names(const char *dir, const char *has, int *nr)
{
	char **v = NULL, path[PATH_MAX + 512];
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	*nr = 0;
	if (!d)
		return NULL;
	while ((de = readdir(d))) {
		char **nv;

		if (de->d_name[0] == '.')
			continue;
		if (has) {
			PATHF(path, "%s/%s/%s", dir, de->d_name, has);
			if (access(path, F_OK))
				continue;
		}
		nv = realloc(v, (n + 1) * sizeof(*v));
		if (!nv)
			break;
		v = nv;
		v[n] = strdup(de->d_name);
		if (v[n])
			n++;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), cmp_str);
	*nr = n;
	return v;
}

static void names_free(char **v, int n)
{
	while (n--)
		free(v[n]);
	free(v);
}

/* "sys:name" of every tracepoint, in order, read once per tracefs root. */
static char **tps;
static int nr_tps = -1;

static void tps_free(void)
{
	names_free(tps, nr_tps > 0 ? nr_tps : 0);
	tps = NULL;
	nr_tps = -1;
}

static void tps_load(void)
{
	char dir[PATH_MAX + 256], err[256];
	const char *root;
	char **subs, **evs;
	int nsub, nev, i, j;
	size_t cap = 0;

	if (nr_tps >= 0)
		return;
	root = tracefs__root(err, sizeof(err));
	if (!root)
		return; /* tried again next time: tracefs may be mounted by then */
	nr_tps = 0;
	PATHF(dir, "%s/events", root);
	subs = dir_names(dir, NULL, &nsub);
	for (i = 0; i < nsub; i++) {
		PATHF(dir, "%s/events/%s", root, subs[i]);
		evs = dir_names(dir, "id", &nev);
		for (j = 0; j < nev; j++) {
			char **nt = array__room(tps, (size_t)nr_tps, &cap, sizeof(*tps));

			if (!nt)
				break;
			tps = nt;
			if (asprintf(&tps[nr_tps], "%s:%s", subs[i], evs[j]) >= 0)
				nr_tps++;
		}
		names_free(evs, nev);
	}
	names_free(subs, nsub);
}

void tracepoints__each(const char *sys, void (*fn)(const char *sys, const char *name, void *ctx),
		       void *ctx)
{
	size_t sl = sys ? strlen(sys) : 0;
	char tsys[PATH_MAX];
	int i;

	tps_load();
	for (i = 0; i < nr_tps; i++) {
		const char *colon = strchr(tps[i], ':');

		if (sys && ((size_t)(colon - tps[i]) != sl || strncmp(tps[i], sys, sl)))
			continue;
		snprintf(tsys, sizeof(tsys), "%.*s", (int)(colon - tps[i]), tps[i]);
		fn(tsys, colon + 1, ctx);
	}
}
