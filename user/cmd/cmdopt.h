/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A command's options, written once. One table gives getopt_long() its long
 * options and its short-option string, and --help its option lines, so the
 * three cannot drift apart.
 */
#ifndef __PMBPF_CMDOPT_H
#define __PMBPF_CMDOPT_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

/* The first value of an option without a short letter. */
#define CMDOPT_LONG_ONLY 256
/* At most this many options in one table. */
#define CMDOPT_MAX 32

struct cmdopt {
	/*
	 * What getopt_long() returns for it. Below CMDOPT_LONG_ONLY it is also
	 * the short option (a letter or digit); from it on, the option is long only.
	 */
	int val;
	const char *name; /* the long option, without "--" */
	/*
	 * Its argument's placeholder ("LIST"); NULL: it takes none. "[=HZ]": an
	 * optional argument, of a long-only option (given as --name=HZ).
	 */
	const char *arg;
	const char *help; /* one line; "\n" starts another, indented under it */
};

struct cmdopts {
	const char *cmd; /* "record": for messages */
	/* The "Usage:" lines and the description, each line ending in "\n". */
	const char *head;
	const struct cmdopt *opts; /* ends with an entry whose name is NULL */
	const char *tail; /* after the options, or NULL */
	/*
	 * Options after operands too (GNU order). Default: the first operand
	 * ends the options ('+'), so that `pmbpf stat -- CMD -v` leaves -v to CMD.
	 */
	bool permute;
};

/* The entry every command has: { CMDOPT_HELP }, */
#define CMDOPT_HELP 'h', "help", NULL, "this help"

/* What getopt_long() takes, built from a table. */
struct cmdopt_getopt {
	struct option longs[CMDOPT_MAX + 1];
	char shorts[1 + 2 * CMDOPT_MAX + 1];
	bool built; /* by cmdopt__next()'s first call */
	bool bad; /* the table is wrong (said): no option is read */
};

/*
 * Whether a table is well formed: names of [a-z0-9-], short options that are
 * letters or digits, no name, letter or value twice, a help for each option,
 * placeholders without spaces, no help line that starts with '-' (it would
 * read as an option). Returns 0, or -EINVAL and why in msg.
 */
int cmdopt__check(const struct cmdopts *c, char *msg, size_t len);
/* The arrays for getopt_long(); -EINVAL (said in one line) on a bad table. */
int cmdopt__build(const struct cmdopts *c, struct cmdopt_getopt *g);
/*
 * A command's getopt_long() loop, written once:
 *	struct cmdopt_getopt g = {};
 *	while ((c = cmdopt__next(&record_cmdopts, &g, argc, argv)) != -1)
 * The first call builds g from c and starts at argv[1]. A table that
 * cmdopt__build() refuses (an internal error, said in one line) is '?' once,
 * as an unknown option is, then the end.
 */
int cmdopt__next(const struct cmdopts *c, struct cmdopt_getopt *g, int argc, char **argv);
/*
 * The default case of a command's option switch: 'h' prints the usage on
 * stdout and exits 0; any other option (getopt's '?', after its own
 * message) gets one line saying where the help is, and the caller returns
 * its usage error.
 */
void cmdopt__default(const struct cmdopts *c, int opt);
/* The usage text: head, a blank line, one line per option (aligned), the tail. */
void cmdopt__fprint(const struct cmdopts *c, FILE *f);
/* The same in a malloc'd string (*len its length); NULL on ENOMEM. */
char *cmdopt__usage(const struct cmdopts *c, size_t *len);

#endif
