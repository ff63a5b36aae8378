/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Renderers of snapshots: aligned table, JSON Lines, CSV. */
#ifndef __PMBPF_OUTPUT_H
#define __PMBPF_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>
#include "snapshot.h"

enum output_format {
	OUTPUT_TABLE,
	OUTPUT_JSON,
	OUTPUT_CSV,
};

struct output {
	enum output_format format;
	FILE *f;
	bool header_done;
	bool procs; /* process rows */
	bool threads; /* thread rows (--threads; table and CSV: instead of process rows) */
	bool cgroups; /* cgroup rows (CSV: one kind per stream) */
};

int output_format__parse(const char *s, enum output_format *fmt);
/*
 * Each renderer returns 0, or the negative errno of a write to o->f that
 * failed (-EPIPE: the reader went away), after flushing.
 */
/* Describe the session before the first interval (event states). */
int output__start(struct output *o, const struct event_info *ev, int nr, bool no_pmu,
		  const char *attach, int nr_cpus);
int output__snapshot(struct output *o, const struct snapshot *snap);
/*
 * Totals of a command and its children: snap gives the events and
 * interval_ns (the command's wall time), f the summed figures, status the
 * command's wait status. JSON: one record of type "command" with every
 * figure as record's JSON names it; the table: pmbpf stat's text,
 * stat_report__run() (stat_report.h).
 */
int output__command(struct output *o, const struct snapshot *snap, const struct figures *f,
		    char *const *argv, int status, unsigned int nr_procs);
struct json_writer;
/*
 * A command's end from its wait status, as keys of the open object:
 * "exit_code" (null when a signal killed it) and "signal" ("SIGKILL", or null).
 */
void output__json_status(struct json_writer *w, int status);
/* An event's description (name, class, state, group, cpus, error) as keys of the open object. */
void json_event_fields(struct json_writer *w, const struct event_info *ev);
enum fig_fmt;
/* Decimals a figure of this format gets in JSON (and in stat's text). */
int json_decimals(enum fig_fmt fmt);
/* Humanize a count into buf: 1234 -> "1234", 12345678 -> "12.3M". */
const char *fmt_count(char *buf, size_t len, double v);

#endif
