// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The text exposition (format 0.0.4) of serve's counters (prom.c): the
 * catalog's families for cgroups, processes and threads, the --delays
 * pairs, then pmbpf's own (prom_self.c) and the caller's. The text of a
 * series set whose counters did not move since the last exposition is
 * copied from its cache, not rendered again.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "catalog.h"
#include "metrics.h"
#include "htab.h"
#include "json_writer.h"
#include "prom.h"
#include "prom_state.h"
#include "util.h"

void prom__label_value(struct strbuf *sb, const char *v)
{
	const unsigned char *s = (const unsigned char *)v;

	strbuf__putc(sb, '"');
	while (*s) {
		const unsigned char *q = s;
		int n;

		/* printable ASCII but '\\' and '"' as it is */
		while (*q >= 0x20 && *q < 0x7f && *q != '\\' && *q != '"')
			q++;
		if (q > s) {
			strbuf__add(sb, (const char *)s, q - s);
			s = q;
			continue;
		}
		n = utf8_len(s);

		if (!n) {
			strbuf__printf(sb, "?");
			s++;
		} else if (*s != '\n' && !text__char((const char *)s, false, &n)) {
			/* a control character: no escape sequence for a terminal reading it */
			strbuf__printf(sb, TEXT_REPLACEMENT);
			s += n;
		} else if (*s == '\\' || *s == '"') {
			strbuf__printf(sb, "\\%c", *s);
			s++;
		} else if (*s == '\n') {
			strbuf__printf(sb, "\\n");
			s++;
		} else {
			strbuf__add(sb, (const char *)s, n);
			s += n;
		}
	}
	strbuf__putc(sb, '"');
}

void series_cache__free(struct series_cache *c)
{
	if (!c)
		return;
	strbuf__free(&c->text);
	free(c->off);
	free(c->labels);
	free(c);
}

/* " help", escaped for a HELP line. */
static void help_text(struct strbuf *sb, const char *help)
{
	const char *p;

	strbuf__printf(sb, " ");
	for (p = help; *p; p++) {
		size_t n = strcspn(p, "\\\n");

		strbuf__printf(sb, "%.*s", (int)n, p);
		p += n;
		if (!*p)
			break;
		strbuf__printf(sb, *p == '\\' ? "\\\\" : "\\n");
	}
}

static void family(struct strbuf *sb, const char *name, const char *type, const char *help)
{
	strbuf__printf(sb, "# HELP %s", name);
	help_text(sb, help);
	strbuf__printf(sb, "\n# TYPE %s %s\n", name, type);
}

static void put_double(struct strbuf *sb, double v)
{
	if (isnan(v)) {
		strbuf__add(sb, "NaN\n", 4);
	} else if (isinf(v)) {
		strbuf__puts(sb, v > 0 ? "+Inf\n" : "-Inf\n");
	} else if (v == floor(v) && fabs(v) < 1e15) {
		/* "%.0f" of a whole number: its digits, "-0" for -0.0 */
		if (signbit(v))
			strbuf__putc(sb, '-');
		strbuf__u64(sb, (__u64)fabs(v));
		strbuf__putc(sb, '\n');
	} else {
		strbuf__printf(sb, "%.15g\n", v);
	}
}

/* Nanoseconds as exact decimal seconds. */
static void put_ns(struct strbuf *sb, __u64 ns)
{
	__u64 frac = ns % 1000000000ULL;
	char *p;
	int k;

	strbuf__u64(sb, ns / 1000000000ULL);
	p = strbuf__room(sb, 11);
	if (!p)
		return;
	p[0] = '.';
	for (k = 9; k > 0; k--, frac /= 10)
		p[k] = '0' + frac % 10;
	p[10] = '\n';
	p[11] = '\0';
	sb->len += 11;
}

static void put_u64(struct strbuf *sb, __u64 v)
{
	strbuf__u64(sb, v);
	strbuf__putc(sb, '\n');
}

void prom__family(struct strbuf *sb, const char *name, const char *type, const char *help)
{
	family(sb, name, type, help);
}

