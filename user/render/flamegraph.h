/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Folded stacks ("comm;outer;...;inner WEIGHT", the FlameGraph interchange
 * format) and a self-contained interactive SVG flame graph made from them.
 */
#ifndef __PMBPF_FLAMEGRAPH_H
#define __PMBPF_FLAMEGRAPH_H

#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "folded.h"

struct flame_opts {
	const char *title;
	const char *subtitle; /* may be NULL */
	const char *units; /* what a weight counts: "samples", "us" */
	int width; /* pixels; 0 for 1200 */
};

/*
 * Sort lines frame by frame and merge equal stacks (adding weights, freeing
 * the duplicates' strings). Returns the new number of lines.
 */
size_t folded__merge(struct folded *lines, size_t n);
/* Write "stack weight" lines. */
int folded__write(FILE *f, const struct folded *lines, size_t n);
/* Write an SVG flame graph of merged lines. Returns 0 or a negative errno. */
int flamegraph__write(FILE *f, const struct folded *lines, size_t n, const struct flame_opts *o);

#endif
