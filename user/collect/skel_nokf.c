// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The kfunc-free switch object's skeleton, apart: its header defines its own struct. */
#include <linux/types.h>
#include <bpf/libbpf.h>
#include "pmbpf.h" /* before the skeleton, which names its structs */
#include "pmbpf_nokf.skel.h"
#include "skel_nokf.h"

void *skel_nokf__open(size_t *size)
{
	*size = sizeof(struct pmbpf_nokf_bpf);
	return pmbpf_nokf_bpf__open();
}
