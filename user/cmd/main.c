// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pmbpf: per-process and per-cgroup IPC, miss rates and CPU time from BPF. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "events.h"
#include "util.h"

static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static const struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} cmds[] = {
	{ "record", cmd_record, "print per-process figures every interval (table, JSON, CSV)" },
	{ "stat", cmd_stat, "run a command: totals of it and its children (table, JSON)" },
	{ "doctor", cmd_doctor, "check this host: BTF, cgroup2, capabilities, events, fallbacks" },
	{ "compare", cmd_compare, "compare two 'stat -r N -o json' files: regression or not" },
	{ "cpi", cmd_cpi, "CPI outliers per cgroup in 'record -b cgroup -o json', and suspects" },
#ifndef PMBPF_MINIMAL
	/* subcommands that need ncurses, libdw or libmicrohttpd */
	{ "serve", cmd_serve, "collect continuously, serve Prometheus metrics on /metrics" },
	{ "top", cmd_top, "interactive per-process and per-container view (ncurses)" },
	{ "profile", cmd_profile,
	  "stacks of a sampling event or off-CPU time: folded or SVG flame graph" },
#endif
	{ "list", cmd_list, "list event names" },
	{ "fields", cmd_fields, "list the figures of every output: name, unit, kind, meaning" },
	{ "version", cmd_version, "print the version" },
	{ "help", cmd_help, "this help" },
};

static int cmd_help(int argc, char **argv)
{
	size_t i;

	printf("Usage: pmbpf COMMAND [OPTIONS]   (pmbpf COMMAND --help for its options)\n\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		printf("  %-10s %s\n", cmds[i].name, cmds[i].help);
	return 0;
}

static int cmd_version(int argc, char **argv)
{
	printf("pmbpf %s\n", PMBPF_VERSION);
	return 0;
}

static const char list_usage[] =
	"Usage: pmbpf list [WORD]        event names of this host (filtered by WORD)\n"
	"       pmbpf list --attr LIST   the perf_event_attr each event of LIST opens with\n";

int cmd_list(int argc, char **argv)
{
	struct event_spec specs[PMBPF_MAX_EVENTS];
	struct events_error e;
	int i, n;

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("%s", list_usage);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--attr")) {
		if (argc != 3) {
			pr_err("list --attr takes one event list\n");
			return 2;
		}
		n = events__parse(argv[2], specs, PMBPF_MAX_EVENTS, &e);
		if (n < 0) {
			pr_err("%s\n", e.msg);
			return 2;
		}
		for (i = 0; i < n; i++)
			event__print_attr(stdout, &specs[i]);
		return 0;
	}
	for (i = 1; i < argc; i++)
		if (argv[i][0] == '-') {
			pr_err("list: unknown option '%s' (list takes -h, --attr LIST, or one word)\n",
			       argv[i]);
			return 2;
		}
	if (argc > 2) {
		pr_err("list takes at most one word, not %d: try 'pmbpf list --help'\n", argc - 1);
		return 2;
	}
	events__list(stdout, argc == 2 ? argv[1] : NULL);
	return 0;
}

int main(int argc, char **argv)
{
	size_t i;

	std_fds__reserve();
	/* Every subcommand's output, --help included: write errors are errors. */
	atexit(stdout__close);
	if (argc < 2)
		return cmd_record(argc, argv);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
		return cmd_help(argc, argv);
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version"))
		return cmd_version(argc, argv);
	if (argv[1][0] == '-')
		return cmd_record(argc, argv);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	pr_err("unknown command '%s'; try 'pmbpf help'\n", argv[1]);
	return 2;
}
