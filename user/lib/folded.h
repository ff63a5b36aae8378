/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A folded stack: "comm;outer;...;inner WEIGHT", the FlameGraph interchange format. */
#ifndef __PMBPF_FOLDED_H
#define __PMBPF_FOLDED_H

#include <linux/types.h>

struct folded {
	char *stack; /* frames separated by ';', outermost first */
	__u64 weight;
};

#endif
