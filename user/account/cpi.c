// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* CPI outliers and their suspects: the rules are in cpi.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpi.h"
#include "stats.h"

void cpi__baseline(const double *x, int n, struct cpi_baseline *b)
{
	struct summary s;

	stats__summary(x, n, &s);
	b->n = n;
	b->mean = s.mean;
	b->sd = s.stddev;
}

double cpi__threshold(const struct cpi_baseline *b)
{
	double floor = CPI_SD_FLOOR * fabs(b->mean);

	if (b->n < 2 || !isfinite(b->sd))
		return NAN;
	return b->mean + CPI_SIGMAS * (b->sd > floor ? b->sd : floor);
}

double cpi__pearson(const double *x, const double *y, int n)
{
	double mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;
	int i;

	if (n < 3)
		return NAN;
	for (i = 0; i < n; i++) {
		if (!isfinite(x[i]) || !isfinite(y[i]))
			return NAN;
		mx += x[i];
		my += y[i];
	}
	mx /= n;
	my /= n;
	/* two passes, as stats__summary: no cancellation on large values */
	for (i = 0; i < n; i++) {
		sxy += (x[i] - mx) * (y[i] - my);
		sxx += (x[i] - mx) * (x[i] - mx);
		syy += (y[i] - my) * (y[i] - my);
	}
	if (sxx <= 0 || syy <= 0)
		return NAN;
	return sxy / sqrt(sxx * syy);
}

struct victim {
	char *name;
	/* rings of the last window intervals, at interval t % window */
	double *cpu; /* 0 when it had no sample */
	double *value; /* NaN when it had no usable sample */
	double *base; /* ring of the last base_n (<= window) normal samples */
	double *held; /* samples of the current run above the threshold */
	int base_n, base_next;
	int run;
	long long last_seen;
};

struct cpi_detector {
	struct cpi_opts o;
	long long t; /* intervals seen */
	long long judged; /* samples compared with a threshold */
	struct victim *v;
	int nr, cap;
	struct cpi_outlier *out;
	int nr_out, cap_out;
	double *x, *y; /* scratch: one window of pairs */
};

struct cpi_detector *cpi__new(const struct cpi_opts *o)
{
	struct cpi_detector *d;

	if (o->window < CPI_MIN_BASELINE || o->window > CPI_MAX_WINDOW || o->k < 1 ||
	    o->k > o->window || !(o->min_cpu >= 0) || o->max_suspects < 0 ||
	    o->max_suspects > CPI_MAX_SUSPECTS) {
		errno = EINVAL;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->o = *o;
	d->x = malloc(sizeof(double) * o->window);
	d->y = malloc(sizeof(double) * o->window);
	if (!d->x || !d->y) {
		cpi__free(d);
		errno = ENOMEM;
		return NULL;
	}
	return d;
}

static void victim__free(struct victim *v)
{
	free(v->name);
	free(v->cpu);
	free(v->value);
	free(v->base);
	free(v->held);
}

void cpi__free(struct cpi_detector *d)
{
	int i;

	if (!d)
		return;
	for (i = 0; i < d->nr; i++)
		victim__free(&d->v[i]);
	free(d->v);
	free(d->out);
	free(d->x);
	free(d->y);
	free(d);
}

static struct victim *victim__get(struct cpi_detector *d, const char *name)
{
	int i, w = d->o.window;
	struct victim *v;