void prom__value(struct strbuf *sb, double v)
{
	put_double(sb, v);
}

void prom__ns(struct strbuf *sb, __u64 ns)
{
	put_ns(sb, ns);
}

void prom__u64(struct strbuf *sb, __u64 v)
{
	put_u64(sb, v);
}

/* Upper bound of run-queue histogram slot k (< 2^(k+1) us), in seconds. */
static void put_le(struct strbuf *sb, int k)
{
	static char le[PMBPF_RUNQ_SLOTS][32];
	char *buf = le[k];
	size_t n;

	if (!buf[0]) {
		snprintf(buf, sizeof(le[k]), "%.6f", (double)pmbpf_runq_slot_upper_ns(k) / 1e9);
		n = strlen(buf);
		while (n > 1 && buf[n - 1] == '0')
			buf[--n] = '\0';
		if (buf[n - 1] == '.')
			buf[--n] = '\0';
	}
	strbuf__puts(sb, buf);
}

static bool is_ns(const struct figure *fd)
{
	return !strcmp(fd->unit, "ns");
}

/* Labels of instance i of a per-event or -M figure, after a ','. */
static void instance_labels(struct strbuf *sb, const struct figure *fd, const struct snapshot *snap,
			    int i)
{
	if (figure__per_event(fd)) {
		strbuf__add(sb, ",event=", 7);
		prom__label_value(sb, snap->events[i].spec.name);
	} else if (fd->src == SRC_METRIC) {
		const struct metric_use *mu = &snap->metrics->m[i / METRIC_MAX_VALUES];

		strbuf__printf(sb, ",metric=");
		prom__label_value(sb, mu->name);
		strbuf__printf(sb, ",figure=");
		prom__label_value(sb, metric_use__values(mu)[i % METRIC_MAX_VALUES]);
	}
}

/* One series set: a cgroup, a process or a thread. */
struct series {
	const char *labels;
	const struct acc *acc;
	struct series_cache *cache; /* NULL: render it every time */
};

/* Before an exposition: may s's cached text be copied, or must it be rendered (building)? */
static void cache_check(const struct prom_state *ps, struct series *s)
{
	struct series_cache *c = s->cache;

	if (!c || !s->acc)
		return;
	c->building =
		!(c->valid && c->acc_update == s->acc->last_update &&
		  c->current == (s->acc->last_update == ps->updates) && c->shape == ps->shape);
	if (c->building) {
		c->text.len = 0;
		c->text.failed = false;
		c->nr_off = 0;
	}
}

/* After it: what was built is valid from now on. */
static void cache_done(const struct prom_state *ps, struct series *s)
{
	struct series_cache *c = s->cache;

	if (!c || !s->acc || !c->building)
		return;
	c->building = false;
	c->valid = !c->text.failed;
	c->acc_update = s->acc->last_update;
	c->current = s->acc->last_update == ps->updates;
	c->shape = ps->shape;
}

/* The k-th family's samples of a valid cache, copied to out. */
static void cache_copy(struct strbuf *out, const struct series_cache *c, size_t k)
{
	size_t end;

	if (k >= c->nr_off)
		return;
	end = k + 1 < c->nr_off ? c->off[k + 1] : c->text.len;
	strbuf__add(out, c->text.buf + c->off[k], end - c->off[k]);
}

/* The k-th family's samples of a cache being built: out[start..) */
static void cache_keep(struct series_cache *c, const struct strbuf *out, size_t start)
{
	size_t *off;

	if (c->text.failed)
		return;
	off = array__room(c->off, c->nr_off, &c->cap_off, sizeof(*off));
	if (!off) {
		c->text.failed = true;
		return;
	}
	c->off = off;
	c->off[c->nr_off++] = c->text.len;
	if (!out->failed)
		strbuf__add(&c->text, out->buf + start, out->len - start);
}

