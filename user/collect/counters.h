/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The per-CPU perf counter matrix: every counting event open on every online
 * CPU (pid -1), in its group where it has one. The BPF programs read these
 * counters at each switch (the events map holds their fds, counters__store());
 * counters__read() reads them system-wide; a CPU that comes back online gets
 * them again (counters__refresh()).
 */
#ifndef __PMBPF_COUNTERS_H
#define __PMBPF_COUNTERS_H

#include <stdbool.h>
#include "pmbpf.h"
#include "events.h"
#include "snapshot.h"

struct counters {
	int nr_cpus; /* possible CPUs: per-CPU map layout */
	bool *online;
	int nr_online;
	bool *stale; /* CPUs whose counters stopped (went offline): reopen when online */
	__u8 *bank; /* the half of the events map each CPU's counters are in */
	struct event_info ev[PMBPF_MAX_EVENTS];
	int nr_events;
	int nr_slots; /* counting events: the BPF programs' slots */
	int slot_event[PMBPF_MAX_EVENTS];
	int *fds; /* [slot * nr_cpus + cpu], -1 where not open */
	struct pmbpf_reading *sys_last; /* same layout */
	__u64 sys_ctxt, sys_now; /* /proc/stat's ctxt at the last counters__read(), and when */
};

/* The possible and online CPUs. Returns 0 or a negative errno; the message has been printed. */
int counters__init(struct counters *c);
/*
 * Open events on every online CPU (default_events: the defaults, whose group
 * may be split where it does not fit the PMU, and whose refused events are
 * shown as '-'). Returns 0 or a negative errno; the message has been printed.
 */
int counters__open(struct counters *c, const struct event_spec *events, int nr_events,
		   bool default_events);
/* The counting events' fds into the events map (map_fd), bank 0. */
int counters__store(const struct counters *c, int map_fd);
/*
 * Read every counter: the system-wide delta since the previous read into
 * snap->system (snap NULL: only the starting point).
 */
void counters__read(struct counters *c, struct snapshot *snap);
/*
 * CPU hotplug: a CPU that went offline lost its counters (the kernel stops
 * them and does not restart them); once it is online again they are opened
 * anew in the other bank of the events map (map_fd), and the CPU rebased by
 * the program rebase_fd, whose readings per slot are in rebased.
 */
int counters__refresh(struct counters *c, int map_fd, int rebase_fd,
		      const struct pmbpf_reading *rebased);
/* Group g has a counting event that is neither software nor a tracepoint. */
bool counters__group_has_hw(const struct counters *c, int g);
/* At least one hardware event is counting. */
bool counters__hw_counting(const struct counters *c);
void counters__close(struct counters *c);

#endif
