// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The per-CPU perf counter matrix (counters.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common.h"
#include "counters.h"
#include "host.h"
#include "pmu.h"
#include "util.h"

int counters__init(struct counters *c)
{
	int err, cpu;

	c->nr_cpus = libbpf_num_possible_cpus();
	if (c->nr_cpus <= 0) {
		err = c->nr_cpus ? c->nr_cpus : -EINVAL;
		pr_err("cannot count CPUs: %s\n", strerror(-err));
		return err;
	}
	c->online = calloc(c->nr_cpus, sizeof(*c->online));
	c->stale = calloc(c->nr_cpus, sizeof(*c->stale));
	c->bank = calloc(c->nr_cpus, sizeof(*c->bank));
	if (!c->online || !c->stale || !c->bank)
		return -ENOMEM;
	err = cpus__online(c->online, c->nr_cpus);
	if (err) {
		pr_err("cannot read online CPUs: %s\n", strerror(-err));
		return err;
	}
	for (cpu = 0; cpu < c->nr_cpus; cpu++)
		c->nr_online += c->online[cpu];
	return 0;
}

/*
 * The attr of event spec on cpu: the encoding of the PMU that counts on that
 * CPU. Returns false when the event has no encoding for this CPU's core type.
 */
static bool event_attr(const struct event_spec *spec, int cpu, struct perf_event_attr *attr)
{
	const struct pmu *all, *core;
	int nr, i;

	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	attr->exclude_user = spec->exclude_user;
	attr->exclude_kernel = spec->exclude_kernel;
	attr->exclude_hv = spec->exclude_hv;
	if (!spec->nr_enc) {
		attr->type = spec->type;
		attr->config = spec->config;
		attr->config1 = spec->config1;
		attr->config2 = spec->config2;
		/* hybrid: a generic hardware event through this CPU's own core PMU */
		if ((spec->type == PERF_TYPE_HARDWARE || spec->type == PERF_TYPE_HW_CACHE) &&
		    pmus__nr_core() > 1 && (core = pmu__core_of_cpu(cpu)))
			attr->config |= (__u64)core->type << 32;
		return true;
	}
	all = pmus__all(&nr);
	for (i = 0; i < spec->nr_enc; i++) {
		const struct event_enc *e = &spec->enc[i];

		if (e->pmu < 0 || e->pmu >= nr || !pmu__has_cpu(&all[e->pmu], cpu))
			continue;
		attr->type = e->type;
		attr->config = e->config;
		attr->config1 = e->config1;
		attr->config2 = e->config2;
		return true;
	}
	return false;
}

/* Where an event has no counter on a CPU (another core type): a counter that always reads 0. */
static int placeholder(int cpu)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.disabled = 1,
		.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING,
	};

	return (int)perf_event_open(&attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void close_slot(struct counters *c, int slot)
{
	int cpu;

	for (cpu = 0; cpu < c->nr_cpus; cpu++) {
		int *fd = &c->fds[slot * c->nr_cpus + cpu];

		if (*fd >= 0)
			close(*fd);
		*fd = -1;
	}
}

/* The fd on cpu of the first counting event of group g, or -1. */
static int group_leader_fd(struct counters *c, int g, int cpu)
{
	int i;

	if (g < 0)
		return -1;
	for (i = 0; i < c->nr_events; i++) {
		struct perf_event_attr attr;

		/* not an event that has only a placeholder on this CPU */
		if (c->ev[i].spec.group == g && c->ev[i].slot >= 0 && c->ev[i].cpus > 0 &&
		    event_attr(&c->ev[i].spec, cpu, &attr))
			return c->fds[c->ev[i].slot * c->nr_cpus + cpu];
	}
	return -1;
}

/*
 * A member added to a group that is already counting is not scheduled until
 * the group is next scheduled in, which for software groups is never: so
 * each leader is opened disabled and enabled once its members are in.
 */
static int enable_leaders(struct counters *c)
{
	int i, cpu;

	for (i = 0; i < c->nr_events; i++) {
		const struct event_info *ev = &c->ev[i];

		if (ev->spec.group < 0 || ev->slot < 0)
			continue;
		for (cpu = 0; cpu < c->nr_cpus; cpu++) {
			int fd = c->fds[ev->slot * c->nr_cpus + cpu];

			if (fd < 0 || group_leader_fd(c, ev->spec.group, cpu) != fd)
				continue;
			if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
				pr_err("cannot enable group of %s: %s\n", ev->spec.name,
				       strerror(errno));
				return -errno;
			}
		}
	}
	return 0;
}