/* Run-queue latency: a histogram (buckets, sum, count), or a summary (sum, count). */
static void runq_samples(struct strbuf *sb, const char *name, const char *labels,
			 const struct acc *a, bool buckets)
{
	__u64 cum = 0;
	int i;

	for (i = 0; i < PMBPF_RUNQ_SLOTS; i++) {
		cum += a->runq_hist[i];
		if (!buckets)
			continue;
		strbuf__puts(sb, name);
		strbuf__add(sb, "_bucket{", 8);
		strbuf__puts(sb, labels);
		strbuf__add(sb, ",le=\"", 5);
		if (i < PMBPF_RUNQ_SLOTS - 1)
			put_le(sb, i);
		else
			strbuf__add(sb, "+Inf", 4);
		strbuf__add(sb, "\"} ", 3);
		put_u64(sb, cum);
	}
	strbuf__puts(sb, name);
	strbuf__add(sb, "_sum{", 5);
	strbuf__puts(sb, labels);
	strbuf__add(sb, "} ", 2);
	put_ns(sb, a->n[PMBPF_N_RUNQ_TOTAL_NS]);
	strbuf__puts(sb, name);
	strbuf__add(sb, "_count{", 7);
	strbuf__puts(sb, labels);
	strbuf__add(sb, "} ", 2);
	put_u64(sb, cum);
}

/*
 * The sample of instance i of figure fd for a series set; none for an event
 * that does not count, a gauge not counted in the last interval (a -M metric
 * not supported here is never counted), a gauge of a set not seen in the
 * last interval (m NULL: else its figures then).
 */
static void sample(struct strbuf *sb, const struct snapshot *snap, const char *name,
		   const struct series *s, const struct row_metrics *m, const struct figure *fd,
		   int i)
{
	const struct acc *a = s->acc;
	double v = NAN;
	int k = ev_slot(fd->src);

	if (!figure__applies(fd, snap, i) || (figure__per_event(fd) && !event_counting(snap, i)))
		return;
	if (fd->kind == FIG_GAUGE) {
		v = m ? figure__value(fd, &a->last, m, i) : NAN;
		if (!isfinite(v))
			return;
	} else if (fd->src == SRC_CGROUP) {
		if (!(a->cg_have & (1u << fd->index)))
			return; /* never read, or no such file here */
	} else if (fd->src != SRC_COUNT && k < 0) {
		return; /* a counter prom.c does not accumulate: tests/unit/test_prom.c fails */
	}
	strbuf__puts(sb, name);
	strbuf__putc(sb, '{');
	strbuf__puts(sb, s->labels);
	if (fd->prom_labels) {
		strbuf__putc(sb, ',');
		strbuf__puts(sb, fd->prom_labels);
	}
	instance_labels(sb, fd, snap, i);
	strbuf__add(sb, "} ", 2);
	if (fd->kind == FIG_GAUGE)
		put_double(sb, is_ns(fd) ? v / 1e9 : v);
	else if (fd->src == SRC_EVENT)
		put_double(sb, is_ns(fd) || figure__ns(fd, snap, i) ? a->ev[k][i].d / 1e9 :
								      a->ev[k][i].d);
	else if (is_ns(fd))
		put_ns(sb, fd->src == SRC_COUNT	 ? a->n[fd->index] :
			   fd->src == SRC_CGROUP ? a->cg[fd->index] :
						   a->ev[k][i].u);
	else
		put_u64(sb, fd->src == SRC_COUNT  ? a->n[fd->index] :
			    fd->src == SRC_CGROUP ? a->cg[fd->index] :
						    a->ev[k][i].u);
}

static bool same_family(const struct figure *a, const struct figure *b)
{
	return (b->outputs & OUT_PROM) && b->prom && !strcmp(a->prom, b->prom);
}

int prom_families(struct prom_state *ps)
{
	const struct figure *figs;
	size_t nr, f, j;

	figs = catalog__figures(&nr);
	ps->fam_next = calloc(nr + 1, sizeof(*ps->fam_next));
	ps->fam_head = calloc(nr + 1, sizeof(*ps->fam_head));
	if (!ps->fam_next || !ps->fam_head) {
		free(ps->fam_next);
		free(ps->fam_head);
		return -ENOMEM;
	}
	for (f = 0; f < nr; f++) {
		ps->fam_next[f] = nr;
		if (!(figs[f].outputs & OUT_PROM) || !figs[f].prom)
			continue;
		for (j = f + 1; j < nr && !same_family(&figs[f], &figs[j]); j++)
			;
		ps->fam_next[f] = j;
		for (j = 0; j < f && !same_family(&figs[f], &figs[j]); j++)
			;
		ps->fam_head[f] = j == f;
	}
	return 0;
}

