// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>
#include "snapshot.h"

struct proc_row *snapshot__add_row(struct snapshot *snap)
{
	struct proc_row *row;

	if (snap->nr_rows == snap->cap_rows) {
		size_t cap = snap->cap_rows ? snap->cap_rows * 2 : 256;
		struct proc_row *rows = realloc(snap->rows, cap * sizeof(*rows));

		if (!rows)
			return NULL;
		snap->rows = rows;
		snap->cap_rows = cap;
	}
	row = &snap->rows[snap->nr_rows++];
	memset(row, 0, sizeof(*row));
	return row;
}

void snapshot__reset(struct snapshot *snap)
{
	snap->nr_rows = 0;
	memset(snap->system, 0, sizeof(snap->system));
}

void snapshot__free(struct snapshot *snap)
{
	free(snap->rows);
	snap->rows = NULL;
	snap->nr_rows = snap->cap_rows = 0;
}

static int cmp_cpu(const void *a, const void *b)
{
	const struct proc_row *ra = a, *rb = b;

	if (ra->oncpu_ns != rb->oncpu_ns)
		return ra->oncpu_ns < rb->oncpu_ns ? 1 : -1;
	if (ra->pid != rb->pid)
		return ra->pid < rb->pid ? -1 : 1;
	return ra->cgroup_id < rb->cgroup_id ? -1 : ra->cgroup_id > rb->cgroup_id;
}

void snapshot__sort_cpu(struct snapshot *snap)
{
	qsort(snap->rows, snap->nr_rows, sizeof(*snap->rows), cmp_cpu);
}
