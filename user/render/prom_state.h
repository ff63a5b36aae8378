/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The state of serve's Prometheus counters, shared by the three parts of
 * prom.h's module alone (no other file includes it): prom.c (the counters:
 * accumulation, cgroups, delay pairs, expiry), prom_rank.c (which processes
 * and threads get series) and prom_text.c (the text exposition).
 */
#ifndef __PMBPF_PROM_STATE_H
#define __PMBPF_PROM_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "catalog.h"
#include "htab.h"
#include "prom.h"

/*
 * Per-event counters (catalog sources SRC_EVENT to SRC_EVENT_RUNNING) are
 * accumulated by source and event: the scaled count is fractional, the
 * others are whole numbers kept exact.
 */
#define EV_SRCS (SRC_EVENT_RUNNING - SRC_EVENT + 1)

_Static_assert(SRC_EVENT_RAW == SRC_EVENT + 1 && SRC_EVENT_ENABLED == SRC_EVENT + 2 &&
		       SRC_EVENT_RUNNING == SRC_EVENT + 3,
	       "per-event counter sources are consecutive in enum fig_src");

/* The accumulator of a per-event counter source, or -1. */
static inline int ev_slot(enum fig_src src)
{
	return src >= SRC_EVENT && src <= SRC_EVENT_RUNNING ? (int)(src - SRC_EVENT) : -1;
}

union evsum {
	__u64 u;
	double d; /* SRC_EVENT */
};

/* Counters accumulated from interval deltas, and the last interval for gauges. */
struct acc {
	__u64 n[PMBPF_N_NR]; /* enum pmbpf_count */
	__u64 runq_hist[PMBPF_RUNQ_SLOTS];
	union evsum ev[EV_SRCS][PMBPF_MAX_EVENTS];
	__u64 cg[CGS_NR]; /* a cgroup's own file figures (SRC_CGROUP) */
	__u32 cg_have; /* those with a value since the series began */
	struct figures last; /* what was counted in the last interval it was seen */
	__u64 last_update; /* the update that interval was: its gauges are current */
};

/*
 * The text of one series set's samples, family by family, as last
 * rendered: a set whose counters did not move since is copied, not
 * rendered again (a refresh costs in proportion to the sets that changed).
 */
struct series_cache {
	struct strbuf text;
	size_t *off; /* off[k]: where the samples of the k-th family rendered begin */
	size_t nr_off, cap_off;
	__u64 acc_update; /* the acc's last_update when rendered */
	__u64 shape; /* prom_state.shape when rendered */
	bool current; /* its gauges were current (the set was seen in that update) */
	bool valid;
	bool building; /* being rendered again in this exposition */
	char *labels; /* a process's or thread's labels, rendered for comm */
	char comm[PMBPF_COMM_LEN];
};

/*
 * A process in one cgroup, identified by its start time across PID reuse;
 * or (tid set) one thread of it.
 */
struct proc {
	/* what every update reads first (ranking__rows(), ranking__select()): first */
	struct hnode node; /* first: a node is a proc */
	__u32 pid;
	__u32 tid; /* a thread's; 0 for a process */
	__u64 cgroup_id;
	__u64 start_ns;
	/* average CPU seconds per second, over about SCORE_TAU_S (score_of(): divided by ranking.scale) */
	double score;
	__u64 last_seen;
	bool exported;
	bool exited;
	bool rows_dup; /* more than one row of that update was its */
	size_t row; /* its (last) index in ranking.row_proc in update rows_gen */
	__u64 rows_gen;
	double rank; /* score, with the bonus of a process in the top K */
	__u64 top_gen; /* the last update that ranked it in the top K */
	__u64 linger_since; /* when it left the top K or exited; 0 while in it */
	struct acc *acc; /* from its first export on: untracked processes stay small */
	char comm[PMBPF_COMM_LEN];
	struct hnode snode; /* in ranking.series, by pid and tid */
	char *cgroup; /* path below the cgroup2 mount, or NULL */
	struct series_cache *cache; /* its series' text, once rendered */
	size_t exp; /* its index in ranking.exp, if there */
};

/* A cgroup, by path: a cgroup removed and made again continues its series. */
struct cg {
	struct hnode node;
	char *path;
	char *labels; /* rendered label pairs */
	struct acc acc;
	struct series_cache *cache;
	__u64 overflow_procs; /* catalog__overflow(): so far */
	__u64 last_seen;
	__u64 removed_since; /* 0 while it exists */
};

