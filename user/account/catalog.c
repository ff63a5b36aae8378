// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The figure catalog (catalog.h). The order of figures[] is the order of
 * the table's and top's columns, the JSON keys, the CSV columns, the stat
 * rows and the Prometheus families.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "catalog.h"

#define ROWS (OUT_TABLE | OUT_JSON | OUT_CSV)

static const struct figure figures[] = {
	{ .name = "cpu_pct",
	  .title = "CPU%",
	  .unit = "percent",
	  .help = "On-CPU time over the interval's length: 100 is one CPU busy for the whole interval.",
	  .kind = FIG_GAUGE,
	  .src = SRC_DERIVED,
	  .index = DER_CPU_PCT,
	  .fmt = FMT_PCT,
	  .outputs = ROWS | OUT_TOP | OUT_STAT,
	  .width = 6,
	  .top_prio = 95,
	  .tests =
		  "test_record.py::test_cpu_burn_time_and_cpu_pct test_record.py::test_pinned_busy_loop_steady" },
	{ .name = "oncpu_ns",
	  .stat = "cpu-time",
	  .label = "on-CPU time",
	  .unit = "ns",
	  .help = "Time on CPU as the scheduler charges it (se.sum_exec_runtime: schedstat, cpu.stat, getrusage), read at each switch; the idle task's, its time between switches.",
	  .kind = FIG_COUNTER,
	  .src = SRC_COUNT,
	  .index = PMBPF_N_ONCPU_NS,
	  .fmt = FMT_NS,
	  .outputs = OUT_JSON | OUT_CSV | OUT_PROM | OUT_STAT,
	  .prom = "cpu_seconds_total",
	  .tests =
		  "test_record.py::test_cpu_burn_time_and_cpu_pct test_record.py::test_conservation test_threads.py::test_threads_credited_their_own_work test_cgroup.py::test_migration_splits_counts" },
	{ .name = "events.%s.count",
	  .csv = "%s",
	  .title = "%s",
	  .top_title = "%s/s",
	  .stat = "%s",
	  .label = "%s",
	  .unit = "events",
	  .help = "Perf event count while it ran, scaled for multiplexing (value x enabled / running); clock events (cpu-clock, task-clock) count ns, in seconds in Prometheus.",
	  .kind = FIG_COUNTER,
	  .src = SRC_EVENT,
	  .fmt = FMT_COUNT,
	  .outputs = ROWS | OUT_PROM | OUT_TOP | OUT_STAT | OUT_SYSTEM,
	  .prom = "perf_events_total",
	  .prom_time = "perf_event_seconds_total",
	  .width = 8,
	  .top_prio = 60,
	  .tests =
		  "vm/guest/arm64.sh::check_pmbpf_multiplex vm/guest/arm64.sh::check_pmbpf_loop unit/test_metrics.c::test_scaled" },
	{ .name = "events.%s.raw",
	  .unit = "events",
	  .help = "The event's count as read, before scaling.",
	  .kind = FIG_COUNTER,
	  .src = SRC_EVENT_RAW,
	  .fmt = FMT_COUNT,
	  .outputs = OUT_JSON | OUT_SYSTEM,
	  .tests =
		  "test_record.py::test_conservation test_stat.py::test_children_counted_like_perf_stat test_events.py::test_sys_enter_write_counts_every_write test_events.py::test_group_counts_equal_ungrouped vm/guest/arm64.sh::check_pmbpf_loop" },
	{ .name = "events.%s.enabled_ns",
	  .unit = "ns",
	  .help = "Time the event's counter was enabled while it ran.",
	  .kind = FIG_COUNTER,
	  .src = SRC_EVENT_ENABLED,
	  .fmt = FMT_NS,
	  .outputs = OUT_JSON | OUT_PROM | OUT_SYSTEM,
	  .prom = "perf_event_enabled_seconds_total",
	  .prom_cgroup_only = true,
	  .tests =
		  "vm/guest/arm64.sh::check_pmbpf_multiplex test_events.py::test_tracepoint_in_a_group_with_software_events" },
	{ .name = "events.%s.running_ns",
	  .unit = "ns",
	  .help = "Time the event's counter was counting while it ran (running / enabled: coverage).",
	  .kind = FIG_COUNTER,
	  .src = SRC_EVENT_RUNNING,
	  .fmt = FMT_NS,
	  .outputs = OUT_JSON | OUT_PROM | OUT_SYSTEM,
	  .prom = "perf_event_running_seconds_total",
	  .prom_cgroup_only = true,
	  .tests =
		  "vm/guest/arm64.sh::check_pmbpf_multiplex test_events.py::test_tracepoint_in_a_group_with_software_events" },
	{ .name = "events.%s.coverage",
	  .csv = "%s_coverage",
	  .unit = "ratio",
	  .help = "Share of the enabled time the event was counting (1: not multiplexed).",
	  .kind = FIG_GAUGE,
	  .src = SRC_EVENT_COVERAGE,
	  .fmt = FMT_FRACTION,
	  .outputs = OUT_JSON | OUT_CSV | OUT_STAT | OUT_SYSTEM,
	  .tests =
		  "vm/guest/arm64.sh::check_pmbpf_multiplex test_events.py::test_tracepoint_in_a_group_with_software_events unit/test_metrics.c::test_coverage" },
	{ .name = "ipc",
	  .title = "IPC",
	  .stat = "ipc",
	  .label = "IPC",
	  .unit = "ratio",
	  .help = "Instructions per cycle, from one group holding both where there is one (the table marks others with *).",
	  .kind = FIG_GAUGE,
	  .src = SRC_DERIVED,
	  .index = DER_IPC,
	  .fmt = FMT_RATIO,
	  .outputs = ROWS | OUT_TOP | OUT_STAT | OUT_SYSTEM,
	  .needs = EVENT_CYCLES | EVENT_INSTRUCTIONS,
	  .width = 6,
	  .top_prio = 85,
	  .tests =
		  "vm/guest/arm64.sh::check_pmbpf_ipc vm/guest/arm64.sh::check_pmbpf_noicount_ipc unit/test_metrics.c::test_row" },
	{ .name = "ipc_same_group",
	  .unit = "bool",
	  .help = "IPC is from cycles and instructions of one group: counted over the same running time.",
	  .kind = FIG_GAUGE,
	  .src = SRC_DERIVED,
	  .index = DER_IPC_SAME_GROUP,
	  .fmt = FMT_BOOL,
	  .outputs = OUT_JSON | OUT_STAT | OUT_SYSTEM,
	  .needs = EVENT_CYCLES | EVENT_INSTRUCTIONS,
	  .tests = "vm/guest/arm64.sh::check_pmbpf_group_ipc unit/test_metrics.c::test_groups" },
	{ .name = "mpki.%s",
	  .csv = "%s_mpki",
	  .title = "%s-MPKI",
	  .stat = "%s-mpki",
	  .unit = "ratio",
	  .help = "Misses of a miss event per 1000 instructions.",
	  .kind = FIG_GAUGE,
	  .src = SRC_MPKI,
	  .fmt = FMT_RATIO,
	  .outputs = ROWS | OUT_TOP | OUT_STAT | OUT_SYSTEM,
	  .needs = EVENT_INSTRUCTIONS,
	  .width = 9,
	  .top_prio = 75,
	  .tests = "unit/test_metrics.c::test_row unit/test_metrics.c::test_row_not_counting" },
	{ .name = "metrics.%s",
	  .title = "%s",
	  .stat = "%s-%s",
	  .label = "%s %s",
	  .unit = "ratio",
	  .help = "A -M metric's figure (topdown: fraction of slots or cycles); see docs/metrics.md.",
	  .kind = FIG_GAUGE,
	  .src = SRC_METRIC,
	  .fmt = FMT_FRACTION,
	  .outputs = ROWS | OUT_PROM | OUT_TOP | OUT_STAT | OUT_SYSTEM,
	  .prom = "metric_ratio",
	  .width = 8,
	  .top_prio = 80,
	  .tests =
		  "unit/test_metrics.c::test_formulas vm/guest/arm64.sh::check_pmbpf_topdown_unsupported" },
	{ .name = "voluntary_switches",
	  .title = "VCSW",
	  .stat = "voluntary-switches",
	  .label = "voluntary switches",
	  .unit = "switches",
	  .help = "Switches out of its threads that blocked (voluntary).",
	  .kind = FIG_COUNTER,
	  .src = SRC_COUNT,
	  .index = PMBPF_N_NVCSW,
	  .fmt = FMT_COUNT,
	  .outputs = ROWS | OUT_PROM | OUT_STAT,
	  .prom = "context_switches_total",
	  .prom_labels = "kind=\"voluntary\"",
	  .width = 7,
	  .tests =
		  "test_record.py::test_voluntary_switches test_record.py::test_context_switches_counted" },
	{ .name = "involuntary_switches",
	  .title = "ICSW",
	  .stat = "involuntary-switches",
	  .label = "involuntary switches",
	  .unit = "switches",
	  .help = "Switches out of its threads that were preempted (involuntary).",
	  .kind = FIG_COUNTER,
	  .src = SRC_COUNT,
	  .index = PMBPF_N_NIVCSW,
	  .fmt = FMT_COUNT,
	  .outputs = ROWS | OUT_PROM | OUT_STAT,
	  .prom = "context_switches_total",
	  .prom_labels = "kind=\"involuntary\"",
	  .width = 7,
	  .tests =
		  "test_record.py::test_context_switches_counted test_cgroup.py::test_runq_latency_contention_vs_alone" },
	{ .name = "switches",
	  .title = "CSW/s",
	  .unit = "switches",
	  .help = "Switches out, voluntary and involuntary (top shows them per second).",
	  .kind = FIG_COUNTER,
	  .src = SRC_DERIVED,
	  .index = DER_SWITCHES,
	  .fmt = FMT_COUNT,
	  .outputs = OUT_TOP,
	  .width = 6,
	  .top_prio = 62,
	  .tests = "test_record.py::test_context_switches_counted unit/test_metrics.c::test_row" },
	{ .name = "migrations",
	  .stat = "migrations",
	  .label = "CPU migrations",
	  .unit = "migrations",
	  .help = "Times its threads came on a CPU other than the one they last left (the scheduler moved them).",
	  .kind = FIG_COUNTER,
	  .src = SRC_COUNT,
	  .index = PMBPF_N_MIGRATIONS,
	  .fmt = FMT_COUNT,
	  .outputs = OUT_JSON | OUT_CSV | OUT_PROM | OUT_STAT,
	  .prom = "migrations_total",
	  .tests =
		  "test_record.py::test_migrations_credited test_threads.py::test_thread_migrations_are_its_own" },
	{ .name = "offcpu_ns",
	  .stat = "offcpu-time",
	  .label = "off-CPU time",
	  .unit = "ns",
	  .help = "Time its threads were switched out (a new thread: waiting for its first run), credited when they run again: offcpu.sleep_ns + offcpu.blocked_ns + runq.total_ns + offcpu.other_ns.",
	  .kind = FIG_COUNTER,
	  .src = SRC_COUNT,
	  .index = PMBPF_N_OFFCPU_NS,
	  .fmt = FMT_NS,
	  .outputs = OUT_JSON | OUT_CSV | OUT_PROM | OUT_STAT,
	  .prom = "offcpu_seconds_total",
	  .tests =
		  "test_cgroup.py::test_offcpu_time_of_a_sleeper test_threads.py::test_threads_offcpu_time_is_their_own test_timesplit.py::test_split_at_rest" },
	{ .name = "offcpu.sleep_ns",
	  .stat = "offcpu-sleep",
	  .label = "  asleep (S)",
	  .unit = "ns",
	  .help = "Off-CPU time asleep by choice: from a switch-out in state S (TASK_INTERRUPTIBLE), or idle (D with TASK_NOLOAD: kernel threads waiting for work, /proc's I), to its wakeup.",
	  .kind = FIG_COUNTER,
	  .src = SRC_COUNT,
	  .index = PMBPF_N_OFFCPU_SLEEP_NS,
	  .fmt = FMT_NS,
	  .outputs = OUT_JSON | OUT_CSV | OUT_PROM | OUT_STAT,
	  .prom = "offcpu_state_seconds_total",
	  .prom_labels = "state=\"sleep\"",
	  .tests = "test_timesplit.py::test_split_at_rest test_timesplit.py::test_split_busy_host "
		   "test_timesplit.py::test_stat_prints_the_split" },
	{ .name = "offcpu.blocked_ns",
	  .stat = "offcpu-blocked",
	  .label = "  blocked (D)",
	  .unit = "ns",
	  .help = "Off-CPU time blocked: from a switch-out in state D (TASK_UNINTERRUPTIBLE without TASK_NOLOAD: I/O, locks, a vfork parent) to its wakeup.",
	  .kind = FIG_COUNTER,
	  .src = SRC_COUNT,
	  .index = PMBPF_N_OFFCPU_BLOCKED_NS,
	  .fmt = FMT_NS,
	  .outputs = OUT_JSON | OUT_CSV | OUT_PROM | OUT_STAT,
	  .prom = "offcpu_state_seconds_total",
	  .prom_labels = "state=\"blocked\"",
	  .tests = "test_timesplit.py::test_split_at_rest test_timesplit.py::test_split_busy_host "
		   "test_timesplit.py::test_stat_prints_the_split" },
	{ .name = "offcpu.other_ns",
	  .stat = "offcpu-other",
	  .label = "  stopped, other",
	  .unit = "ns",
	  .help = "The rest of off-CPU time, so that offcpu_ns = offcpu.sleep_ns + offcpu.blocked_ns + runq.total_ns + this: stopped or traced (T, t), parked, and waits whose wakeup was not seen.",
	  .kind = FIG_COUNTER,
	  .src = SRC_COUNT,
	  .index = PMBPF_N_OFFCPU_OTHER_NS,
	  .fmt = FMT_NS,
	  .outputs = OUT_JSON | OUT_CSV | OUT_PROM | OUT_STAT,
	  .prom = "offcpu_state_seconds_total",
	  .prom_labels = "state=\"other\"",
	  .tests = "test_timesplit.py::test_split_adds_up test_timesplit.py::test_stopped_is_other "
		   "test_timesplit.py::test_stat_prints_the_split" },
	{ .name = "runq.count",
	  .unit = "waits",
	  .help = "Run-queue waits: wakeup (or preemption) to running.",
	  .kind = FIG_COUNTER,
	  .src = SRC_COUNT,
	  .index = PMBPF_N_RUNQ_COUNT,
	  .fmt = FMT_COUNT,
	  .outputs = OUT_JSON | OUT_CSV | OUT_STAT,
	  .tests =
		  "test_cgroup.py::test_runq_count_equals_wakeups test_cgroup.py::test_runq_latency_contention_vs_alone test_threads.py::test_threads_credited_their_own_work" },
	{ .name = "runq.total_ns",
	  .stat = "runq-wait",
	  .label = "  waiting for a CPU",
	  .unit = "ns",
	  .help = "Total length of the run-queue waits.",
	  .kind = FIG_COUNTER,
	  .src = SRC_COUNT,
	  .index = PMBPF_N_RUNQ_TOTAL_NS,
	  .fmt = FMT_NS,
	  .outputs = OUT_JSON | OUT_CSV | OUT_STAT,
	  .tests =
		  "test_cgroup.py::test_runq_latency_contention_vs_alone test_threads.py::test_threads_credited_their_own_work test_delays.py::test_victim_delay_goes_to_antagonist" },
	{ .name = "runq.avg_ns",
	  .unit = "ns",
	  .help = "Mean run-queue wait.",
	  .kind = FIG_GAUGE,
	  .src = SRC_DERIVED,
	  .index = DER_RUNQ_AVG_NS,
	  .fmt = FMT_NS,
	  .outputs = OUT_JSON | OUT_CSV,
	  .tests =
		  "test_cgroup.py::test_runq_latency_contention_vs_alone unit/test_metrics.c::test_row" },
	{ .name = "runq.p50_ns",
	  .unit = "ns",
	  .help = "Median run-queue wait: the upper bound of its histogram slot.",
	  .kind = FIG_GAUGE,
	  .src = SRC_DERIVED,
	  .index = DER_RUNQ_P50_NS,
	  .fmt = FMT_NS,
	  .outputs = OUT_JSON | OUT_CSV,
	  .tests = "test_cgroup.py::test_runq_latency_contention_vs_alone" },
	{ .name = "runq.p99_ns",
	  .title = "RUNQp99us",
	  .top_title = "RUNQ-p99",
	  .label = "run-queue latency p99",
	  .unit = "ns",
	  .help = "99th percentile run-queue wait: the upper bound of its histogram slot.",
	  .kind = FIG_GAUGE,
	  .src = SRC_DERIVED,
	  .index = DER_RUNQ_P99_NS,
	  .fmt = FMT_NS,
	  .outputs = ROWS | OUT_TOP | OUT_STAT,
	  .top_prio = 64,
	  .tests = "test_cgroup.py::test_runq_latency_contention_vs_alone" },
	{ .name = "runq.max_ns",
	  .unit = "ns",
	  .help = "Longest run-queue wait in the interval.",
	  .kind = FIG_GAUGE,
	  .src = SRC_DERIVED,
	  .index = DER_RUNQ_MAX_NS,
	  .fmt = FMT_NS,
	  .outputs = OUT_JSON | OUT_CSV | OUT_STAT,
	  .tests =
		  "test_record.py::test_runq_max_is_each_intervals_own test_cgroup.py::test_runq_latency_contention_vs_alone" },
	{ .name = "runq.hist_log2_us",
	  .unit = "waits",
	  .help = "Run-queue waits by log2 slot of their length: slot 0 < 2 us, slot k [2^k, 2^(k+1)) us.",
	  .kind = FIG_COUNTER,
	  .src = SRC_RUNQ_HIST,
	  .fmt = FMT_HIST,
	  .outputs = OUT_JSON | OUT_PROM,
	  .prom = "runqueue_latency_seconds",
	  .tests =
		  "test_cgroup.py::test_runq_latency_contention_vs_alone test_record.py::test_runq_max_is_each_intervals_own" },
	{ .name = "nr_periods",
	  .unit = "periods",
	  .help = "cgroup: CPU quota enforcement periods in which it had runnable tasks (cpu.stat nr_periods; cgroup2 with the cpu controller and a cpu.max quota, else absent).",
	  .kind = FIG_COUNTER,
	  .src = SRC_CGROUP,
	  .index = CGS_NR_PERIODS,
	  .fmt = FMT_COUNT,
	  .outputs = OUT_JSON | OUT_CSV | OUT_PROM,
	  .prom = "cpu_periods_total",
	  .prom_cgroup_only = true,
	  .tests = "vm/guest/throttle.sh::check_pmbpf_throttle unit/test_cgroup.c::test_cpu_stat" },
	{ .name = "nr_throttled",
	  .unit = "periods",
	  .help = "cgroup: periods in which it used up its CPU quota and was throttled (cpu.stat nr_throttled).",
	  .kind = FIG_COUNTER,
	  .src = SRC_CGROUP,
	  .index = CGS_NR_THROTTLED,
	  .fmt = FMT_COUNT,
	  .outputs = OUT_JSON | OUT_CSV | OUT_PROM,
	  .prom = "cpu_throttled_periods_total",
	  .prom_cgroup_only = true,
	  .tests = "vm/guest/throttle.sh::check_pmbpf_throttle unit/test_cgroup.c::test_cpu_stat" },
	{ .name = "throttled_ns",
	  .top_title = "THROTL/s",
	  .unit = "ns",
	  .help = "cgroup: time its CPU quota held it back (cpu.stat throttled_usec: summed over the CPUs its runqueues were throttled on); a throttled task is runnable, so this time is in its threads' run-queue wait too.",
	  .kind = FIG_COUNTER,
	  .src = SRC_CGROUP,
	  .index = CGS_THROTTLED_NS,
	  .fmt = FMT_NS,
	  .outputs = OUT_JSON | OUT_CSV | OUT_PROM | OUT_TOP,
	  .prom = "cpu_throttled_seconds_total",
	  .prom_cgroup_only = true,
	  .width = 8,
	  .top_prio = 18,
	  .tests = "vm/guest/throttle.sh::check_pmbpf_throttle unit/test_cgroup.c::test_cpu_stat" },
	{ .name = "psi.cpu.some_ns",
	  .top_title = "PSI-CPU/s",
	  .unit = "ns",
	  .help = "cgroup: time some of its tasks waited for a CPU (cpu.pressure some total, PSI).",
	  .kind = FIG_COUNTER,
	  .src = SRC_CGROUP,
	  .index = CGS_PSI_CPU_SOME_NS,
	  .fmt = FMT_NS,
	  .outputs = OUT_JSON | OUT_CSV | OUT_PROM | OUT_TOP,
	  .prom = "pressure_seconds_total",
	  .prom_labels = "resource=\"cpu\",kind=\"some\"",
	  .prom_cgroup_only = true,
	  .width = 9,
	  .top_prio = 17,
	  .tests =
		  "test_psi.py::test_cpu_pressure_against_the_cgroups_file unit/test_cgroup.c::test_pressure" },
	{ .name = "psi.cpu.full_ns",
	  .unit = "ns",
	  .help = "cgroup: time all of its non-idle tasks waited for a CPU at once (cpu.pressure full total).",
	  .kind = FIG_COUNTER,
	  .src = SRC_CGROUP,
	  .index = CGS_PSI_CPU_FULL_NS,
	  .fmt = FMT_NS,
	  .outputs = OUT_JSON | OUT_CSV | OUT_PROM,
	  .prom = "pressure_seconds_total",
	  .prom_labels = "resource=\"cpu\",kind=\"full\"",
	  .prom_cgroup_only = true,
	  .tests =
		  "test_psi.py::test_cpu_pressure_against_the_cgroups_file unit/test_cgroup.c::test_pressure" },
	{ .name = "psi.memory.some_ns",
	  .top_title = "PSI-MEM/s",
	  .unit = "ns",
	  .help = "cgroup: time some of its tasks waited for memory (reclaim, refaults, swap-in: memory.pressure some total).",
	  .kind = FIG_COUNTER,
	  .src = SRC_CGROUP,
	  .index = CGS_PSI_MEMORY_SOME_NS,
	  .fmt = FMT_NS,
	  .outputs = OUT_JSON | OUT_CSV | OUT_PROM | OUT_TOP,
	  .prom = "pressure_seconds_total",
	  .prom_labels = "resource=\"memory\",kind=\"some\"",
	  .prom_cgroup_only = true,
	  .width = 9,
	  .top_prio = 16,
	  .tests =
		  "test_psi.py::test_cpu_pressure_against_the_cgroups_file unit/test_cgroup.c::test_pressure" },
	{ .name = "psi.memory.full_ns",
	  .unit = "ns",
	  .help = "cgroup: time all of its non-idle tasks waited for memory at once (memory.pressure full total).",
	  .kind = FIG_COUNTER,
	  .src = SRC_CGROUP,
	  .index = CGS_PSI_MEMORY_FULL_NS,
	  .fmt = FMT_NS,
	  .outputs = OUT_JSON | OUT_CSV | OUT_PROM,
	  .prom = "pressure_seconds_total",
	  .prom_labels = "resource=\"memory\",kind=\"full\"",
	  .prom_cgroup_only = true,
	  .tests =
		  "test_psi.py::test_cpu_pressure_against_the_cgroups_file unit/test_cgroup.c::test_pressure" },
	{ .name = "psi.io.some_ns",
	  .top_title = "PSI-IO/s",
	  .unit = "ns",
	  .help = "cgroup: time some of its tasks waited for block I/O (io.pressure some total).",
	  .kind = FIG_COUNTER,
	  .src = SRC_CGROUP,
	  .index = CGS_PSI_IO_SOME_NS,
	  .fmt = FMT_NS,
	  .outputs = OUT_JSON | OUT_CSV | OUT_PROM | OUT_TOP,
	  .prom = "pressure_seconds_total",
	  .prom_labels = "resource=\"io\",kind=\"some\"",
	  .prom_cgroup_only = true,
	  .width = 8,
	  .top_prio = 15,
	  .tests =
		  "test_psi.py::test_cpu_pressure_against_the_cgroups_file unit/test_cgroup.c::test_pressure" },
	{ .name = "psi.io.full_ns",
	  .unit = "ns",
	  .help = "cgroup: time all of its non-idle tasks waited for block I/O at once (io.pressure full total).",
	  .kind = FIG_COUNTER,
	  .src = SRC_CGROUP,
	  .index = CGS_PSI_IO_FULL_NS,
	  .fmt = FMT_NS,
	  .outputs = OUT_JSON | OUT_CSV | OUT_PROM,
	  .prom = "pressure_seconds_total",
	  .prom_labels = "resource=\"io\",kind=\"full\"",
	  .prom_cgroup_only = true,
	  .tests =
		  "test_psi.py::test_cpu_pressure_against_the_cgroups_file unit/test_cgroup.c::test_pressure" },
	{ .name = "coverage",
	  .title = "COV%",
	  .unit = "ratio",
	  .help = "The lowest coverage of its counting events (1: none multiplexed); the table shows it in percent.",
	  .kind = FIG_GAUGE,
	  .src = SRC_DERIVED,
	  .index = DER_MIN_COVERAGE,
	  .fmt = FMT_SHARE,
	  .outputs = OUT_TABLE,
	  .width = 5,
	  .tests = "vm/guest/arm64.sh::check_pmbpf_multiplex unit/test_metrics.c::test_coverage" },
};

