/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Text formatted into a buffer, written to a stream in large pieces: the
 * renderers' way to avoid a stdio call per character or per number.
 * Numbers are formatted exactly as printf would ("%llu", "%lld", "%.*f").
 */
#ifndef __PMBPF_OUTBUF_H
#define __PMBPF_OUTBUF_H

#include <stdio.h>
#include <string.h>
#include <linux/types.h>

#define OUTBUF_SIZE 8192
/* Longest text of one number: fmt_u64(), fmt_s64(), fmt_fixed() */
#define FMT_NUM_MAX 352

struct outbuf {
	FILE *f;
	size_t len, cap;
	char *buf; /* small, or the caller's (outbuf__init_buf()) */
	char small[OUTBUF_SIZE];
};

/* Decimal digits of v at dst (no NUL); returns their number. */
size_t fmt_u64(char *dst, __u64 v);
size_t fmt_s64(char *dst, long long v);
/*
 * v with decimals (0 to 9) digits after the point, as "%.*f" prints it
 * (round half to even of the exact binary value, "-0.00" for small
 * negatives, "nan", "inf"); at most FMT_NUM_MAX bytes, no NUL.
 */
size_t fmt_fixed(char *dst, double v, int decimals);

static inline void outbuf__init(struct outbuf *b, FILE *f)
{
	b->f = f;
	b->len = 0;
	b->buf = b->small;
	b->cap = sizeof(b->small);
}

/*
 * With the caller's buffer of cap bytes (at least OUTBUF_SIZE), valid until
 * the last flush: a refresh of thousands of rows goes out in writes of that
 * size (a file's page cache takes large writes at a fraction of the cost).
 */
static inline void outbuf__init_buf(struct outbuf *b, FILE *f, char *buf, size_t cap)
{
	outbuf__init(b, f);
	if (buf && cap >= OUTBUF_SIZE) {
		b->buf = buf;
		b->cap = cap;
	}
}

/* Write what is buffered to the stream (stdio's errors stay on the stream). */
void outbuf__flush(struct outbuf *b);

/* Room for n more bytes (n <= OUTBUF_SIZE): flushes when there is not. */
static inline char *outbuf__room(struct outbuf *b, size_t n)
{
	if (b->len + n > b->cap)
		outbuf__flush(b);
	return b->buf + b->len;
}

static inline void outbuf__putc(struct outbuf *b, char c)
{
	*outbuf__room(b, 1) = c;
	b->len++;
}

/* outbuf__write() of what does not fit */
void outbuf__write_slow(struct outbuf *b, const char *s, size_t n);

static inline void outbuf__write(struct outbuf *b, const char *s, size_t n)
{
	if (b->len + n > b->cap) {
		outbuf__write_slow(b, s, n);
		return;
	}
	memcpy(b->buf + b->len, s, n);
	b->len += n;
}

static inline void outbuf__puts(struct outbuf *b, const char *s)
{
	outbuf__write(b, s, strlen(s));
}

static inline void outbuf__u64(struct outbuf *b, __u64 v)
{
	b->len += fmt_u64(outbuf__room(b, 20), v);
}

static inline void outbuf__s64(struct outbuf *b, long long v)
{
	b->len += fmt_s64(outbuf__room(b, 20), v);
}

static inline void outbuf__fixed(struct outbuf *b, double v, int decimals)
{
	b->len += fmt_fixed(outbuf__room(b, FMT_NUM_MAX), v, decimals);
}

#endif
