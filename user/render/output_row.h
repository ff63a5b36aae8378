/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What record's renderers share (output.c: the table and the dispatch;
 * output_json.c: JSON Lines; output_csv.c: CSV). Included by them alone.
 */
#ifndef __PMBPF_OUTPUT_ROW_H
#define __PMBPF_OUTPUT_ROW_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "metrics.h"
#include "output.h"
#include "snapshot.h"

/*
 * JSON Lines and CSV write a snapshot in pieces of this size: at 10,000
 * rows (10 MB of JSON) a file's write() of 8 KiB cost 3 times as much CPU
 * as of 256 KiB here (ext4, 6.18), about 10 ms per refresh.
 */
#define OUTPUT_WRITE_SIZE (256 * 1024)

/*
 * A row's figures, for the renderers that walk the catalog: f and m (from
 * metrics__figures()) of one process, cgroup, command or the system.
 */
struct row {
	struct output *o;
	const struct snapshot *snap;
	const struct figures *f;
	struct row_metrics m;
	bool header; /* table and CSV: the column names instead */
};

/* r for f (NULL: the titles' row) of snap: its metrics__figures(). */
void output_row__init(struct row *r, struct output *o, const struct snapshot *snap,
		      const struct figures *f, bool header);
/* A snapshot's time (ns since the epoch) as ISO 8601 UTC with milliseconds. */
void output__iso_time(char *buf, size_t len, __u64 ns);

/* The JSON Lines of a session's start, a snapshot, a command's totals (output_json.c). */
int output__json_start(struct output *o, const struct event_info *ev, int nr, bool no_pmu,
		       const char *attach, int nr_cpus);
void output__json_lines(struct output *o, const struct snapshot *snap);
int output__json_command(struct output *o, const struct snapshot *snap, const struct figures *f,
			 char *const *argv, int status, unsigned int nr_procs);
/* A snapshot's CSV rows, after the header where it is not written yet (output_csv.c). */
void output__csv(struct output *o, const struct snapshot *snap);

#endif