static const struct self_figure self_figures[] = {
	{ "pmbpf_info", "pmbpf_info", "info", "Version and the sched_switch attach flavour in use.",
	  FIG_GAUGE, SELF_SERVE, SERVE_INFO, OUT_PROM, false, "version, attach" },
	{ "pmbpf_cpus", "pmbpf_cpus", "CPUs", "Online CPUs counted.", FIG_GAUGE, SELF_SERVE,
	  SERVE_CPUS, OUT_PROM },
	{ "pmbpf_pmu_available", "pmbpf_pmu_available", "bool",
	  "1 when this host has a hardware PMU (a hardware cycles counter opens), whatever events were requested: doctor's pmu.",
	  FIG_GAUGE, SELF_SERVE, SERVE_PMU, OUT_PROM },
	{ "pmbpf_event_supported", "pmbpf_event_supported", "bool",
	  "1 when the event is counting on this host; state says why not.", FIG_GAUGE, SELF_SERVE,
	  SERVE_EVENT_SUPPORTED, OUT_PROM, false, "event, class, state" },
	{ "pmbpf_metric_supported", "pmbpf_metric_supported", "bool",
	  "1 when the -M metric is computed on this host: its CPU has a definition and its events count.",
	  FIG_GAUGE, SELF_SERVE, SERVE_METRIC_SUPPORTED, OUT_PROM, false, "metric" },
	{ "pmbpf_system_perf_events_total", "pmbpf_system_perf_events_total", "events",
	  "Perf event counts of all CPUs (every process and idle), scaled for multiplexing; clock events in pmbpf_system_perf_event_seconds_total.",
	  FIG_COUNTER, SELF_SERVE, SERVE_SYSTEM_EVENTS, OUT_PROM, false, "event" },
	{ "pmbpf_system_perf_event_seconds_total", "pmbpf_system_perf_event_seconds_total", "ns",
	  "Clock events (cpu-clock, task-clock) of all CPUs (every process and idle), scaled for multiplexing, in seconds.",
	  FIG_COUNTER, SELF_SERVE, SERVE_SYSTEM_EVENT_SECONDS, OUT_PROM, false, "event" },
	{ "pmbpf_idle_cpu_seconds_total", "pmbpf_idle_cpu_seconds_total", "ns",
	  "Time the CPUs ran their idle task (not counted in any cgroup).", FIG_COUNTER, SELF_SERVE,
	  SERVE_IDLE, OUT_PROM },
	{ "pmbpf_bpf_program_run_seconds_total", "pmbpf_bpf_program_run_seconds_total", "ns",
	  "Time spent in each BPF program (needs kernel.bpf_stats_enabled=1).", FIG_COUNTER,
	  SELF_SERVE, SERVE_PROG_RUN_TIME, OUT_PROM, false, "program" },
	{ "pmbpf_bpf_program_runs_total", "pmbpf_bpf_program_runs_total", "runs",
	  "Runs of each BPF program (needs kernel.bpf_stats_enabled=1).", FIG_COUNTER, SELF_SERVE,
	  SERVE_PROG_RUNS, OUT_PROM, false, "program" },
	{ "pmbpf_bpf_program_recursion_misses_total", "pmbpf_bpf_program_recursion_misses_total",
	  "runs", "Runs of each BPF program skipped because it was already running on that CPU.",
	  FIG_COUNTER, SELF_SERVE, SERVE_PROG_RECURSION, OUT_PROM, false, "program" },
	{ "pmbpf_bpf_stats_enabled", "pmbpf_bpf_stats_enabled", "bool",
	  "1 when kernel.bpf_stats_enabled=1, so that program run time and runs are counted.",
	  FIG_GAUGE, SELF_SERVE, SERVE_BPF_STATS, OUT_PROM },
	{ "map_entries", "pmbpf_map_entries", "entries",
	  "Process entries in the kernel counts map.", FIG_GAUGE, SELF_MAP_ENTRIES, 0,
	  OUT_JSON | OUT_PROM },
	{ "map_capacity", "pmbpf_map_capacity", "entries",
	  "Size of the kernel counts map (--max-procs).", FIG_GAUGE, SELF_MAP_CAPACITY, 0,
	  OUT_JSON | OUT_PROM },
	{ "map_memory_bytes", "pmbpf_bpf_map_memory_bytes", "bytes",
	  "Kernel memory of pmbpf's BPF maps (memlock), charged to its memory cgroup.", FIG_GAUGE,
	  SELF_MAP_BYTES, 0, OUT_JSON | OUT_PROM },
	{ "overflow_credits", "pmbpf_overflow_credits_total", "credits",
	  "Credits that went to the overflow entry because the counts map was full.", FIG_COUNTER,
	  SELF_STAT, PMBPF_STAT_OVERFLOW, OUT_JSON | OUT_PROM | OUT_TABLE },
	{ "exit_records", "pmbpf_exit_records_total", "records",
	  "Exit records sent through the ring buffer.", FIG_COUNTER, SELF_STAT, PMBPF_STAT_EXITS,
	  OUT_JSON | OUT_PROM },
	{ "exit_records_dropped", "pmbpf_exit_records_dropped_total", "records",
	  "Exit records the ring buffer had no room for (more than about 2,000 exits within the 100 ms between two drains): those processes are reported all the same, exited, from their map entries at the next read.",
	  FIG_COUNTER, SELF_STAT, PMBPF_STAT_EXITS_DROPPED, OUT_JSON | OUT_PROM | OUT_TABLE },
	{ "exit_records_lost", "pmbpf_exit_records_lost_total", "records",
	  "Exits whose final counts are lost: the record was dropped and the map entry was gone too.",
	  FIG_COUNTER, SELF_STAT, PMBPF_STAT_EXITS_LOST, OUT_JSON | OUT_PROM | OUT_TABLE },
	{ "read_errors", "pmbpf_read_errors_total", "reads", "Failed counter reads in BPF.",
	  FIG_COUNTER, SELF_STAT, PMBPF_STAT_READ_ERRORS, OUT_JSON | OUT_PROM },
	{ "flushes", "pmbpf_flushes_total", "flushes",
	  "Flushes: every CPU made to credit its running task before a read.", FIG_COUNTER,
	  SELF_STAT, PMBPF_STAT_FLUSHES, OUT_JSON | OUT_PROM },
	{ "wakeups", "pmbpf_sched_wakeups_total", "calls",
	  "sched_wakeup and sched_wakeup_new calls seen (only where programs run at wakeups).",
	  FIG_COUNTER, SELF_WAKEUPS, PMBPF_STAT_WAKEUPS, OUT_JSON | OUT_PROM },
	{ "waits_unmatched", "pmbpf_waits_unmatched_total", "waits",
	  "Run-queue and off-CPU waits dropped: the task was not the one expected.", FIG_COUNTER,
	  SELF_STAT, PMBPF_STAT_WAIT_UNMATCHED, OUT_JSON | OUT_PROM },
	{ "spans_unmatched", "pmbpf_spans_unmatched_total", "spans",
	  "Monitored spans whose switch-in the kernel did not report (credited the scheduler's run time).",
	  FIG_COUNTER, SELF_STAT, PMBPF_STAT_SPAN_UNMATCHED, OUT_JSON | OUT_PROM },
	{ "delays_dropped", "pmbpf_delays_dropped_total", "credits",
	  "--delays: run-queue delay credits lost because the delays map was full.", FIG_COUNTER,
	  SELF_STAT, PMBPF_STAT_DELAY_DROPPED, OUT_JSON | OUT_PROM },
	{ "oncpu_unattributed_ns", "pmbpf_oncpu_unattributed_seconds_total", "ns",
	  "CPU time in monitored spans that the scheduler charged to no task (steal time, the estimate at a flush): all rows' oncpu_ns, idle included, plus this make CPUs x interval.",
	  FIG_COUNTER, SELF_STAT, PMBPF_STAT_ONCPU_GAP_NS, OUT_JSON | OUT_PROM },
	{ "cpu_offline_ns", "pmbpf_cpu_offline_seconds_total", "ns",
	  "CPU hotplug: time CPUs spent offline (their run queue's clock from the deactivation as they went down to their first switch once back), counted at that switch; the idle row gets none of it.",
	  FIG_COUNTER, SELF_STAT, PMBPF_STAT_OFFLINE_NS, OUT_JSON | OUT_PROM },
	{ "vanished", "pmbpf_vanished_processes_total", "processes",
	  "Map entries that disappeared without an exit record.", FIG_COUNTER, SELF_VANISHED, 0,
	  OUT_JSON | OUT_PROM },
	{ "late_intervals", "pmbpf_late_intervals_total", "intervals",
	  "Intervals that took more than 1.5 times the one asked for (-i): collecting, writing or the host fell behind, as in an exit storm. Such an interval is longer; none is skipped or squeezed to catch up.",
	  FIG_COUNTER, SELF_LATE, 0, OUT_JSON | OUT_PROM },
	{ "poll_ms", "pmbpf_last_collection_seconds", "ns", "Time the last collection took.",
	  FIG_GAUGE, SELF_POLL_NS, 0, OUT_JSON | OUT_PROM, true },
	{ "thread_fold", "pmbpf_thread_fold", "bool",
	  "1: the counts map is shared (not per CPU); switches credit each thread's task storage, folded into it at the thread's exit, at a cgroup move and before each read (the threads that ran, from per-CPU lists; a task iterator before Linux 6.2). 0: switches credit a per-CPU counts map (raw_tp flavour, --thread-fold off; docs/kernels.md).",
	  FIG_GAUGE, SELF_THREAD_FOLD, 0, OUT_JSON | OUT_PROM },
	{ "ran_list_full", "pmbpf_ran_list_full_total", "folds",
	  "Threads folded into the shared counts map at a switch because their CPU's list of threads that ran since the last read was full (4,096 per CPU): each costs the switch the fold's atomic adds.",
	  FIG_COUNTER, SELF_STAT, PMBPF_STAT_RAN_FULL, OUT_JSON | OUT_PROM },
	{ "pmbpf_collections_total", "pmbpf_collections_total", "collections",
	  "Collections (reads of the kernel maps) done.", FIG_COUNTER, SELF_SERVE,
	  SERVE_COLLECTIONS, OUT_PROM },
	{ "pmbpf_collection_errors_total", "pmbpf_collection_errors_total", "collections",
	  "Collections that failed.", FIG_COUNTER, SELF_SERVE, SERVE_COLLECTION_ERRORS, OUT_PROM },
	{ "pmbpf_collection_seconds_total", "pmbpf_collection_seconds_total", "s",
	  "Time spent collecting.", FIG_COUNTER, SELF_SERVE, SERVE_COLLECTION_TIME, OUT_PROM },
	{ "pmbpf_last_collection_timestamp_seconds", "pmbpf_last_collection_timestamp_seconds", "s",
	  "When the last collection ended.", FIG_GAUGE, SELF_SERVE, SERVE_LAST_COLLECTION,
	  OUT_PROM },
	{ "pmbpf_interval_seconds", "pmbpf_interval_seconds", "s",
	  "Length of the last collection interval.", FIG_GAUGE, SELF_SERVE, SERVE_INTERVAL,
	  OUT_PROM },
	{ "pmbpf_exported_processes", "pmbpf_exported_processes", "processes",
	  "Processes with series (at most 2 x --top-k: the top K and lingering ones).", FIG_GAUGE,
	  SELF_SERVE, SERVE_EXPORTED_PROCS, OUT_PROM },
	{ "pmbpf_exported_cgroups", "pmbpf_exported_cgroups", "cgroups", "Cgroups with series.",
	  FIG_GAUGE, SELF_SERVE, SERVE_EXPORTED_CGROUPS, OUT_PROM },
	{ "pmbpf_tracked_processes", "pmbpf_tracked_processes", "processes",
	  "Processes tracked for the CPU ranking.", FIG_GAUGE, SELF_SERVE, SERVE_TRACKED_PROCS,
	  OUT_PROM },
	{ "pmbpf_exported_threads", "pmbpf_exported_threads", "threads",
	  "Threads with series (--threads; at most 2 x --top-k: the top K and lingering ones).",
	  FIG_GAUGE, SELF_SERVE, SERVE_EXPORTED_THREADS, OUT_PROM },
	{ "pmbpf_tracked_threads", "pmbpf_tracked_threads", "threads",
	  "Threads tracked for the CPU ranking (--threads).", FIG_GAUGE, SELF_SERVE,
	  SERVE_TRACKED_THREADS, OUT_PROM },
	{ "pmbpf_http_requests_total", "pmbpf_http_requests_total", "requests",
	  "HTTP requests answered, by status class.", FIG_COUNTER, SELF_SERVE, SERVE_HTTP_REQUESTS,
	  OUT_PROM, false, "code" },
	{ "process_resident_memory_bytes", "process_resident_memory_bytes", "bytes",
	  "Resident memory of pmbpf.", FIG_GAUGE, SELF_SERVE, SERVE_RSS, OUT_PROM },
	{ "process_virtual_memory_bytes", "process_virtual_memory_bytes", "bytes",
	  "Virtual memory of pmbpf.", FIG_GAUGE, SELF_SERVE, SERVE_VSIZE, OUT_PROM },
	{ "process_cpu_seconds_total", "process_cpu_seconds_total", "s",
	  "CPU time of pmbpf (user and system).", FIG_COUNTER, SELF_SERVE, SERVE_CPU_TIME,
	  OUT_PROM },
	{ "process_open_fds", "process_open_fds", "fds", "Open file descriptors of pmbpf.",
	  FIG_GAUGE, SELF_SERVE, SERVE_FDS, OUT_PROM },
	{ "process_start_time_seconds", "process_start_time_seconds", "s",
	  "When pmbpf started (Unix time).", FIG_GAUGE, SELF_SERVE, SERVE_START_TIME, OUT_PROM },
	{ "pmbpf_exposition_samples", "pmbpf_exposition_samples", "samples",
	  "Samples in this exposition, this one included.", FIG_GAUGE, SELF_SERVE, SERVE_SAMPLES,
	  OUT_PROM },
};