/*
 * The family of catalog figure figs[f] below pmbpf_<what>_, with the figures
 * after it that share it (their own prom_labels tell them apart). A family's
 * samples are contiguous: set by set, figure by figure.
 */
static void render_family(struct strbuf *out, const struct prom_state *ps,
			  const struct snapshot *snap, const char *what, const struct figure *figs,
			  size_t nr, size_t f, const struct series *s, size_t ns, bool clock,
			  size_t fam)
{
	bool cgroup = !strcmp(what, "cgroup"), hist = figs[f].src == SRC_RUNQ_HIST;
	bool gauges = false;
	struct row_metrics m;
	const char *type;
	char name[128];
	size_t i, j;
	int k;

	snprintf(name, sizeof(name), "pmbpf_%s_%s", what, clock ? figs[f].prom_time : figs[f].prom);
	/* cardinality: run-queue buckets per cgroup, sum and count per process (thread) */
	if (hist)
		type = cgroup ? "histogram" : "summary";
	else
		type = figs[f].kind == FIG_COUNTER ? "counter" : "gauge";
	strbuf__printf(out, "# HELP %s", name);
	for (j = f; j < nr; j = ps->fam_next[j]) {
		help_text(out, figs[j].help);
		gauges |= figs[j].kind == FIG_GAUGE;
	}
	if (hist && !cgroup)
		strbuf__printf(out, " Sum and count only.");
	strbuf__printf(out, "\n# TYPE %s %s\n", name, type);
	for (i = 0; i < ns; i++) {
		size_t start = out->len;
		bool current;

		if (!s[i].acc)
			continue;
		if (s[i].cache && !s[i].cache->building) {
			cache_copy(out, s[i].cache, fam);
			continue;
		}
		if (hist) {
			runq_samples(out, name, s[i].labels, s[i].acc, cgroup);
		} else {
			/* gauges: the figures of the last interval, if the set was seen in it */
			current = gauges && s[i].acc->last_update == ps->updates;
			if (current)
				metrics__figures(snap, &s[i].acc->last, &m);
			for (j = f; j < nr; j = ps->fam_next[j]) {
				for (k = 0; k < figure__instances(&figs[j], snap); k++)
					if (!figs[j].prom_time ||
					    figure__ns(&figs[j], snap, k) == clock)
						sample(out, snap, name, &s[i], current ? &m : NULL,
						       &figs[j], k);
			}
		}
		if (s[i].cache)
			cache_keep(s[i].cache, out, start);
	}
}

bool prom__has_clock_event(const struct snapshot *snap)
{
	int i;

	for (i = 0; i < snap->nr_events; i++)
		if (snap->events[i].spec.kind & EVENT_TIME)
			return true;
	return false;
}

/* Every Prometheus family of the catalog, for cgroups, processes or threads. */
static void render_sets(struct strbuf *out, const struct prom_state *ps,
			const struct snapshot *snap, const char *what, struct series *s, size_t ns)
{
	bool cgroup = !strcmp(what, "cgroup");
	const struct figure *figs;
	size_t nr, f, j, fam = 0;

	for (j = 0; j < ns; j++)
		cache_check(ps, &s[j]);
	figs = catalog__figures(&nr);
	for (f = 0; f < nr; f++) {
		if (!(figs[f].outputs & OUT_PROM) || !figs[f].prom ||
		    (!cgroup && figs[f].prom_cgroup_only))
			continue;
		/* rendered with the first figure of its family */
		if (!ps->fam_head[f])
			continue;
		render_family(out, ps, snap, what, figs, nr, f, s, ns, false, fam++);
		if (figs[f].prom_time && prom__has_clock_event(snap))
			render_family(out, ps, snap, what, figs, nr, f, s, ns, true, fam++);
	}
	for (j = 0; j < ns; j++)
		cache_done(ps, &s[j]);
}

