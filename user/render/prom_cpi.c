// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * serve's families of the live CPI outliers (cpi_live.h), named and
 * described by catalog__cpi(). A cgroup has series once its baseline holds
 * CPI_MIN_BASELINE samples (its threshold is known), and a cgroup tracked
 * by the detector is one that ran processes of its own in the last window:
 * no more series than the pmbpf_cgroup_ families have. Each outlier of the
 * last interval adds its suspects, at most CPI_SUSPECTS.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "catalog.h"
#include "container.h"
#include "cpi_live.h"
#include "delay.h"
#include "prom.h"

struct judged {
	struct cpi_state st;
	char *labels;
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct judged *)a)->st.name, ((const struct judged *)b)->st.name);
}

static char *labels_of(const char *path)
{
	struct container_info ci;

	container__parse(path, &ci);
	return prom__cgroup_labels(path, &ci);
}

/* A value of the signal: ns are exported in seconds. */
static void signal_value(struct strbuf *out, enum cpi_signal sig, double v)
{
	prom__value(out, sig == CPI_SIGNAL_RUNQ_AVG ? v / 1e9 : v);
}

static void head(struct strbuf *out, const struct prom_family *f)
{
	prom__family(out, f->prom, f->kind == FIG_COUNTER ? "counter" : "gauge", f->help);
}

static void series(struct strbuf *out, const struct prom_family *f, const struct judged *j)
{
	strbuf__printf(out, "%s{%s} ", f->prom, j->labels);
}

/* The id of the snapshot's cgroup at path; 0 if it has none. */
static __u64 cgroup_id_of(const struct snapshot *snap, const char *path)
{
	size_t i;

	for (i = 0; i < snap->nr_cgroups; i++)
		if (snap->cgroups[i].path && !strcmp(snap->cgroups[i].path, path))
			return snap->cgroups[i].id;
	return 0;
}

void prom__cpi(struct strbuf *out, const struct cpi_live *l, const struct snapshot *snap)
{
	const struct cpi_detector *d = cpi_live__cgroups(l);
	const struct cpi_opts *o = cpi_live__opts(l);
	enum cpi_signal sig = cpi_live__signal(l);
	const struct prom_family *fam;
	int i, k, n = 0, nr = cpi__nr_names(d);
	struct judged *j = calloc(nr + 1, sizeof(*j));
	size_t nr_fam;

	if (!j) {
		out->failed = true;
		return;
	}
	fam = catalog__cpi(&nr_fam);
	for (i = 0; i < nr; i++) {
		cpi__state(d, i, &j[n].st);
		if (!isfinite(j[n].st.threshold))
			continue;
		j[n].labels = labels_of(j[n].st.name);
		if (!j[n].labels) {
			out->failed = true;
			goto out;
		}
		n++;
	}
	if (n > 1)
		qsort(j, n, sizeof(*j), cmp_name);

	head(out, &fam[CPI_FAM_SIGNAL_INFO]);
	strbuf__printf(out, "%s{signal=\"%s\",window=\"%d\",k=\"%d\"} 1\n",
		       fam[CPI_FAM_SIGNAL_INFO].prom, cpi_signal__name(sig), o->window, o->k);
	head(out, &fam[CPI_FAM_OUTLIER]);
	for (i = 0; i < n; i++) {
		series(out, &fam[CPI_FAM_OUTLIER], &j[i]);
		prom__value(out, cpi_live__cgroup(l, j[i].st.name) ? 1 : 0);
	}
	head(out, &fam[CPI_FAM_SIGNAL]);
	for (i = 0; i < n; i++) {
		if (!isfinite(j[i].st.value))
			continue;
		series(out, &fam[CPI_FAM_SIGNAL], &j[i]);
		signal_value(out, sig, j[i].st.value);
	}
	head(out, &fam[CPI_FAM_BASELINE_MEAN]);
	for (i = 0; i < n; i++) {
		series(out, &fam[CPI_FAM_BASELINE_MEAN], &j[i]);
		signal_value(out, sig, j[i].st.base.mean);
	}
	head(out, &fam[CPI_FAM_THRESHOLD]);
	for (i = 0; i < n; i++) {
		series(out, &fam[CPI_FAM_THRESHOLD], &j[i]);
		signal_value(out, sig, j[i].st.threshold);
	}
	head(out, &fam[CPI_FAM_SUSPECT]);
	for (i = 0; i < n; i++) {
		const struct cpi_outlier *x = cpi_live__cgroup(l, j[i].st.name);

		for (k = 0; x && k < x->nr_suspects; k++) {
			strbuf__printf(out, "%s{%s,suspect=", fam[CPI_FAM_SUSPECT].prom,
				       j[i].labels);
			prom__label_value(out, x->suspects[k].name);
			strbuf__printf(out, "} ");
			prom__value(out, x->suspects[k].r);
		}
	}
	if (!snap->delays_on)
		goto out;
	head(out, &fam[CPI_FAM_SUSPECT_DELAY]);
	for (i = 0; i < n; i++) {
		const struct cpi_outlier *x = cpi_live__cgroup(l, j[i].st.name);
		__u64 cgid = x ? cgroup_id_of(snap, j[i].st.name) : 0;

		for (k = 0; x && k < x->nr_suspects; k++) {
			strbuf__printf(out, "%s{%s,suspect=", fam[CPI_FAM_SUSPECT_DELAY].prom,
				       j[i].labels);
			prom__label_value(out, x->suspects[k].name);
			strbuf__printf(out, "} ");
			prom__value(out, delay__cgroup_by(snap, cgid, x->suspects[k].name) / 1e9);
		}
	}
out:
	for (i = 0; i < n; i++)
		free(j[i].labels);
	free(j);
}
