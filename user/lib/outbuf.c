// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <math.h>
#include "outbuf.h"

void outbuf__flush(struct outbuf *b)
{
	if (b->len)
		fwrite(b->buf, 1, b->len, b->f);
	b->len = 0;
}

void outbuf__write_slow(struct outbuf *b, const char *s, size_t n)
{
	while (n) {
		size_t room = b->cap - b->len, k = n < room ? n : room;

		if (!room) {
			outbuf__flush(b);
			continue;
		}
		memcpy(b->buf + b->len, s, k);
		b->len += k;
		s += k;
		n -= k;
	}
}

/* "00" to "99" */
static const char digits2[201] = "00010203040506070809101112131415161718192021222324"
				 "25262728293031323334353637383940414243444546474849"
				 "50515253545556575859606162636465666768697071727374"
				 "75767778798081828384858687888990919293949596979899";

/* Digits of v: 1 to 20. */
static inline size_t u64_digits(__u64 v)
{
	size_t n = 1;

	for (;;) {
		if (v < 10)
			return n;
		if (v < 100)
			return n + 1;
		if (v < 1000)
			return n + 2;
		if (v < 10000)
			return n + 3;
		v /= 10000;
		n += 4;
	}
}

/*
 * The last n digits of v at dst, zeros first where v has fewer: two at a
 * time from the end (one division by 100 per pair).
 */
static inline void put_digits(char *dst, __u64 v, size_t n)
{
	for (; n >= 2; n -= 2, v /= 100)
		memcpy(dst + n - 2, digits2 + 2 * (v % 100), 2);
	if (n)
		dst[0] = '0' + v % 10;
}

size_t fmt_u64(char *dst, __u64 v)
{
	size_t n = u64_digits(v);

	put_digits(dst, v, n);
	return n;
}

size_t fmt_s64(char *dst, long long v)
{
	if (v >= 0)
		return fmt_u64(dst, v);
	*dst = '-';
	/* -(v + 1) + 1: no overflow at LLONG_MIN */
	return 1 + fmt_u64(dst + 1, (__u64)(-(v + 1)) + 1);
}

/* "%.*f" by printf itself, cut at FMT_NUM_MAX bytes */
static size_t fixed_slow(char *dst, double v, int decimals)
{
	char buf[FMT_NUM_MAX + 1];
	int len = snprintf(buf, sizeof(buf), "%.*f", decimals, v);

	if (len < 0)
		len = 0;
	if ((size_t)len > FMT_NUM_MAX)
		len = FMT_NUM_MAX;
	memcpy(dst, buf, len);
	return len;
}

/* q / 10^d by a constant divisor each (a multiplication, not a division) */
static inline __u64 div_p10(__u64 q, int d)
{
	switch (d) {
	case 1:
		return q / 10;
	case 2:
		return q / 100;
	case 3:
		return q / 1000;
	case 4:
		return q / 10000;
	case 5:
		return q / 100000;
	case 6:
		return q / 1000000;
	case 7:
		return q / 10000000;
	case 8:
		return q / 100000000;
	case 9:
		return q / 1000000000;
	}
	return q;
}

size_t fmt_fixed(char *dst, double v, int decimals)
{
	static const double p10[] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9 };
	/* 1e15 / 10^d: a x 10^d below 1e15 is exact enough in a double and a u64 */
	static const double lim[] = { 1e15, 1e14, 1e13, 1e12, 1e11, 1e10, 1e9, 1e8, 1e7, 1e6 };
	static const __u64 u10[] = {
		1ULL,	   10ULL,      100ULL,	    1000ULL,	  10000ULL,
		100000ULL, 1000000ULL, 10000000ULL, 100000000ULL, 1000000000ULL
	};
	double a = fabs(v), s, r;
	size_t n = 0;
	__u64 q, ip, frac, t;

	/* NaN and the infinities fail a < lim too */
	if (decimals < 0 || decimals > 9 || !(a < lim[decimals]))
		return fixed_slow(dst, v, decimals);
	/* s is a x 10^d within half an ulp: round it unless it is that close to a tie */
	s = a * p10[decimals];
	t = (__u64)s; /* floor: 0 <= s < 1e15 */
	r = (double)t;
	if (!decimals && s - r == 0.5)
		/* s is a itself: an exact tie ("%.0f" of an average of 2), to even as printf */
		q = t + (t & 1);
	else if (fabs(s - r - 0.5) <= s * 0x1p-50 + 0x1p-60)
		return fixed_slow(dst, v, decimals);
	else
		q = t + (s - r > 0.5);
	if (signbit(v))
		dst[n++] = '-';
	ip = div_p10(q, decimals);
	n += fmt_u64(dst + n, ip);
	if (decimals) {
		dst[n++] = '.';
		frac = q - ip * u10[decimals];
		put_digits(dst + n, frac, decimals);
		n += decimals;
	}
	return n;
}