/*
 * context-switches as the kernel counts it (one per switch-out of a task,
 * user and kernel, never multiplexed) is what the sched_switch program sees:
 * it counts it itself (ev_switches), with no counter to read at each switch
 * nor to keep in the kernel (an enabled per-CPU context-switches counter
 * costs each switch a software-event lookup). Its system-wide figure is
 * the kernel's switch count, /proc/stat's ctxt.
 */
static bool event_switches(const struct event_spec *spec)
{
	return spec->type == PERF_TYPE_SOFTWARE && spec->config == PERF_COUNT_SW_CONTEXT_SWITCHES &&
	       spec->group < 0 && !spec->exclude_user && !spec->exclude_kernel;
}

/*
 * Open event i on every online CPU in slot, as a member of its group where
 * it has one. Returns 0 or a positive errno (nothing left open).
 */
static int open_event(struct counters *c, int i, int slot, bool grouped)
{
	struct event_info *ev = &c->ev[i];
	int cpu, err = 0;

	ev->cpus = 0;
	ev->switches = event_switches(&ev->spec);
	if (ev->switches) {
		for (cpu = 0; cpu < c->nr_cpus; cpu++)
			ev->cpus += c->online[cpu];
		return 0;
	}
	for (cpu = 0; cpu < c->nr_cpus; cpu++) {
		struct perf_event_attr attr;
		int leader = grouped ? group_leader_fd(c, ev->spec.group, cpu) : -1;
		long fd;

		if (!c->online[cpu])
			continue;
		if (!event_attr(&ev->spec, cpu, &attr)) {
			fd = placeholder(cpu);
		} else {
			attr.disabled = grouped && ev->spec.group >= 0 && leader < 0;
			fd = perf_event_open(&attr, -1, cpu, leader, PERF_FLAG_FD_CLOEXEC);
			if (fd >= 0)
				ev->cpus++;
		}
		if (fd < 0) {
			err = errno;
			break;
		}
		c->fds[slot * c->nr_cpus + cpu] = (int)fd;
	}
	if (!err && !ev->cpus)
		err = ENODEV; /* no CPU of its PMU is online */
	if (err) {
		close_slot(c, slot);
		ev->cpus = 0;
	}
	return err;
}

static void group_names(struct counters *c, int g, char *buf, size_t len)
{
	size_t n = 0;
	int i;

	n += snprintf(buf, len, "{");
	for (i = 0; i < c->nr_events && n < len; i++)
		if (c->ev[i].spec.group == g)
			n += snprintf(buf + n, len - n, "%s%s", n > 1 ? "," : "",
				      c->ev[i].spec.name);
	if (n < len)
		snprintf(buf + n, len - n, "}");
}

/* An event before i in group g is counting: i would join it. */
static bool group_has_member(const struct counters *c, int g, int i)
{
	int k;

	for (k = 0; g >= 0 && k < i; k++)
		if (c->ev[k].spec.group == g && c->ev[k].slot >= 0)
			return true;
	return false;
}

/* Say in one line why the kernel refused an event; false when it merely does not exist here. */
static bool refused(const struct event_info *ev, int err)
{
	char why[512];

	if (ev->state == EVENT_PERMISSION_DENIED) {
		pr_err("event %s: permission denied (%s): %s\n", ev->spec.name, strerror(err),
		       perm__why(why, sizeof(why)));
		return true;
	}
	if (ev->state == EVENT_INVALID) {
		pr_err("event %s: the kernel refused its attributes (%s): 'pmbpf list --attr %s' shows them\n",
		       ev->spec.name, strerror(err), ev->spec.name);
		return true;
	}
	return false;
}