_Static_assert(PMBPF_STAT_NR == 13, "a new BPF statistic needs its entry in self_figures[]");

/*
 * --delays: not a figure of one row but of a pair of them, so outside
 * figures[]: JSON's "delayed_by" and "delayed" lists, top's delay line and
 * the Prometheus family of (cgroup, by) pairs (docs/delays.md).
 */
static const struct figure delay_figure = {
	.name = "delayed_by",
	.title = "DELAYED-BY",
	.unit = "ns",
	.help = "Run-queue waiting time of the cgroup's processes while processes of cgroup \"by\" ran on their CPU (--delays).",
	.kind = FIG_COUNTER,
	.fmt = FMT_NS,
	.outputs = OUT_JSON | OUT_PROM | OUT_TOP,
	.prom = "runq_delay_seconds_total",
	.prom_labels = "by",
	.prom_cgroup_only = true,
	.tests =
		"test_delays.py::test_victim_delay_goes_to_antagonist test_delays.py::test_weights_split_delay_2_to_1 test_delays.py::test_other_cpu_no_attribution",
};

const struct figure *catalog__delay(void)
{
	return &delay_figure;
}

static const struct prom_family cpi_families[] = {
	[CPI_FAM_SIGNAL_INFO] = { "pmbpf_cpi_signal_info", false, "signal,window,k", "info",
				  "What the CPI outliers judge: signal cpi (cycles / instructions) where both count, else runq_avg_ns (the mean run-queue wait: scheduler evidence alone, no PMU); window and k: --cpi-window and --cpi-k.",
				  FIG_GAUGE },
	[CPI_FAM_OUTLIER] = { "pmbpf_cgroup_cpi_outlier", true, "", "bool",
			      "1 when the signal of the cgroup's own processes was above its threshold for k intervals in a row up to the last one, else 0; cgroups whose baseline holds 20 samples.",
			      FIG_GAUGE },
	[CPI_FAM_SIGNAL] = { "pmbpf_cgroup_cpi_signal", true, "", "ratio or seconds",
			     "The last interval's signal of the cgroup's own processes: the CPI, or the mean run-queue wait in seconds; none where it used less than 0.05 CPU.",
			     FIG_GAUGE },
	[CPI_FAM_BASELINE_MEAN] = { "pmbpf_cgroup_cpi_baseline_mean", true, "", "ratio or seconds",
				    "Mean of the signal over the cgroup's last --cpi-window normal intervals (outliers left out).",
				    FIG_GAUGE },
	[CPI_FAM_THRESHOLD] = { "pmbpf_cgroup_cpi_threshold", true, "", "ratio or seconds",
				"The baseline's mean + 2 x max(sd, 1% of the mean): k intervals above it make an outlier.",
				FIG_GAUGE },
	[CPI_FAM_SUSPECT] = { "pmbpf_cgroup_cpi_suspect_correlation", true, "suspect", "ratio",
			      "For each outlier, its suspects (at most 5): Pearson r of the suspect cgroup's CPU use with the outlier's signal over the window, positive only.",
			      FIG_GAUGE },
	[CPI_FAM_SUSPECT_DELAY] = { "pmbpf_cgroup_cpi_suspect_delay_seconds", true, "suspect",
				    "seconds",
				    "For each outlier's suspect: the run-queue wait of the outlier's own processes while the suspect's ran on their CPU, in the last interval (who delayed whom; absent without it).",
				    FIG_GAUGE },
};