	for (i = 0; i < d->nr; i++)
		if (!strcmp(d->v[i].name, name))
			return &d->v[i];
	if (d->nr == d->cap) {
		int cap = d->cap ? d->cap * 2 : 16;
		struct victim *nv = realloc(d->v, sizeof(*nv) * cap);

		if (!nv)
			return NULL;
		d->v = nv;
		d->cap = cap;
	}
	v = &d->v[d->nr];
	memset(v, 0, sizeof(*v));
	v->name = strdup(name);
	v->cpu = calloc(w, sizeof(double));
	v->value = malloc(sizeof(double) * w);
	v->base = malloc(sizeof(double) * w);
	v->held = malloc(sizeof(double) * w);
	if (!v->name || !v->cpu || !v->value || !v->base || !v->held) {
		victim__free(v);
		return NULL;
	}
	/* before it was seen it used no CPU and had no sample */
	for (i = 0; i < w; i++)
		v->value[i] = NAN;
	d->nr++;
	return v;
}

static void base__add(struct victim *v, int window, double x)
{
	v->base[v->base_next] = x;
	v->base_next = (v->base_next + 1) % window;
	if (v->base_n < window)
		v->base_n++;
}

static struct cpi_outlier *outlier__add(struct cpi_detector *d)
{
	if (d->nr_out == d->cap_out) {
		int cap = d->cap_out ? d->cap_out * 2 : 4;
		struct cpi_outlier *n = realloc(d->out, sizeof(*n) * cap);

		if (!n)
			return NULL;
		d->out = n;
		d->cap_out = cap;
	}
	return &d->out[d->nr_out++];
}

static int suspect_cmp(const void *a, const void *b)
{
	const struct cpi_suspect *x = a, *y = b;

	if (x->r != y->r)
		return x->r < y->r ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* Rank the others by the correlation of their CPU use with v's signal. */
static void suspects__rank(struct cpi_detector *d, const struct victim *v, struct cpi_outlier *o)
{
	int w = d->o.window, i, j, n = 0, slot = d->t % w;
	long long first = d->t - w + 1 < 0 ? 0 : d->t - w + 1, t;

	o->pairs = 0;
	o->nr_suspects = 0;
	for (t = first; t <= d->t; t++)
		if (isfinite(v->value[t % w]))
			d->y[o->pairs++] = v->value[t % w];
	for (i = 0; i < d->nr; i++) {
		const struct victim *s = &d->v[i];
		struct cpi_suspect c;

		if (s == v)
			continue;
		for (t = first, j = 0; t <= d->t; t++)
			if (isfinite(v->value[t % w]))
				d->x[j++] = s->cpu[t % w];
		c.r = cpi__pearson(d->x, d->y, o->pairs);
		if (!(c.r > 0))
			continue;
		c.name = s->name;
		c.cpu = s->cpu[slot];
		/* keep the best max_suspects: insert in order, the worst falls off */
		if (n < d->o.max_suspects)
			o->suspects[n++] = c;
		else if (n && suspect_cmp(&c, &o->suspects[n - 1]) < 0)
			o->suspects[n - 1] = c;
		else
			continue;
		qsort(o->suspects, n, sizeof(c), suspect_cmp);
	}
	o->nr_suspects = n;
}

/* Judge v's sample of this interval; an outlier is appended to d->out. */
static int victim__judge(struct cpi_detector *d, struct victim *v)
{
	const struct cpi_opts *o = &d->o;
	double x = v->value[d->t % o->window];
	struct cpi_baseline b;
	struct cpi_outlier *out;
	double thr, *tmp;

	if (!isfinite(x)) {
		v->run = 0;
		return 0;
	}
	if (v->base_n < CPI_MIN_BASELINE) {
		base__add(v, o->window, x);
		return 0;
	}
	/* the ring's order does not matter to a mean and an sd */
	cpi__baseline(v->base, v->base_n, &b);
	thr = cpi__threshold(&b);
	d->judged++;
	if (!(x > thr)) {
		v->run = 0;
		base__add(v, o->window, x);
		return 0;
	}
	v->held[v->run++] = x;
	if (v->run >= o->k) {
		out = outlier__add(d);
		if (!out)
			return -ENOMEM;
		out->victim = v->name;
		out->value = x;
		out->base = b;
		out->threshold = thr;
		out->run = v->run;
		suspects__rank(d, v, out);
	}
	if (v->run == o->window) {
		/* above for a whole window: that is the new normal */
		tmp = v->base;
		v->base = v->held;
		v->held = tmp;
		v->base_n = o->window;
		v->base_next = 0;
		v->run = 0;
	}
	return 0;
}

int cpi__interval(struct cpi_detector *d, const struct cpi_sample *s, int n)
{
	int w = d->o.window, slot = d->t % w, i, err = 0;

	d->nr_out = 0;
	for (i = 0; i < d->nr; i++) {
		d->v[i].cpu[slot] = 0;
		d->v[i].value[slot] = NAN;
	}
	for (i = 0; i < n; i++) {
		struct victim *v = victim__get(d, s[i].name);

		if (!v)
			return -ENOMEM;
		v->cpu[slot] = isfinite(s[i].cpu) && s[i].cpu > 0 ? s[i].cpu : 0;
		v->value[slot] =
			isfinite(s[i].value) && s[i].cpu >= d->o.min_cpu ? s[i].value : NAN;
		v->last_seen = d->t;
	}
	for (i = 0; i < d->nr && !err; i++)
		err = victim__judge(d, &d->v[i]);
	/* a name unseen for a whole window has nothing left in it */
	for (i = 0; i < d->nr && !err;) {
		if (d->t - d->v[i].last_seen >= w) {
			victim__free(&d->v[i]);
			d->v[i] = d->v[--d->nr];
		} else {
			i++;
		}
	}
	d->t++;
	return err;
}

int cpi__nr_outliers(const struct cpi_detector *d)
{
	return d->nr_out;
}

const struct cpi_outlier *cpi__outlier(const struct cpi_detector *d, int i)
{
	return i >= 0 && i < d->nr_out ? &d->out[i] : NULL;
}

int cpi__nr_names(const struct cpi_detector *d)
{
	return d->nr;
}

long long cpi__judged(const struct cpi_detector *d)
{
	return d->judged;
}

void cpi__state(const struct cpi_detector *d, int i, struct cpi_state *st)
{
	const struct victim *v = &d->v[i];
	int w = d->o.window;

	st->name = v->name;
	st->value = d->t ? v->value[(d->t - 1) % w] : NAN;
	cpi__baseline(v->base, v->base_n, &st->base);
	st->threshold = v->base_n >= CPI_MIN_BASELINE ? cpi__threshold(&st->base) : NAN;
	st->run = v->run;
}

enum cpi_signal cpi__signal(bool cycles_count, bool instructions_count)
{
	return cycles_count && instructions_count ? CPI_SIGNAL_CPI : CPI_SIGNAL_RUNQ_AVG;
}

const char *cpi_signal__name(enum cpi_signal s)
{
	return s == CPI_SIGNAL_CPI ? "cpi" : "runq_avg_ns";
}

void cpi__sample(struct cpi_sample *s, const char *name, const struct cpi_figures *f,
		 enum cpi_signal sig)
{
	s->name = name;
	s->cpu = f->interval_s > 0 ? f->oncpu_ns / (f->interval_s * 1e9) : NAN;
	if (sig == CPI_SIGNAL_CPI)
		s->value = isfinite(f->cycles) && f->instructions > 0 ?
				   f->cycles / f->instructions :
				   NAN;
	else
		s->value = f->runq_avg_ns;
}

int cpi__describe(const struct cpi_outlier *x, enum cpi_signal sig, char *buf, size_t len)
{
	if (sig == CPI_SIGNAL_CPI)
		return snprintf(buf, len,
				"CPI %.3f above %.3f (mean %.3f, sd %.3f of %d intervals) for %d "
				"intervals",
				x->value, x->threshold, x->base.mean, x->base.sd, x->base.n,
				x->run);
	return snprintf(buf, len,
			"run-queue wait %.1f us above %.1f us (mean %.1f us, sd %.1f us of %d "
			"intervals) for %d intervals",
			x->value / 1e3, x->threshold / 1e3, x->base.mean / 1e3, x->base.sd / 1e3,
			x->base.n, x->run);
}
