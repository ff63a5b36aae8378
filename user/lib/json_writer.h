/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A small streaming JSON writer: escapes strings, places commas. */
#ifndef __PMBPF_JSON_WRITER_H
#define __PMBPF_JSON_WRITER_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#define JW_MAX_DEPTH 16

struct json_writer {
	FILE *f;
	int depth;
	bool need_comma[JW_MAX_DEPTH];
};

void jw_init(struct json_writer *w, FILE *f);
void jw_start_object(struct json_writer *w);
void jw_end_object(struct json_writer *w);
void jw_start_array(struct json_writer *w);
void jw_end_array(struct json_writer *w);
void jw_key(struct json_writer *w, const char *key);
void jw_string(struct json_writer *w, const char *s);
void jw_u64(struct json_writer *w, __u64 v);
void jw_s64(struct json_writer *w, long long v);
/* NaN and infinities are written as null. */
void jw_double(struct json_writer *w, double v, int decimals);
void jw_bool(struct json_writer *w, bool v);
void jw_null(struct json_writer *w);
/* Write a JSON string literal for s to f. */
void json_escape(FILE *f, const char *s);
/* Length of the valid UTF-8 sequence at p, or 0 if it is not one. */
int utf8_len(const unsigned char *p);

#endif
