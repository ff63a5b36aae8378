// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The JSON writer: comma placement, escaping, non-finite numbers. */
#include <math.h>
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

/*
 * fmt_fixed() is "%.*f": against snprintf on random doubles of every
 * magnitude, exact ties (0.125 at 2 decimals), values just beside them,
 * negatives rounding to zero ("-0.00") and non-finite ones.
 */
static void test_fixed(void)
{
	static const double edge[] = { 0,
				       -0.0,
				       0.125,
				       0.375,
				       2.5,
				       0.5,
				       1.5,
				       -2.5,
				       0.005,
				       1.005,
				       -0.0004,
				       1e15,
				       1e-9,
				       123.4565,
				       9.995,
				       0.9999995,
				       1e300,
				       -1e300,
				       4503599627370497.0,
				       1.0 / 3 };
	char want[400], got[FMT_NUM_MAX + 1];
	unsigned int seed = 1, k, bad = 0, n = 0;
	int d;

	for (k = 0; k < 200000 + sizeof(edge) / sizeof(edge[0]); k++) {
		double v;

		if (k < sizeof(edge) / sizeof(edge[0])) {
			v = edge[k];
		} else {
			/* a random mantissa times 10^-12 .. 10^12, either sign */
			v = (double)rand_r(&seed) / RAND_MAX *
			    pow(10, (int)(rand_r(&seed) % 25) - 12);
			if (rand_r(&seed) & 1)
				v = -v;
			if (k % 7 == 0) /* a tie or beside one, at some decimals */
				v = (rand_r(&seed) % 100000) / 1000.0 +
				    0.0005 * (rand_r(&seed) % 3);
		}
		for (d = 0; d <= 9; d++) {
			size_t len = fmt_fixed(got, v, d);

			got[len] = '\0';
			snprintf(want, sizeof(want), "%.*f", d, v);
			n++;
			if (strcmp(got, want) && bad++ < 5)
				fprintf(stderr, "fmt_fixed(%.17g, %d): %s, printf: %s\n", v, d, got,
					want);
		}
	}
	/* exact ties at 0 decimals (an average of two): to even, as printf */
	for (k = 0; k < 200000; k++) {
		double v = (k % 2 ? -1.0 : 1.0) * ((double)(k * 7919ULL % 4000000000ULL) + 0.5);
		size_t len = fmt_fixed(got, v, 0);

		got[len] = '\0';
		snprintf(want, sizeof(want), "%.0f", v);
		if (strcmp(got, want) && bad++ < 5)
			fprintf(stderr, "fmt_fixed(%.17g, 0): %s, printf: %s\n", v, got, want);
	}
	CHECK_EQ_U64(bad, 0);
	CHECK(n > 2000000);
	CHECK_STR((got[fmt_fixed(got, NAN, 2)] = '\0', got), "nan");
	CHECK_STR((got[fmt_fixed(got, -INFINITY, 2)] = '\0', got), "-inf");
	CHECK_STR((got[fmt_u64(got, 18446744073709551615ULL)] = '\0', got), "18446744073709551615");
	CHECK_STR((got[fmt_s64(got, -9223372036854775807LL - 1)] = '\0', got),
		  "-9223372036854775808");
	CHECK_STR((got[fmt_u64(got, 0)] = '\0', got), "0");
}

/* fmt_u64() and fmt_s64() are "%llu" and "%lld": every power of ten and its neighbours, random values. */
static void test_integers(void)
{
	char want[32], got[32];
	unsigned int seed = 7, bad = 0, n = 0, k;
	__u64 p = 1, v;
	int j;

	for (k = 0; k < 20 + 200000; k++) {
		for (j = -1; j <= 1; j++) {
			if (k < 20) {
				v = p + j;
			} else {
				/* 1 to 64 random bits */
				v = ((__u64)rand_r(&seed) << 33) ^ ((__u64)rand_r(&seed) << 11) ^
				    rand_r(&seed);
				v >>= rand_r(&seed) % 64;
			}
			got[fmt_u64(got, v)] = '\0';
			snprintf(want, sizeof(want), "%llu", (unsigned long long)v);
			n++;
			if (strcmp(got, want) && bad++ < 5)
				fprintf(stderr, "fmt_u64: %s, printf: %s\n", got, want);
			got[fmt_s64(got, (long long)v)] = '\0';
			snprintf(want, sizeof(want), "%lld", (long long)v);
			if (strcmp(got, want) && bad++ < 5)
				fprintf(stderr, "fmt_s64: %s, printf: %s\n", got, want);
		}
		if (k < 19)
			p *= 10;
	}
	CHECK_EQ_U64(bad, 0);
	CHECK(n > 600000);
	CHECK_STR((got[fmt_u64(got, 10000000000000000000ULL)] = '\0', got),
		  "10000000000000000000");
}

/* An outbuf with the caller's buffer: the stream gets nothing before it is full, then all in order. */
static void test_outbuf_buf(void)
{
	static char big[3 * OUTBUF_SIZE];
	struct outbuf b;
	size_t i, k;

	f = open_memstream(&out, &out_len);
	if (!f)
		exit(2);
	outbuf__init_buf(&b, f, big, sizeof(big));
	CHECK(b.buf == big && b.cap == sizeof(big));
	for (i = 0; i < 2 * OUTBUF_SIZE; i++)
		outbuf__u64(&b, i % 10);
	fflush(f);
	CHECK_EQ_U64(out_len, 0);
	for (; i < 10 * OUTBUF_SIZE; i++)
		outbuf__u64(&b, i % 10);
	outbuf__flush(&b);
	fclose(f);
	CHECK_EQ_U64(out_len, 10 * OUTBUF_SIZE);
	for (k = 0; out && k < out_len && out[k] == (char)('0' + k % 10); k++)
		;
	CHECK_EQ_U64(k, 10 * OUTBUF_SIZE);
	free(out);
	/* a buffer smaller than OUTBUF_SIZE is not taken */
	outbuf__init_buf(&b, stdout, big, 16);
	CHECK(b.buf == b.small && b.cap == OUTBUF_SIZE);
}

/* JSON Lines: a newline after each outermost value; nothing reaches the stream before jw_flush(). */
static void test_lines(void)
{
	f = open_memstream(&out, &out_len);
	if (!f)
		exit(2);
	jw_init_lines(&w, f);
	jw_start_object(&w);
	jw_key(&w, "a");
	jw_u64(&w, 1);
	jw_end_object(&w);
	jw_start_object(&w);
	jw_end_object(&w);
	fflush(f);
	CHECK_EQ_U64(out_len, 0);
	jw_flush(&w);
	CHECK_STR(end(), "{\"a\":1}\n{}\n");
	done();
}

int main(void)
{
	test_nesting();
	test_deep();
	test_numbers();
	test_escape();
	test_invalid_utf8();
	test_fixed();
	test_integers();
	test_outbuf_buf();
	test_lines();
	return check_summary();
}
