/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __PMBPF_SKEL_NOKF_H
#define __PMBPF_SKEL_NOKF_H

#include <stddef.h>

/*
 * pmbpf_nokf_bpf__open(): the switch object built without kfunc externs
 * (kernels before 6.2, bpf/fold.bpf.h). Its skeleton has pmbpf_bpf's maps,
 * programs and variables in the same order, so the caller uses it as a
 * struct pmbpf_bpf; *size is its size, for the caller to check.
 */
void *skel_nokf__open(size_t *size);

#endif