_Static_assert(sizeof(cpi_families) / sizeof(cpi_families[0]) == CPI_FAM_NR,
	       "every enum cpi_family has its entry");

const struct prom_family *catalog__cpi(size_t *nr)
{
	*nr = CPI_FAM_NR;
	return cpi_families;
}

const struct figure *catalog__figures(size_t *nr)
{
	*nr = sizeof(figures) / sizeof(figures[0]);
	return figures;
}

const struct self_figure *catalog__self(size_t *nr)
{
	*nr = sizeof(self_figures) / sizeof(self_figures[0]);
	return self_figures;
}

void catalog__each(const struct snapshot *snap, unsigned int out,
		   void (*fn)(const struct figure *fd, int i, void *ctx), void *ctx)
{
	size_t k;
	int i, n;

	for (k = 0; k < sizeof(figures) / sizeof(figures[0]); k++) {
		if (!(figures[k].outputs & out))
			continue;
		n = figure__instances(&figures[k], snap);
		for (i = 0; i < n; i++)
			if (figure__applies(&figures[k], snap, i))
				fn(&figures[k], i, ctx);
	}
}

static const struct figure *find(enum fig_src src, int index)
{
	size_t i;

	for (i = 0; i < sizeof(figures) / sizeof(figures[0]); i++)
		if (figures[i].src == src && figures[i].index == index)
			return &figures[i];
	return NULL;
}

