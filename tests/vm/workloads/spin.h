/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Shared by the guest workloads: a loop whose instruction count is exact, and
 * a start gate so that a monitor can attach before the work begins.
 */
#ifndef PMBPF_VM_SPIN_H
#define PMBPF_VM_SPIN_H

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * Instructions retired per iteration of spin(): two adds, the decrement and
 * the branch. Written in asm so that no compiler can change the count.
 */
#define SPIN_INSNS_PER_ITER 4

static inline void spin(uint64_t iters)
{
	uint64_t a = 0, b = 0;

	if (!iters)
		return;
#if defined(__aarch64__)
	__asm__ volatile("1:	add	%1, %1, #1\n"
			 "	add	%2, %2, #1\n"
			 "	subs	%0, %0, #1\n"
			 "	b.ne	1b\n"
			 : "+r"(iters), "+r"(a), "+r"(b)
			 :
			 : "cc");
#elif defined(__x86_64__)
	__asm__ volatile("1:	add	$1, %1\n"
			 "	add	$1, %2\n"
			 "	sub	$1, %0\n"
			 "	jnz	1b\n"
			 : "+r"(iters), "+r"(a), "+r"(b)
			 :
			 : "cc");
#else
#error "spin() has no loop for this architecture"
#endif
}

/*
 * With -w, a workload prints its pid and then waits for SIGUSR1 before it
 * starts, so that a monitor started on that pid sees all of the work.
 * SIGUSR1 is blocked first: one sent early stays pending instead of killing.
 */
static inline void gate_block(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

static inline void gate_wait(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigwait(&set, &sig);
}

static inline uint64_t parse_count(const char *prog, const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-') {
		fprintf(stderr, "%s: '%s' is not a count\n", prog, s);
		exit(2);
	}
	return v;
}

#endif /* PMBPF_VM_SPIN_H */