int counters__open(struct counters *c, const struct event_spec *events, int nr_events,
		   bool default_events)
{
	size_t n = (size_t)PMBPF_MAX_EVENTS * (unsigned int)c->nr_cpus;
	bool default_split = false;
	int i;

	c->fds = malloc(sizeof(*c->fds) * n);
	c->sys_last = calloc(n, sizeof(*c->sys_last));
	if (!c->fds || !c->sys_last)
		return -ENOMEM;
	for (i = 0; i < (int)n; i++)
		c->fds[i] = -1;

	if (default_events && !pmu__available())
		pr_err("no hardware PMU on this host: counting software events (" DEFAULT_SW_EVENTS
		       ") instead of " DEFAULT_EVENTS "\n");
	c->nr_events = nr_events;
	for (i = 0; i < nr_events; i++) {
		c->ev[i].spec = events[i];
		c->ev[i].slot = -1;
	}
	for (i = 0; i < nr_events; i++) {
		struct event_info *ev = &c->ev[i];
		int slot = c->nr_slots, err;
		bool member = group_has_member(c, ev->spec.group, i);

		/* the slot is taken first: group_leader_fd looks events up by slot */
		ev->slot = slot;
		err = open_event(c, i, slot, true);
		if (member && (err == EINVAL || err == ENOSPC) && !open_event(c, i, slot, false)) {
			/* it opens alone: the group does not fit the PMU */
			char names[256];

			close_slot(c, slot);
			group_names(c, ev->spec.group, names, sizeof(names));
			if (!default_events) {
				pr_err("group %s does not fit the PMU's counters together: split it into smaller groups\n",
				       names);
				return -E2BIG;
			}
			if (!default_split)
				pr_err("the default events do not fit one group on this PMU; counting %s outside the group\n",
				       ev->spec.name);
			default_split = true;
			ev->spec.group = -1;
			err = open_event(c, i, slot, false);
		}
		ev->err = err;
		ev->state = event_state__from_errno(err);
		if (err) {
			ev->slot = -1;
			if (ev->state == EVENT_ERROR) {
				pr_err("cannot open event %s: %s\n", ev->spec.name, strerror(err));
				return -err;
			}
			/*
			 * An event asked for that the kernel refuses cannot be
			 * counted by any later interval; the defaults show '-'.
			 */
			if (!default_events && refused(ev, err))
				return -err;
			continue;
		}
		c->slot_event[slot] = i;
		c->nr_slots++;
	}
	return enable_leaders(c);
}

bool counters__group_has_hw(const struct counters *c, int g)
{
	int i;

	for (i = 0; g >= 0 && i < c->nr_events; i++)
		if (c->ev[i].spec.group == g && c->ev[i].slot >= 0 &&
		    c->ev[i].spec.type != PERF_TYPE_SOFTWARE &&
		    c->ev[i].spec.type != PERF_TYPE_TRACEPOINT)
			return true;
	return false;
}

void counters__read(struct counters *c, struct snapshot *snap)
{
	__u64 now = now_ns(CLOCK_MONOTONIC), ctxt = 0;
	int slot, cpu;

	for (slot = 0; slot < c->nr_slots; slot++) {
		int ev = c->slot_event[slot];

		if (c->ev[ev].switches) {
			/* enabled and running as a per-CPU counter's: the online CPUs' time */
			__u64 t = (now - c->sys_now) * (unsigned int)c->nr_online;

			ctxt = ctxt ?: host__switches();
			if (!ctxt)
				continue; /* unreadable: the next read counts from the last */
			if (snap && c->sys_now) {
				snap->system[ev].value += ctxt - c->sys_ctxt;
				snap->system[ev].enabled += t;
				snap->system[ev].running += t;
			}
			continue;
		}
		for (cpu = 0; cpu < c->nr_cpus; cpu++) {
			int i = slot * c->nr_cpus + cpu;
			__u64 buf[3];

			if (c->fds[i] < 0 || read(c->fds[i], buf, sizeof(buf)) != sizeof(buf))
				continue;
			/* a CPU's counter runs while it is online; offline kills it */
			if (buf[1] == c->sys_last[i].enabled)
				c->stale[cpu] = true;
			if (snap) {
				snap->system[ev].value += buf[0] - c->sys_last[i].value;
				snap->system[ev].enabled += buf[1] - c->sys_last[i].enabled;
				snap->system[ev].running += buf[2] - c->sys_last[i].running;
			}
			c->sys_last[i].value = buf[0];
			c->sys_last[i].enabled = buf[1];
			c->sys_last[i].running = buf[2];
		}
	}
	if (ctxt) {
		c->sys_ctxt = ctxt;
		c->sys_now = now;
	}
}

/*
 * Counters of CPU cpu in the other bank, then rebase on that CPU. Returns
 * 0, or -ENODEV/-ENXIO when the CPU went offline again (tried next time).
 */