const struct figure *catalog__named(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(figures) / sizeof(figures[0]); i++)
		if (!strcmp(figures[i].name, name))
			return &figures[i];
	return NULL;
}

const struct figure *catalog__count(enum pmbpf_count c)
{
	return find(SRC_COUNT, c);
}

const struct figure *catalog__derived(enum fig_derived d)
{
	return find(SRC_DERIVED, d);
}

static const char *const out_names[FIG_OUT_NR] = { "table", "json", "csv",   "prometheus",
						   "top",   "stat", "system" };

const char *fig_out__name(int i)
{
	return i >= 0 && i < FIG_OUT_NR ? out_names[i] : NULL;
}

double figure__value(const struct figure *fd, const struct figures *f, const struct row_metrics *m,
		     int i)
{
	switch (fd->src) {
	case SRC_COUNT:
		return (double)f->n[fd->index];
	case SRC_DERIVED:
		return m->d[fd->index];
	case SRC_EVENT:
		return m->count[i];
	case SRC_EVENT_RAW:
		return (double)f->ev[i].value;
	case SRC_EVENT_ENABLED:
		return (double)f->ev[i].enabled;
	case SRC_EVENT_RUNNING:
		return (double)f->ev[i].running;
	case SRC_EVENT_COVERAGE:
		return m->coverage[i];
	case SRC_MPKI:
		return m->mpki[i];
	case SRC_METRIC:
		return m->metric[i / METRIC_MAX_VALUES][i % METRIC_MAX_VALUES];
	case SRC_RUNQ_HIST:
		return (double)f->n[PMBPF_N_RUNQ_COUNT];
	case SRC_CGROUP:
		if (!m || !m->cgroup || !(m->cgroup->have & (1u << fd->index)))
			return NAN;
		return (double)m->cgroup->v[fd->index];
	}
	return NAN;
}