static void proc_labels(struct strbuf *sb, const struct proc *p)
{
	strbuf__printf(sb, "pid=\"%u\",", p->pid);
	if (p->tid)
		strbuf__printf(sb, "tid=\"%u\",", p->tid);
	strbuf__printf(sb, "comm=");
	prom__label_value(sb, p->comm);
	strbuf__printf(sb, ",cgroup=");
	prom__label_value(sb, p->cgroup ? p->cgroup : "");
}

static int cmp_cg_path(const void *a, const void *b)
{
	return strcmp((*(struct cg *const *)a)->path, (*(struct cg *const *)b)->path);
}

static int cmp_dpair(const void *a, const void *b)
{
	const struct dpair *x = *(struct dpair *const *)a, *y = *(struct dpair *const *)b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return strcmp(x->cgroup, y->cgroup) ?: strcmp(x->by, y->by);
}

/*
 * --delays: the top delay_pairs (cgroup, by) pairs by their delay so far.
 * A pair that leaves the top stops being exported; its counter goes on
 * (rate() over a gap sees the growth when it comes back).
 */
static void render_dpairs(struct prom_state *ps, struct strbuf *out)
{
	const struct figure *fd = catalog__delay();
	struct dpair **all;
	size_t i, n = 0, max = ps->o.delay_pairs ? ps->o.delay_pairs : 100;
	struct hnode *h;
	char name[128];

	if (!ps->delays_on)
		return;
	all = calloc(ps->dpairs.nr + 1, sizeof(*all));
	if (!all) {
		out->failed = true;
		return;
	}
	for (i = 0; i < ps->dpairs.nr_buckets; i++)
		for (h = ps->dpairs.b[i]; h; h = h->next)
			all[n++] = (struct dpair *)h;
	if (n > 1)
		qsort(all, n, sizeof(*all), cmp_dpair);
	if (n > max)
		n = max;
	snprintf(name, sizeof(name), "pmbpf_cgroup_%s", fd->prom);
	family(out, name, "counter", fd->help);
	for (i = 0; i < n; i++) {
		strbuf__printf(out, "%s{cgroup=", name);
		prom__label_value(out, all[i]->cgroup);
		strbuf__printf(out, ",by=");
		prom__label_value(out, all[i]->by);
		strbuf__printf(out, "} ");
		put_ns(out, all[i]->ns);
	}
	free(all);
}

/* The cache of a series set, made on first use; NULL when out of memory. */
static struct series_cache *cache_of(struct series_cache **c)
{
	if (!*c)
		*c = calloc(1, sizeof(**c));
	return *c;
}

/* p's labels, rendered again only when its comm changed. */
static const char *cached_labels(struct series_cache *c, const struct proc *p)
{
	struct strbuf lb = {};

	if (c->labels && !memcmp(c->comm, p->comm, sizeof(c->comm)))
		return c->labels;
	proc_labels(&lb, p);
	strbuf__putc(&lb, '\0');
	if (lb.failed) {
		strbuf__free(&lb);
		return NULL;
	}
	free(c->labels);
	c->labels = lb.buf;
	memcpy(c->comm, p->comm, sizeof(c->comm));
	c->valid = false;
	return c->labels;
}

/* The families of the processes (or threads) with series, by CPU ranking. */
static void render_ranked(struct prom_state *ps, struct ranking *r, const struct snapshot *snap,
			  const char *what, struct strbuf *out)
{
	struct series *s = calloc(r->nr_exported + 1, sizeof(*s));
	struct proc **rank;
	size_t i, np = 0;

	if (!s || ranking__exported(r, &rank, &np)) {
		out->failed = true;
		goto out;
	}
	for (i = 0; i < np; i++) {
		struct proc *p = rank[i];

		if (!p->acc)
			continue;
		s[i].cache = cache_of(&p->cache);
		s[i].labels = s[i].cache ? cached_labels(s[i].cache, p) : NULL;
		if (!s[i].labels) {
			out->failed = true;
			goto out;
		}
		s[i].acc = p->acc;
	}
	render_sets(out, ps, snap, what, s, np);
out:
	free(s);
}

