/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --call-graph dwarf: user stacks unwound in userspace, from the registers
 * and the copy of the stack taken at each sample (struct profile_ustack),
 * with libdwfl and each module's .eh_frame / .debug_frame, as perf does with
 * its libdw unwinder.
 */
#ifndef __PMBPF_PROFILE_UNWIND_H
#define __PMBPF_PROFILE_UNWIND_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>
#include "profile.h"

/* Frames kept per stack; deeper stacks are marked truncated. */
#define UNWIND_MAX_DEPTH 512

struct unwinder;

/* size: the bytes of stack each sample was asked to copy (--call-graph dwarf,SIZE). */
struct unwinder *unwinder__new(unsigned int size);
void unwinder__free(struct unwinder *u);

/*
 * The user frames of one sample into pcs (at most max), innermost first: the
 * first is where the sample hit, the others are return addresses. Returns
 * their number (0 when nothing could be unwound, not even the first);
 * *truncated tells that the walk went on past the copied stack (the copy was
 * cut at SIZE) or past max frames.
 */
int unwinder__unwind(struct unwinder *u, const struct profile_ustack *rec, __u64 *pcs, int max,
		     bool *truncated);

/* The process exec'd (or is new): its modules are read again at its next sample. */
void unwinder__forget(struct unwinder *u, pid_t tgid);

#endif
