/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Addresses to names: user addresses through each process's mappings as they
 * were recorded (so a process that has exited still gets names while its
 * files are on disk) and libdwfl (symtab, .gnu_debuglink, build-id debug
 * files); kernel addresses through /proc/kallsyms.
 */
#ifndef __PMBPF_SYMBOLIZE_H
#define __PMBPF_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <linux/types.h>

struct symbolizer;

struct symbolizer *symbolizer__new(void);
void symbolizer__free(struct symbolizer *s);

/*
 * Record the mappings of process tgid now, and open the files they map so
 * that they stay readable after the process is gone. A process recorded
 * again (after an exec, or at the end for libraries loaded later) keeps its
 * older mappings as a fallback. Returns 0, or a negative errno (for
 * instance -ENOENT when the process is already gone).
 */
int symbolizer__add_process(struct symbolizer *s, pid_t tgid);

/*
 * Name of a user address of process tgid: "function", "module+0xoff" when
 * the module has no symbol for it, "[vdso]", or "[unknown]". For a return
 * address (every frame but the innermost), the call instruction before it is
 * looked up. The result lives in buf.
 */
const char *symbolizer__user(struct symbolizer *s, pid_t tgid, __u64 addr, bool ret_addr, char *buf,
			     size_t len);
/* Name of a kernel address ("function" or "[unknown]"), from /proc/kallsyms. */
const char *symbolizer__kernel(struct symbolizer *s, __u64 addr, bool ret_addr, char *buf,
			       size_t len);

/*
 * A perf map (/tmp/perf-PID.map: "START SIZE name" lines, hex), as the
 * symbolizer reads it; lines it cannot read are skipped. NULL without memory.
 */
struct perf_map;
struct perf_map *perf_map__read(FILE *f);
size_t perf_map__nr(const struct perf_map *pm);
/* The name of the latest symbol that holds addr, or NULL. */
const char *perf_map__find(const struct perf_map *pm, __u64 addr);
void perf_map__free(struct perf_map *pm);
/*
 * Why a perf map of status st must not be read for a process of user uid,
 * in words (NULL: it may be). As perf: any local user can write a file in
 * /tmp, so only the process's user or root may own it, and no one else may
 * write it; and it must be a regular file, of at most 1 GiB.
 */
const char *perf_map__refusal(const struct stat *st, uid_t uid, char *buf, size_t len);

#endif