bool figure__of_row(const struct figure *fd, const struct row_metrics *m)
{
	return fd->src != SRC_CGROUP || (m && m->cgroup);
}

bool figure__integer(const struct figure *fd, const struct figures *f, int i, __u64 *v)
{
	switch (fd->src) {
	case SRC_COUNT:
		*v = f->n[fd->index];
		return true;
	case SRC_EVENT_RAW:
		*v = f->ev[i].value;
		return true;
	case SRC_EVENT_ENABLED:
		*v = f->ev[i].enabled;
		return true;
	case SRC_EVENT_RUNNING:
		*v = f->ev[i].running;
		return true;
	default:
		return false;
	}
}

bool figure__reading(const struct figure *fd)
{
	return fd->src == SRC_EVENT || fd->src == SRC_EVENT_RAW || fd->src == SRC_EVENT_ENABLED ||
	       fd->src == SRC_EVENT_RUNNING || fd->src == SRC_EVENT_COVERAGE;
}

bool figure__per_event(const struct figure *fd)
{
	return figure__reading(fd) || fd->src == SRC_MPKI;
}

int figure__instances(const struct figure *fd, const struct snapshot *snap)
{
	if (figure__per_event(fd))
		return snap->nr_events;
	if (fd->src == SRC_METRIC)
		return snap->metrics ? snap->metrics->nr * METRIC_MAX_VALUES : 0;
	return 1;
}

