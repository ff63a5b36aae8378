/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Shared by the libFuzzer harnesses (make fuzz, mk/fuzz.mk): the input as a
 * C string, and pmbpf's one-line messages out of the way (the sanitizers
 * write their reports to descriptor 2, which stays open).
 */
#ifndef __PMBPF_FUZZ_H
#define __PMBPF_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* pr_err() and friends write to stderr: point the stream, not fd 2, at /dev/null. */
static inline void fuzz__quiet(void)
{
	FILE *null = fopen("/dev/null", "w");

	if (null)
		stderr = null;
}

/* data[0..size) as a NUL-terminated string (cut at the first NUL); free() it. */
static inline char *fuzz__str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

#endif
