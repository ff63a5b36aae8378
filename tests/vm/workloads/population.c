// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * population PROCS MULTI THREADS: PROCS live processes, the first MULTI of
 * them with THREADS threads each (the leader included), the others with one,
 * so that a monitor sees many live processes and threads at the cost of
 * their kernel memory. Every thread (task k, counted over all threads in
 * order) touches 1 + k % 4 pages of its own at each wake: a known number of
 * page faults per thread and per process.
 *
 * Prints "task PID TID PAGES" for each thread, then "population pid=P
 * procs=N threads=T pages=S" (S: pages touched per wake, all threads). On
 * SIGUSR1 it drops the touched pages (MADV_DONTNEED, so that they fault
 * again), wakes every thread once (one futex wake: each thread runs, touches
 * its pages, counts itself done and waits again) and prints "woke tasks=T
 * round=R" once all have; on SIGTERM or SIGINT it kills and reaps the
 * processes and exits 0. A process dies with its parent (PR_SET_PDEATHSIG).
 *
 * As sleepers.c: the processes share the parent's memory (clone with
 * CLONE_VM, threads with CLONE_THREAD), so that no page tables are copied and
 * 20,000 processes start in seconds under QEMU's TCG. The only page faults a
 * thread takes are its own pages': the parent faults in the shared state and
 * the top page of every stack (8 KiB each) before any clone; a thread that
 * used more stack would take one fault more, and the count would say so.
 */
#include <linux/futex.h>
#include <sched.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "spin.h"

#define STACK_SIZE (8 * 1024)
#define PAGE 4096

struct shared {
	int gen;	   /* futex: wake rounds so far */
	int failed;	   /* a leader could not clone a thread: its errno */
	uint64_t started;  /* threads that have stored their tid */
	uint64_t done;	   /* wakes taken, all rounds */
	uint64_t nthreads; /* of all processes */
	pid_t tids[];	   /* by task index */
};

static struct shared *sh;
static char *pages, *stacks;
static uint64_t procs, multi, per;

/* pages of task k, and where they start (in pages) */
static uint64_t task_pages(uint64_t k) { return 1 + k % 4; }
static uint64_t task_first(uint64_t k) { return k / 4 * 10 + (k % 4) * (k % 4 + 1) / 2; }

/* the first task (thread) of process i */
static uint64_t proc_first(uint64_t i) { return i < multi ? i * per : multi * per + (i - multi); }
static uint64_t proc_threads(uint64_t i) { return i < multi ? per : 1; }