static int cpu_reopen(struct counters *c, int cpu, int map_fd, int rebase_fd,
		      const struct pmbpf_reading *rebased)
{
	int slot, g, err = 0;
	int bank = c->bank[cpu] ^ 1, fds[PMBPF_MAX_EVENTS], leader[PMBPF_MAX_EVENTS];
	LIBBPF_OPTS(bpf_test_run_opts, opts, .cpu = cpu, .flags = BPF_F_TEST_RUN_ON_CPU);

	for (slot = 0; slot < PMBPF_MAX_EVENTS; slot++)
		fds[slot] = leader[slot] = -1;
	for (slot = 0; slot < c->nr_slots && !err; slot++) {
		const struct event_spec *spec = &c->ev[c->slot_event[slot]].spec;
		struct perf_event_attr attr;
		__u32 idx = (bank * c->nr_slots + slot) * c->nr_cpus + cpu;
		long fd;

		if (c->ev[c->slot_event[slot]].switches)
			continue; /* no counter */
		g = spec->group >= 0 && spec->group < PMBPF_MAX_EVENTS ? spec->group : -1;
		if (event_attr(spec, cpu, &attr)) {
			/* groups formed again as open_event() does: leader disabled until its members are in */
			attr.disabled = g >= 0 && leader[g] < 0;
			fd = perf_event_open(&attr, -1, cpu, g >= 0 ? leader[g] : -1,
					     PERF_FLAG_FD_CLOEXEC);
			if (fd >= 0 && g >= 0 && leader[g] < 0)
				leader[g] = (int)fd;
		} else {
			fd = placeholder(cpu);
		}

		if (fd < 0) {
			err = -errno;
			break;
		}
		fds[slot] = (int)fd;
		if (bpf_map_update_elem(map_fd, &idx, &fds[slot], BPF_ANY))
			err = -errno;
	}
	for (g = 0; g < PMBPF_MAX_EVENTS && !err; g++)
		if (leader[g] >= 0 && ioctl(leader[g], PERF_EVENT_IOC_ENABLE, 0))
			err = -errno;
	if (!err && bpf_prog_test_run_opts(rebase_fd, &opts))
		err = -errno;
	if (err) {
		for (slot = 0; slot < c->nr_slots; slot++)
			if (fds[slot] >= 0)
				close(fds[slot]);
		return err;
	}
	c->bank[cpu] = bank;
	for (slot = 0; slot < c->nr_slots; slot++) {
		int i = slot * c->nr_cpus + cpu;

		if (c->fds[i] >= 0)
			close(c->fds[i]);
		c->fds[i] = fds[slot];
		c->sys_last[i] = rebased[slot];
	}
	c->stale[cpu] = false;
	return 0;
}

/* The counters of cpu are open (or it has none to open: context-switches alone). */
static bool cpu_counters_open(const struct counters *c, int cpu)
{
	int slot;

	for (slot = 0; slot < c->nr_slots; slot++)
		if (!c->ev[c->slot_event[slot]].switches)
			return c->fds[slot * c->nr_cpus + cpu] >= 0;
	return true;
}

/* as are those of CPUs that were offline when the session started */
int counters__refresh(struct counters *c, int map_fd, int rebase_fd,
		      const struct pmbpf_reading *rebased)
{
	int cpu, err;

	err = cpus__online(c->online, c->nr_cpus);
	if (err)
		return err;
	c->nr_online = 0;
	for (cpu = 0; cpu < c->nr_cpus; cpu++) {
		c->nr_online += c->online[cpu];
		if (!c->online[cpu] || !c->nr_slots)
			continue;
		if (!c->stale[cpu] && cpu_counters_open(c, cpu))
			continue;
		err = cpu_reopen(c, cpu, map_fd, rebase_fd, rebased);
		if (err && err != -ENODEV && err != -ENXIO) {
			pr_err("cannot reopen the counters of CPU %d: %s\n", cpu, strerror(-err));
			return err;
		}
	}
	return 0;
}

int counters__store(const struct counters *c, int map_fd)
{
	int slot, cpu, err;

	for (slot = 0; slot < c->nr_slots; slot++) {
		for (cpu = 0; cpu < c->nr_cpus; cpu++) {
			__u32 idx = slot * c->nr_cpus + cpu;
			int efd = c->fds[idx];

			if (efd < 0)
				continue;
			if (bpf_map_update_elem(map_fd, &idx, &efd, BPF_ANY)) {
				err = -errno;
				pr_err("cannot store counter fd: %s\n", strerror(-err));
				return err;
			}
		}
	}
	return 0;
}

bool counters__hw_counting(const struct counters *c)
{
	int i;

	for (i = 0; i < c->nr_events; i++)
		if ((c->ev[i].spec.kind & EVENT_HW) && c->ev[i].state == EVENT_COUNTING)
			return true;
	return false;
}

void counters__close(struct counters *c)
{
	int i;

	if (c->fds)
		for (i = 0; i < PMBPF_MAX_EVENTS * c->nr_cpus; i++)
			if (c->fds[i] >= 0)
				close(c->fds[i]);
	free(c->fds);
	free(c->sys_last);
	free(c->online);
	free(c->stale);
	free(c->bank);
	c->fds = NULL;
	c->sys_last = NULL;
	c->online = c->stale = NULL;
	c->bank = NULL;
}
