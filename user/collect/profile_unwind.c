// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --call-graph dwarf: unwinding the copied user stacks with libdwfl.
 *
 * Each process gets one Dwfl with its modules as /proc/PID/maps shows them
 * (dwfl_linux_proc_report), kept for its later samples. A sample is unwound
 * as a thread of that Dwfl whose initial registers are the sample's and
 * whose memory is the copy of the stack: libdwfl steps from frame to frame
 * with the CFI of each module (.eh_frame, or .debug_frame from the module or
 * its debug file) and, where a pc has none (JIT code), with the
 * architecture's frame-pointer fallback. A read above the copy is what a
 * stack cut at SIZE looks like: the walk stops there and says so.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include "profile_unwind.h"
#include "util.h"

#define PAST_COPY_SLACK (1 << 20)
#define UPROC_BUCKETS	1024
#define REREPORT_NS \
	(500 * 1000000ULL) /* a pc outside every module: maps again, at most this often */

struct uproc {
	pid_t tgid;
	Dwfl *dwfl; /* NULL: the process could not be read (gone) */
	__u64 reported_ns;
	struct uproc *next;
};

/* The sample being unwound. */
struct unwind_cur {
	const struct profile_ustack *rec;
	__u64 sp;
	bool past_copy; /* a read above the copy, which was cut at SIZE */
	__u64 *pcs;
	int nr, max;
	bool too_deep;
};

struct unwinder {
	unsigned int size;
	struct uproc *procs[UPROC_BUCKETS];
	struct unwind_cur cur;
};

static char *debuginfo_path;

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct unwinder *u = arg;

	if (*thread_argp)
		return 0;
	*thread_argp = arg;
	return (pid_t)u->cur.rec->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	*thread_argp = arg;
	return true;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct unwinder *u = arg;
	const struct profile_ustack *rec = u->cur.rec;
	__u64 off = addr - u->cur.sp;

	if (addr < u->cur.sp || off + sizeof(*result) > rec->size) {
		/*
		 * Just above a copy that stopped at SIZE: the stack goes on.
		 * (Farther, it is rather a frame pointer that holds data.)
		 */
		if (addr >= u->cur.sp && off < rec->size + PAST_COPY_SLACK &&
		    rec->size == u->size && !(rec->flags & PROFILE_USTACK_CLAMPED))
			u->cur.past_copy = true;
		return false;
	}
	memcpy(result, rec->stack + off, sizeof(*result));
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct unwinder *u = arg;
	const __u64 *r = u->cur.rec->regs;
	Dwarf_Word w;

#if defined(__x86_64__)
	/* DWARF numbers: 6 rbp, 7 rsp */
	w = r[PROFILE_REG_FP];
	if (!dwfl_thread_state_registers(thread, 6, 1, &w))
		return false;
	w = r[PROFILE_REG_SP];
	if (!dwfl_thread_state_registers(thread, 7, 1, &w))
		return false;
#elif defined(__aarch64__)
	/* DWARF numbers: x29, x30 (lr), 31 sp */
	Dwarf_Word regs[3] = { r[PROFILE_REG_FP], r[PROFILE_REG_LR], r[PROFILE_REG_SP] };

	(void)w;
	if (!dwfl_thread_state_registers(thread, 29, 3, regs))
		return false;
#else
#error "--call-graph dwarf: registers of this architecture"
#endif
	dwfl_thread_state_register_pc(thread, r[PROFILE_REG_IP]);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

struct unwinder *unwinder__new(unsigned int size)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (u)
		u->size = size;
	return u;
}

static void uproc_close(struct uproc *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	p->dwfl = NULL;
}

void unwinder__free(struct unwinder *u)
{
	size_t i;

	if (!u)
		return;
	for (i = 0; i < UPROC_BUCKETS; i++) {
		while (u->procs[i]) {
			struct uproc *p = u->procs[i];

			u->procs[i] = p->next;
			uproc_close(p);
			free(p);
		}
	}
	free(u);
}

/* A Dwfl with the process's modules as they are mapped now. */
static int uproc_report(struct unwinder *u, struct uproc *p)
{
	Dwfl *dwfl;

	uproc_close(p);
	p->reported_ns = now_ns(CLOCK_MONOTONIC);
	dwfl = dwfl_begin(&proc_callbacks);
	if (!dwfl)
		return -ENOMEM;
	dwfl_report_begin(dwfl);
	if (dwfl_linux_proc_report(dwfl, p->tgid) || dwfl_report_end(dwfl, NULL, NULL) ||
	    !dwfl_attach_state(dwfl, NULL, p->tgid, &thread_callbacks, u)) {
		dwfl_end(dwfl);
		return -ESRCH;
	}
	p->dwfl = dwfl;
	return 0;
}

static struct uproc *uproc_get(struct unwinder *u, pid_t tgid)
{
	struct uproc **head = &u->procs[(unsigned int)tgid % UPROC_BUCKETS], *p;

	for (p = *head; p; p = p->next)
		if (p->tgid == tgid)
			return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->tgid = tgid;
	p->next = *head;
	*head = p;
	uproc_report(u, p);
	return p;
}

void unwinder__forget(struct unwinder *u, pid_t tgid)
{
	struct uproc *p;

	for (p = u->procs[(unsigned int)tgid % UPROC_BUCKETS]; p; p = p->next)
		if (p->tgid == tgid)
			p->reported_ns = 0; /* reported again when next needed */
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct unwinder *u = arg;
	Dwarf_Addr pc;

	if (!dwfl_frame_pc(state, &pc, NULL))
		return DWARF_CB_ABORT;
	if (u->cur.nr == u->cur.max) {
		u->cur.too_deep = true;
		return DWARF_CB_ABORT;
	}
	/* A pc of 0 ends the chain (the outermost frame's return address). */
	if (!pc)
		return DWARF_CB_ABORT;
	u->cur.pcs[u->cur.nr++] = pc;
	return DWARF_CB_OK;
}

int unwinder__unwind(struct unwinder *u, const struct profile_ustack *rec, __u64 *pcs, int max,
		     bool *truncated)
{
	struct uproc *p = uproc_get(u, (pid_t)rec->tgid);
	__u64 ip = rec->regs[PROFILE_REG_IP];

	*truncated = false;
	if (!p || max <= 0)
		return 0;
	/* New since the last report (exec, dlopen): read the maps again. */
	if (p->dwfl && !p->reported_ns)
		uproc_report(u, p);
	else if ((!p->dwfl || !dwfl_addrmodule(p->dwfl, ip)) &&
		 now_ns(CLOCK_MONOTONIC) - p->reported_ns > REREPORT_NS)
		uproc_report(u, p);
	if (!p->dwfl) {
		pcs[0] = ip; /* the process is gone: the sampled pc is all there is */
		return 1;
	}
	u->cur = (struct unwind_cur){
		.rec = rec,
		.sp = rec->regs[PROFILE_REG_SP],
		.pcs = pcs,
		.max = max,
	};
	dwfl_getthread_frames(p->dwfl, (pid_t)rec->tid, frame_cb, u);
	if (!u->cur.nr) {
		pcs[0] = ip;
		u->cur.nr = 1;
	}
	*truncated = u->cur.past_copy || u->cur.too_deep;
	return u->cur.nr;
}