static int task(void *arg)
{
	uint64_t k = (uintptr_t)arg, n = task_pages(k), j;
	volatile char *p = pages + task_first(k) * PAGE;
	int seen = 0, g;

	sh->tids[k] = syscall(SYS_gettid);
	__atomic_fetch_add(&sh->started, 1, __ATOMIC_RELEASE);
	for (;;) {
		while ((g = __atomic_load_n(&sh->gen, __ATOMIC_ACQUIRE)) == seen)
			syscall(SYS_futex, &sh->gen, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
		seen = g;
		for (j = 0; j < n; j++)
			p[j * PAGE] = 1;
		__atomic_fetch_add(&sh->done, 1, __ATOMIC_RELEASE);
	}
	return 0;
}

/* the leader of process i: its other threads, then its own task */
static int leader(void *arg)
{
	uint64_t i = (uintptr_t)arg, k = proc_first(i), t;

	syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	for (t = 1; t < proc_threads(i); t++) {
		if (clone(task, stacks + (k + t + 1) * STACK_SIZE,
			  CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
				  CLONE_SYSVSEM,
			  (void *)(uintptr_t)(k + t)) < 0) {
			__atomic_store_n(&sh->failed, errno ? errno : EAGAIN, __ATOMIC_RELEASE);
			syscall(SYS_exit_group, 1);
		}
	}
	return task((void *)(uintptr_t)k);
}

static void *map(uint64_t bytes, int fault)
{
	char *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (m == MAP_FAILED)
		return NULL;
	if (fault)
		memset(m, 0, bytes);
	return m;
}

int main(int argc, char **argv)
{
	uint64_t n, npages, i, k, round = 0;
	sigset_t set;
	pid_t *pids;
	int sig;

	if (argc != 4) {
		fprintf(stderr, "usage: population PROCS MULTI THREADS\n");
		return 2;
	}
	procs = parse_count("population", argv[1]);
	multi = parse_count("population", argv[2]);
	per = parse_count("population", argv[3]);
	if (!procs || multi > procs || (multi && !per)) {
		fprintf(stderr, "population: want PROCS > 0, MULTI <= PROCS, THREADS > 0\n");
		return 2;
	}
	n = multi * per + (procs - multi);
	npages = task_first(n);
	sh = map(sizeof(*sh) + n * sizeof(pid_t), 1);
	pids = calloc(procs, sizeof(*pids));
	stacks = map(n * STACK_SIZE, 0);
	pages = map(npages * PAGE, 0);
	if (!sh || !pids || !stacks || !pages) {
		fprintf(stderr, "population: out of memory\n");
		return 1;
	}
	/* one fault per page touched: no transparent huge pages */
	madvise(pages, npages * PAGE, MADV_NOHUGEPAGE);
	/* the top page of every stack, faulted by the parent */
	for (k = 0; k < n; k++)
		stacks[(k + 1) * STACK_SIZE - PAGE] = 0;
	sh->nthreads = n;
	/* blocked before the clones: the processes inherit the mask, and a
	 * signal sent early stays pending */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	for (i = 0; i < procs; i++) {
		k = proc_first(i);
		pids[i] = clone(leader, stacks + (k + 1) * STACK_SIZE, CLONE_VM | SIGCHLD,
				(void *)(uintptr_t)i);
		if (pids[i] < 0) {
			fprintf(stderr, "population: process %llu of %llu: %s\n",
				(unsigned long long)i + 1, (unsigned long long)procs, strerror(errno));
			for (n = i, i = 0; i < n; i++)
				kill(pids[i], SIGKILL);
			return 1;
		}
	}
	while (__atomic_load_n(&sh->started, __ATOMIC_ACQUIRE) < n) {
		if (__atomic_load_n(&sh->failed, __ATOMIC_ACQUIRE)) {
			fprintf(stderr, "population: a thread: %s\n", strerror(sh->failed));
			for (i = 0; i < procs; i++)
				kill(pids[i], SIGKILL);
			return 1;
		}
		usleep(10000);
	}
	for (i = 0; i < procs; i++)
		for (k = proc_first(i); k < proc_first(i) + proc_threads(i); k++)
			printf("task %d %d %llu\n", (int)pids[i], (int)sh->tids[k],
			       (unsigned long long)task_pages(k));
	printf("population pid=%d procs=%llu threads=%llu pages=%llu\n", (int)getpid(),
	       (unsigned long long)procs, (unsigned long long)n, (unsigned long long)npages);
	fflush(stdout);
	for (;;) {
		if (sigwait(&set, &sig))
			continue;
		if (sig != SIGUSR1)
			break;
		round++;
		madvise(pages, npages * PAGE, MADV_DONTNEED);
		__atomic_store_n(&sh->gen, (int)round, __ATOMIC_RELEASE);
		syscall(SYS_futex, &sh->gen, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
		while (__atomic_load_n(&sh->done, __ATOMIC_ACQUIRE) < n * round)
			usleep(10000);
		printf("woke tasks=%llu round=%llu\n", (unsigned long long)n,
		       (unsigned long long)round);
		fflush(stdout);
	}
	for (i = 0; i < procs; i++)
		kill(pids[i], SIGKILL);
	for (i = 0; i < procs; i++)
		waitpid(pids[i], NULL, 0);
	printf("done procs=%llu\n", (unsigned long long)procs);
	return 0;
}