bool figure__applies(const struct figure *fd, const struct snapshot *snap, int i)
{
	const struct metric_use *mu;

	if (figure__reading(fd))
		return i < snap->nr_events;
	switch (fd->src) {
	case SRC_MPKI:
		return i < snap->nr_events && (snap->events[i].spec.kind & EVENT_MISS);
	case SRC_METRIC:
		if (!snap->metrics || i / METRIC_MAX_VALUES >= snap->metrics->nr)
			return false;
		mu = &snap->metrics->m[i / METRIC_MAX_VALUES];
		return metric_use__values(mu)[i % METRIC_MAX_VALUES] != NULL;
	default:
		return i == 0;
	}
}

bool figure__present(const struct figure *fd, const struct snapshot *snap)
{
	return fd->src != SRC_METRIC || snap->metrics;
}

/* An event of every kind in kinds is in snap's list (and counting, with counting). */
static bool have_kinds(const struct snapshot *snap, unsigned int kinds, bool counting)
{
	unsigned int seen = 0;
	int i;

	for (i = 0; i < snap->nr_events; i++)
		if (!counting || snap->events[i].state == EVENT_COUNTING)
			seen |= snap->events[i].spec.kind & kinds;
	return seen == kinds;
}

bool figure__asked(const struct figure *fd, const struct snapshot *snap, int i)
{
	if (!figure__applies(fd, snap, i))
		return false;
	/* a metric without a definition here never had its group added to the events */
	if (fd->src == SRC_METRIC)
		return snap->metrics->m[i / METRIC_MAX_VALUES].def;
	return have_kinds(snap, fd->needs, false);
}

