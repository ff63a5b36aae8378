/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A small JSON parser into a tree, for reading pmbpf's own files back. */
#ifndef __PMBPF_JSON_READER_H
#define __PMBPF_JSON_READER_H

#include <stddef.h>

enum json_type {
	JSON_NULL,
	JSON_BOOL,
	JSON_NUMBER,
	JSON_STRING,
	JSON_ARRAY,
	JSON_OBJECT,
};

struct json_value {
	enum json_type type;
	double number; /* JSON_NUMBER; JSON_BOOL: 0 or 1 */
	char *string; /* JSON_STRING (UTF-8, NUL-terminated) */
	/* JSON_ARRAY and JSON_OBJECT: items, and for objects their keys */
	struct json_value *items;
	char **keys;
	size_t len;
};

/*
 * Parse text[0..len) holding exactly one value. Returns 0, or -EINVAL with
 * a short reason and the byte offset in err.
 */
int json__parse(const char *text, size_t len, struct json_value *out, char *err, size_t err_len);
void json__free(struct json_value *v);
/* Member key of an object, or NULL (also when v is not an object). */
const struct json_value *json__get(const struct json_value *v, const char *key);
/* The string of v, or NULL if v is not a string. */
const char *json__str(const struct json_value *v);

#endif
