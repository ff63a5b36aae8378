/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A small streaming JSON writer: escapes strings, places commas. It formats
 * into a buffer of its own (outbuf.h), handed to the stream whenever the
 * outermost value is complete (and when the buffer is full): write nothing
 * else to the stream while a value is open.
 */
#ifndef __PMBPF_JSON_WRITER_H
#define __PMBPF_JSON_WRITER_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include "outbuf.h"

#define JW_MAX_DEPTH 16

struct json_writer {
	int depth;
	bool need_comma[JW_MAX_DEPTH];
	bool lines; /* jw_init_lines() */
	struct outbuf out;
};

void jw_init(struct json_writer *w, FILE *f);
/*
 * JSON Lines: a newline after each outermost value, and the stream gets the
 * buffer only when it is full and at jw_flush(), which the caller must call.
 */
void jw_init_lines(struct json_writer *w, FILE *f);
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
/* A key and its value in the open object: jw_key() then the value. */
void jw_string_field(struct json_writer *w, const char *key, const char *s);
void jw_u64_field(struct json_writer *w, const char *key, __u64 v);
void jw_double_field(struct json_writer *w, const char *key, double v, int decimals);
void jw_bool_field(struct json_writer *w, const char *key, bool v);
/* A key whose JSON text (quoted, escaped) the caller made: json_quote(). */
void jw_key_raw(struct json_writer *w, const char *quoted, size_t len);
/*
 * Keys and values the caller formats itself, in the open object: it writes
 * "key":value pairs separated by ',' to the buffer returned (the comma
 * before the first one, where one is due, is written here).
 */
struct outbuf *jw_fields_raw(struct json_writer *w);
/* Hand what is buffered to the stream now. */
void jw_flush(struct json_writer *w);
/* Write a JSON string literal for s to f. */
void json_escape(FILE *f, const char *s);
/* The JSON string literal of s into dst (room for 6 x strlen(s) + 3); returns its length. */
size_t json_quote(char *dst, const char *s);
/* Length of the valid UTF-8 sequence at p, or 0 if it is not one. */
int utf8_len(const unsigned char *p);

#endif