bool figure__counting(const struct figure *fd, const struct snapshot *snap, int i)
{
	const struct metric_use *mu;
	int e;

	if (!figure__asked(fd, snap, i))
		return false;
	if (figure__per_event(fd)) {
		if (snap->events[i].state != EVENT_COUNTING)
			return false;
	} else if (fd->src == SRC_METRIC) {
		mu = &snap->metrics->m[i / METRIC_MAX_VALUES];
		for (e = mu->first; e < mu->first + mu->nr_events; e++)
			if (e >= snap->nr_events || snap->events[e].state != EVENT_COUNTING)
				return false;
	}
	return have_kinds(snap, fd->needs, true);
}

bool figure__ns(const struct figure *fd, const struct snapshot *snap, int i)
{
	if (fd->fmt == FMT_NS)
		return true;
	return fd->src == SRC_EVENT && i < snap->nr_events &&
	       (snap->events[i].spec.kind & EVENT_TIME);
}

int figure__instance(const struct figure *fd, const struct snapshot *snap, int i,
		     const char *part[2])
{
	const struct metric_use *mu;

	if (figure__per_event(fd)) {
		part[0] = snap->events[i].spec.name;
		return 1;
	}
	if (fd->src == SRC_METRIC) {
		mu = &snap->metrics->m[i / METRIC_MAX_VALUES];
		part[0] = mu->name;
		part[1] = metric_use__values(mu)[i % METRIC_MAX_VALUES];
		return 2;
	}
	return 0;
}

const char *figure__name(const struct figure *fd, const char *pattern, const struct snapshot *snap,
			 int i, char *buf, size_t len)
{
	const char *part[2] = { "", "" }, *fill[2], *p;
	char inst[96] = "";
	bool two;
	int n, k = 0;
	size_t o = 0;

	if (!pattern || !len)
		return NULL;
	n = figure__instance(fd, snap, i, part);
	if (n == 1 && fd->src == SRC_MPKI && (pattern == fd->title || pattern == fd->top_title))
		/* "LLC-load-misses" -> "LLC" in a title, whole in names */
		snprintf(inst, sizeof(inst), "%.*s", (int)strcspn(part[0], "-"), part[0]);
	else if (n == 2 && strchr(pattern, '.'))
		/* a JSON name nests the metric's values */
		snprintf(inst, sizeof(inst), "%s.%s", part[0], part[1]);
	else
		snprintf(inst, sizeof(inst), "%s", part[n == 2]);
	/* a pattern with two "%s" takes both parts: "%s %s" is "topdown retiring" */
	p = strstr(pattern, "%s");
	two = p && strstr(p + 2, "%s");
	fill[0] = two ? part[0] : inst;
	fill[1] = two ? part[1] : inst;
	for (p = pattern; *p && o + 1 < len; p++) {
		if (p[0] == '%' && p[1] == 's') {
			o += snprintf(buf + o, len - o, "%s", fill[k++ > 0]);
			if (o >= len)
				o = len - 1;
			p++;
			continue;
		}
		buf[o++] = *p;
	}
	buf[o] = '\0';
	return buf;
}

double self_figure__value(const struct self_figure *sf, const struct snapshot *snap)
{
	switch (sf->src) {
	case SELF_STAT:
		return (double)snap->stats[sf->index];
	case SELF_MAP_ENTRIES:
		return (double)snap->map_entries;
	case SELF_MAP_CAPACITY:
		return (double)snap->map_capacity;
	case SELF_MAP_BYTES:
		return (double)snap->map_bytes;
	case SELF_VANISHED:
		return (double)snap->vanished;
	case SELF_POLL_NS:
		return (double)snap->poll_ns;
	case SELF_LATE:
		return (double)snap->late_intervals;
	case SELF_THREAD_FOLD:
		return snap->thread_fold;
	case SELF_WAKEUPS:
		return snap->wakeup_progs ? (double)snap->stats[sf->index] : NAN;
	case SELF_SERVE:
		return NAN; /* not in a snapshot: serve's (prom.c) */
	}
	return NAN;
}
