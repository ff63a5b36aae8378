// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The JSON reader (json__parse) on any bytes, every value of the tree it
 * returns visited, and compare's reader of 'stat -o json' documents
 * (series__from_json, groups A and B) on the same bytes.
 */
#include <math.h>
#include "fuzz.h"
#include "compare.h"
#include "json_reader.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz__quiet();
	return 0;
}

static size_t walk(const struct json_value *v, int depth)
{
	size_t n = 1, i;

	if (depth > 100000)
		abort();
	switch (v->type) {
	case JSON_STRING:
		if (!v->string || !json__str(v))
			abort();
		n += strlen(v->string);
		break;
	case JSON_OBJECT:
		for (i = 0; i < v->len; i++) {
			if (!v->keys[i] || json__get(v, v->keys[i]) == NULL)
				abort();
			n += walk(&v->items[i], depth + 1);
		}
		break;
	case JSON_ARRAY:
		for (i = 0; i < v->len; i++)
			n += walk(&v->items[i], depth + 1);
		break;
	case JSON_NUMBER:
		if (!isfinite(v->number))
			abort(); /* JSON has no inf or NaN */
		break;
	default:
		break;
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_value v;
	struct series s;
	char err[256];

	if (!json__parse((const char *)data, size, &v, err, sizeof(err))) {
		walk(&v, 0);
		json__free(&v);
	} else if (!memchr(err, '\0', sizeof(err))) {
		abort();
	}
	memset(&s, 0, sizeof(s));
	series__from_json(&s, (const char *)data, size, "A", err, sizeof(err));
	series__free(&s);
	memset(&s, 0, sizeof(s));
	series__from_json(&s, (const char *)data, size, "B", err, sizeof(err));
	series__free(&s);
	return 0;
}
