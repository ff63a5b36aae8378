// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sleepers N: forks N tiny processes that sleep until told to wake, so that a
 * monitor sees N live processes at the cost of their kernel memory only.
 *
 * Prints "child PID" for each, then "sleepers pid=P n=N". Then, on SIGUSR1,
 * wakes every child once (each child takes SIGUSR1, runs for a moment and
 * sleeps again: one switch each, so that each gets an entry in a monitor
 * that counts per process) and prints "woke n=N round=R" once every child
 * has taken its wake; on SIGTERM or
 * SIGINT, kills and reaps the children and exits 0. A child dies with its
 * parent (PR_SET_PDEATHSIG), so that none outlives a killed run.
 *
 * The children are processes of their own (each its own pid and tgid) that
 * share the parent's memory (clone with CLONE_VM, as vfork does, and a
 * stack each): no page tables to copy and no copy-on-write faults, so that
 * 5,000 start in seconds under QEMU's TCG rather than in 90 s with fork().
 * A child makes raw system calls only, on its own 16 KiB stack.
 */
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "spin.h"

#define STACK_SIZE (16 * 1024)

/* wakes taken by the children (shared memory): "woke" is printed once all
 * have run */
static uint64_t woken;

static int child(void *arg)
{
	sigset_t set;

	(void)arg;
	syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	for (;;)
		if (syscall(SYS_rt_sigtimedwait, &set, NULL, NULL, 8) == SIGUSR1)
			__atomic_fetch_add(&woken, 1, __ATOMIC_RELAXED);
	return 0;
}

int main(int argc, char **argv)
{
	sigset_t set;
	pid_t *pids;
	uint64_t n, i, round = 0;
	char *stacks;
	int sig;

	if (argc != 2) {
		fprintf(stderr, "usage: sleepers N\n");
		return 2;
	}
	n = parse_count("sleepers", argv[1]);
	pids = calloc(n ? n : 1, sizeof(*pids));
	stacks = mmap(NULL, (n ? n : 1) * STACK_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (!pids || stacks == MAP_FAILED) {
		fprintf(stderr, "sleepers: out of memory\n");
		return 1;
	}
	/* blocked before the forks: children inherit the mask, and a signal
	 * sent early stays pending */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	for (i = 0; i < n; i++) {
		pids[i] = clone(child, stacks + (i + 1) * STACK_SIZE, CLONE_VM | SIGCHLD, NULL);
		if (pids[i] < 0) {
			fprintf(stderr, "sleepers: fork %llu of %llu: %s\n",
				(unsigned long long)i + 1, (unsigned long long)n, strerror(errno));
			for (n = i, i = 0; i < n; i++)
				kill(pids[i], SIGKILL);
			return 1;
		}
		printf("child %d\n", (int)pids[i]);
	}
	printf("sleepers pid=%d n=%llu\n", (int)getpid(), (unsigned long long)n);
	fflush(stdout);
	for (;;) {
		if (sigwait(&set, &sig))
			continue;
		if (sig != SIGUSR1)
			break;
		round++;
		for (i = 0; i < n; i++)
			kill(pids[i], SIGUSR1);
		while (__atomic_load_n(&woken, __ATOMIC_RELAXED) < n * round)
			usleep(10000);
		printf("woke n=%llu round=%llu\n", (unsigned long long)n,
		       (unsigned long long)round);
		fflush(stdout);
	}
	for (i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	for (i = 0; i < n; i++)
		waitpid(pids[i], NULL, 0);
	printf("done n=%llu\n", (unsigned long long)n);
	return 0;
}