/*
 * Cgroups whose processes found the counts map full (their figures are in
 * the cgroup's [overflow] row): a series from the first such interval on.
 * The family is there on every host, empty while nothing overflowed.
 */
static void render_overflow(struct strbuf *out, struct cg *const *cgs, size_t nc)
{
	const struct figure *fd = catalog__overflow();
	char name[128];
	size_t i;

	snprintf(name, sizeof(name), "pmbpf_cgroup_%s", fd->prom);
	family(out, name, "counter", fd->help);
	for (i = 0; i < nc; i++) {
		if (!cgs[i]->overflow_procs)
			continue;
		strbuf__printf(out, "%s{%s} ", name, cgs[i]->labels);
		put_u64(out, cgs[i]->overflow_procs);
	}
}

static void render_figures(struct prom_state *ps, const struct snapshot *snap, struct strbuf *out)
{
	size_t i, nc = 0;
	struct series *s = calloc(ps->cgroups.nr + 1, sizeof(*s));
	struct cg **cgs = calloc(ps->cgroups.nr + 1, sizeof(*cgs));
	struct hnode *n;

	if (!s || !cgs) {
		out->failed = true;
		goto out;
	}
	for (i = 0; i < ps->cgroups.nr_buckets; i++)
		for (n = ps->cgroups.b[i]; n; n = n->next)
			cgs[nc++] = (struct cg *)n;
	if (nc > 1)
		qsort(cgs, nc, sizeof(*cgs), cmp_cg_path);
	for (i = 0; i < nc; i++)
		s[i] = (struct series){ cgs[i]->labels, &cgs[i]->acc, cache_of(&cgs[i]->cache) };
	render_sets(out, ps, snap, "cgroup", s, nc);
	render_overflow(out, cgs, nc);
	render_ranked(ps, &ps->procs, snap, "process", out);
	if (ps->o.threads)
		render_ranked(ps, &ps->threads, snap, "thread", out);
	render_dpairs(ps, out);
out:
	free(cgs);
	free(s);
}

/* What the families and samples depend on in snap, but the sets' counters: the events and metrics. */
static __u64 shape(const struct snapshot *snap)
{
	__u64 h = 0xcbf29ce484222325ULL;
	int i;

	h = hash_bytes(h, &snap->nr_events, sizeof(snap->nr_events));
	for (i = 0; i < snap->nr_events; i++) {
		h = hash_bytes(h, snap->events[i].spec.name, strlen(snap->events[i].spec.name));
		h = hash_bytes(h, &snap->events[i].spec.kind, sizeof(snap->events[i].spec.kind));
		h = hash_bytes(h, &snap->events[i].state, sizeof(snap->events[i].state));
	}
	h = hash_bytes(h, &snap->metrics, sizeof(snap->metrics));
	for (i = 0; snap->metrics && i < snap->metrics->nr; i++)
		h = hash_bytes(h, &snap->metrics->m[i].def, sizeof(snap->metrics->m[i].def));
	return h;
}

void prom__render(struct prom_state *ps, const struct snapshot *snap, const struct prom_self *self,
		  struct strbuf *out)
{
	size_t samples = 0;
	const char *p, *end;

	out->len = 0;
	out->failed = false;
	ps->shape = shape(snap);
	render_figures(ps, snap, out);
	prom__render_self(ps, snap, self, out);
	if (ps->o.more)
		ps->o.more(out, ps->o.ctx);
	if (out->failed || !out->buf)
		return;
	/* Size of the exposition itself, so that cardinality is visible. */
	for (p = out->buf, end = out->buf + out->len; p < end; p++) {
		const char *nl = memchr(p, '\n', end - p);

		if (*p != '#')
			samples++;
		if (!nl)
			break;
		p = nl;
	}
	prom__samples(out, samples + 1);
}
