/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A comparison of two series (compare.h) as a table, Markdown or JSON: pmbpf compare, stat --ab. */
#ifndef __PMBPF_COMPARE_REPORT_H
#define __PMBPF_COMPARE_REPORT_H

#include <stdio.h>
#include "compare.h"
#include "json_writer.h"

enum compare_format {
	COMPARE_TABLE,
	COMPARE_JSON,
	COMPARE_MARKDOWN,
};

int compare_format__parse(const char *s, enum compare_format *fmt);
void compare__print(FILE *f, enum compare_format fmt, const struct compare_result *r);
/* The comparison as one JSON object value. */
void compare__json(struct json_writer *w, const struct compare_result *r);

#endif