/* --delays: the delay of a cgroup's processes while another's ran. */
struct dpair {
	struct hnode node;
	char *cgroup; /* NUL, then by: both paths in one allocation */
	const char *by;
	__u64 ns;
	__u64 last_seen;
	__u64 removed_since; /* 0 while both cgroups exist */
};

/* The processes, or the threads, ranked for series: a top K of their own. */
struct ranking {
	struct htab procs;
	struct htab series; /* the same procs by pid and tid (snode): who shares a series */
	struct proc **rank;
	/*
	 * Every score decays by the same factor each interval: a proc keeps its
	 * score divided by their product (scale, 1 at prom__new()), so no update visits
	 * every proc to decay it.
	 */
	double scale;
	/*
	 * The last ranking__rows(): each row's proc (NULL: none), for acc_rows;
	 * a proc freed since is NULL there. The one before (prev_proc): where
	 * ranking__rows() looks first, as the rows come in the same order from
	 * one interval to the next.
	 */
	const struct proc_row *rows;
	struct proc **row_proc, **prev_proc;
	size_t nr_rows, cap_row_proc, cap_prev_proc;
	__u64 rows_gen; /* ranking__rows() so far */
	size_t nr_seen; /* distinct procs in row_proc */
	/* ranking__select()'s procs that ranking__expire() may forget, of update cand_gen */
	struct proc **cand;
	size_t nr_cand, cap_cand;
	__u64 cand_gen;
	/*
	 * The procs exported after ranking__select() of update exp_gen, and
	 * some that no longer are (NULL: freed since): ranking__exported()
	 * looks only there.
	 */
	struct proc **exp;
	size_t nr_exp, cap_exp;
	__u64 exp_gen;
	__u64 gen;
	size_t cap_rank;
	size_t nr_exported;
	unsigned int top_k;
	__u64 grace_ns;
};

struct prom_state {
	struct prom_opts o;
	struct htab dpairs;
	bool delays_on;
	/* the catalog's Prometheus counter of each per-event source, or NULL */
	const struct figure *ev_fig[EV_SRCS];
	__u64 updates;
	struct ranking procs;
	struct ranking threads; /* --threads */
	struct htab cgroups;
	struct acc idle;
	double system_ev[PMBPF_MAX_EVENTS];
	/* what the families and their samples depend on in a snapshot: events, metrics */
	__u64 shape;
	/*
	 * The catalog's families (prom_families()): of each figure with a
	 * family, the next figure of it (the catalog's size: none), and whether
	 * it is the family's first.
	 */
	size_t *fam_next;
	bool *fam_head;
};

static inline bool event_counting(const struct snapshot *snap, int i)
{
	return i < snap->nr_events && snap->events[i].state == EVENT_COUNTING;
}

/* A series set's cached text (prom_text.c). */
void series_cache__free(struct series_cache *c);
/* ps->fam_next and ps->fam_head from the catalog (prom_text.c). Returns 0 or -ENOMEM. */
int prom_families(struct prom_state *ps);

/*
 * The CPU ranking of one interval's rows (processes, or threads): each
 * one's score (every score first decays by one interval, dt seconds), name,
 * when seen (now). Returns 0 or -ENOMEM.
 */
int ranking__rows(struct ranking *r, const struct proc_row *rows, size_t nr, double dt, __u64 now);
/* The top K get series (export); those that left it linger, at most K of them. */
int ranking__select(struct ranking *r, __u64 now);
/* The process or thread of row, or NULL. */
struct proc *ranking__find(struct ranking *r, const struct proc_row *row, __u64 now);
/*
 * The process or thread of rows[i] of the last ranking__rows(r, rows, ...),
 * or NULL; cheapest with i in order (the procs of rows ahead are prefetched).
 */
struct proc *ranking__row(struct ranking *r, const struct proc_row *rows, size_t i, __u64 now);
/* Forget the processes whose series expired, and the untracked that are gone or idle. */
void ranking__expire(struct ranking *r, __u64 now);
/* The processes with series, by CPU ranking, in *rank (r's own array). Returns 0 or -ENOMEM. */
int ranking__exported(struct ranking *r, struct proc ***rank, size_t *nr);
void ranking__free(struct ranking *r);

#endif
