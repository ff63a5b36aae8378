// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The JSON reader (json__parse) on any bytes, every value of the tree it
 * returns visited, and compare's reader of 'stat -o json' documents
 * (series__from_json, groups A and B) on the same bytes; and the writer's
 * escaping of the same bytes (json_quote, up to the first NUL) read back by
 * the reader: one string, the bytes themselves when they are valid UTF-8.
 */
#include <math.h>
#include "fuzz.h"
#include "compare.h"
#include "json_reader.h"
#include "json_writer.h"

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

/* Whether s is valid UTF-8 throughout (utf8_len at each character). */
static bool valid_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		int n = utf8_len(p);

		if (!n)
			return false;
		p += n;
	}
	return true;
}

static void round_trip(const uint8_t *data, size_t size)
{
	char *s = strndup((const char *)data, size), *q;
	struct json_value v;
	char err[256];
	size_t len;

	if (!s)
		return;
	q = malloc(6 * strlen(s) + 3);
	if (!q) {
		free(s);
		return;
	}
	len = json_quote(q, s);
	if (json__parse(q, len, &v, err, sizeof(err)) || v.type != JSON_STRING)
		abort(); /* the writer wrote something the reader refuses */
	if (valid_utf8(s) && strcmp(json__str(&v), s))
		abort(); /* it does not read back as what was written */
	json__free(&v);
	free(q);
	free(s);
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
	round_trip(data, size);
	return 0;
}
