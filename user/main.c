// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pmbpf: per-process and per-cgroup IPC, miss rates and CPU time from BPF. */
#include <stdio.h>
#include <string.h>
#include "commands.h"
#include "events.h"

static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static const struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} cmds[] = {
	{ "record", cmd_record, "print per-process figures every interval (table, JSON, CSV)" },
	{ "stat", cmd_stat, "run a command: totals of it and its children (table, JSON)" },
	{ "compare", cmd_compare, "compare two 'stat -r N -o json' files: regression or not" },
#ifndef PMBPF_MINIMAL
	/* subcommands that need ncurses, libdw or libmicrohttpd */
	{ "serve", cmd_serve, "collect continuously, serve Prometheus metrics on /metrics" },
	{ "doctor", cmd_doctor, "check this host: BTF, cgroup2, capabilities, events, fallbacks" },
	{ "top", cmd_top, "interactive per-process and per-container view (ncurses)" },
	{ "profile", cmd_profile,
	  "stacks of a sampling event or off-CPU time: folded or SVG flame graph" },
#endif
	{ "list", cmd_list, "list event names" },
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

int cmd_list(int argc, char **argv)
{
	events__print_names(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	size_t i;

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
	fprintf(stderr, "pmbpf: unknown command '%s'; try 'pmbpf help'\n", argv[1]);
	return 2;
}
