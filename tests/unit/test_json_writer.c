// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The JSON writer: comma placement, escaping, non-finite numbers. */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "json_writer.h"

static char *out;
static size_t out_len;
static FILE *f;
static struct json_writer w;

static void begin(void)
{
	f = open_memstream(&out, &out_len);
	if (!f) {
		perror("open_memstream");
		exit(2);
	}
	jw_init(&w, f);
}

/* Close the stream; out holds what was written until the next begin(). */
static const char *end(void)
{
	fclose(f);
	return out;
}

static void done(void)
{
	free(out);
	out = NULL;
}

static const char *escaped(const char *s)
{
	begin();
	json_escape(f, s);
	return end();
}

#define CHECK_ESCAPE(in, want)                \
	do {                                  \
		CHECK_STR(escaped(in), want); \
		CHECK(json_valid(out));       \
		done();                       \
	} while (0)

static void test_nesting(void)
{
	begin();
	jw_start_object(&w);
	jw_key(&w, "a");
	jw_u64(&w, 1);
	jw_key(&w, "b");
	jw_start_array(&w);
	jw_u64(&w, 1);
	jw_s64(&w, -2);
	jw_start_object(&w);
	jw_key(&w, "c");
	jw_null(&w);
	jw_end_object(&w);
	jw_start_array(&w);
	jw_end_array(&w);
	jw_bool(&w, true);
	jw_end_array(&w);
	jw_key(&w, "d");
	jw_start_object(&w);
	jw_end_object(&w);
	jw_key(&w, "e");
	jw_start_array(&w);
	jw_end_array(&w);
	jw_key(&w, "f");
	jw_start_object(&w);
	jw_key(&w, "g");
	jw_start_object(&w);
	jw_key(&w, "h");
	jw_bool(&w, false);
	jw_end_object(&w);
	jw_key(&w, "i");
	jw_string(&w, "x");
	jw_end_object(&w);
	jw_end_object(&w);
	CHECK_STR(end(), "{\"a\":1,\"b\":[1,-2,{\"c\":null},[],true],\"d\":{},\"e\":[],"
			 "\"f\":{\"g\":{\"h\":false},\"i\":\"x\"}}");
	CHECK(json_valid(out));
	done();

	/* JSON Lines: top-level objects are not separated by commas */
	begin();
	jw_start_object(&w);
	jw_key(&w, "n");
	jw_u64(&w, 1);
	jw_end_object(&w);
	fputc('\n', f);
	jw_start_object(&w);
	jw_key(&w, "n");
	jw_u64(&w, 2);
	jw_end_object(&w);
	fputc('\n', f);
	CHECK_STR(end(), "{\"n\":1}\n{\"n\":2}\n");
	done();

	/* a top-level array of objects */
	begin();
	jw_start_array(&w);
	jw_start_object(&w);
	jw_end_object(&w);
	jw_start_object(&w);
	jw_key(&w, "k");
	jw_start_array(&w);
	jw_u64(&w, 0);
	jw_end_array(&w);
	jw_end_object(&w);
	jw_end_array(&w);
	CHECK_STR(end(), "[{},{\"k\":[0]}]");
	CHECK(json_valid(out));
	done();
}

/* Nesting as deep as the writer tracks still places commas right. */
static void test_deep(void)
{
	int i, depth = JW_MAX_DEPTH - 1;

	begin();
	for (i = 0; i < depth; i++) {
		jw_start_array(&w);
		jw_u64(&w, i);
	}
	for (i = 0; i < depth; i++) {
		jw_u64(&w, i);
		jw_end_array(&w);
	}
	end();
	CHECK(json_valid(out));
	CHECK(!strncmp(out, "[0,[1,[2,", 9));
	CHECK(strstr(out, "[14,0],1],2]") != NULL);
	CHECK(!strcmp(out + strlen(out) - 5, "],14]"));
	done();
}

static void test_numbers(void)
{
	begin();
	jw_start_array(&w);
	jw_double(&w, NAN, 2);
	jw_double(&w, INFINITY, 2);
	jw_double(&w, -INFINITY, 2);
	jw_double(&w, 1.5, 2);
	jw_double(&w, 2.0 / 3.0, 4);
	jw_double(&w, 12345678.0, 0);
	jw_double(&w, -0.25, 1);
	jw_u64(&w, 18446744073709551615ULL);
	jw_s64(&w, -9223372036854775807LL - 1);
	jw_end_array(&w);
	CHECK_STR(end(), "[null,null,null,1.50,0.6667,12345678,-0.2,18446744073709551615,"
			 "-9223372036854775808]");
	CHECK(json_valid(out));
	done();

	begin();
	jw_start_object(&w);
	jw_key(&w, "ipc");
	jw_double(&w, NAN, 4);
	jw_key(&w, "next");
	jw_u64(&w, 3);
	jw_end_object(&w);
	CHECK_STR(end(), "{\"ipc\":null,\"next\":3}");
	done();
}

static void test_escape(void)
{
	CHECK_ESCAPE("plain", "\"plain\"");
	CHECK_ESCAPE("", "\"\"");
	CHECK_ESCAPE("a\"b", "\"a\\\"b\"");
	CHECK_ESCAPE("a\\b", "\"a\\\\b\"");
	CHECK_ESCAPE("\n\r\t", "\"\\n\\r\\t\"");
	CHECK_ESCAPE("\x01", "\"\\u0001\"");
	CHECK_ESCAPE("a\x1f"
		     "b",
		     "\"a\\u001fb\"");
	CHECK_ESCAPE("\b\f", "\"\\u0008\\u000c\"");
	CHECK_ESCAPE("\x7f", "\"\\u007f\"");
	CHECK_ESCAPE("a/b", "\"a/b\"");
	CHECK_ESCAPE("caf\xc3\xa9", "\"caf\xc3\xa9\"");
	CHECK_ESCAPE("\xe2\x82\xac", "\"\xe2\x82\xac\"");

	/* keys are escaped too; a NULL string is written as "" */
	begin();
	jw_start_object(&w);
	jw_key(&w, "k\"\x02");
	jw_string(&w, NULL);
	jw_end_object(&w);
	CHECK_STR(end(), "{\"k\\\"\\u0002\":\"\"}");
	CHECK(json_valid(out));
	done();
}

/*
 * The kernel truncates comm to 15 bytes, which can split a multi-byte UTF-8
 * character ("ñññññññññ" becomes seven ñ and a lone 0xc3). The output must
 * still be valid JSON, which RFC 8259 requires to be UTF-8.
 */
static void test_invalid_utf8(void)
{
	escaped("\xc3\xb1\xc3\xb1\xc3\xb1\xc3\xb1\xc3\xb1\xc3\xb1\xc3\xb1\xc3");
	CHECK(json_valid(out));
	done();
	escaped("bad\xff");
	CHECK(json_valid(out));
	done();
}

int main(void)
{
	test_nesting();
	test_deep();
	test_numbers();
	test_escape();
	test_invalid_utf8();
	return check_summary();
}
