// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pmbpf compare BASE.json NEW.json: did a change make a benchmark slower?
 * The method is compare.c's; the output compare_report.c's.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "commands.h"
#include "compare.h"
#include "compare_report.h"
#include "util.h"

static const struct cmdopt options[] = {
	{ 't', "threshold", "NAME=+P%",
	  "a rise of P% or more in NAME is a regression (-P%: a drop);\n"
	  "repeatable; defaults: instructions +1%, page-faults +1%,\n"
	  "ipc -5%, wall-time and cpu-time +10%, *-misses +15%,\n"
	  "switches +20% (involuntary +50%), migrations +50%,\n"
	  "others +10% (docs/ci.md); NAME=off: no verdict for NAME\n"
	  "(wall-time measures the runner's load too: docs/ci.md);\n"
	  "offcpu-* and runq-wait are judged only when named here" },
	{ 'o', "output", "FORMAT", "table (default), json or markdown" },
	{ CMDOPT_HELP },
	{},
};

const struct cmdopts compare_cmdopts = {
	.cmd = "compare",
	.head = "Usage: pmbpf compare [OPTIONS] BASE.json NEW.json\n"
		"Compare two 'pmbpf stat -r N -o json' files: per metric the change of the\n"
		"median run, its 95% confidence interval (exact Mann-Whitney rank test) and a verdict.\n"
		"NOISE% is the robust RSD (1.4826 x MAD / median).\n",
	.opts = options,
	.tail = "LIMIT is the threshold, or the metric's absolute floor in percent of the base\n"
		"median where that is more (20 page faults, 5 switches, 100 us: docs/ci.md).\n"
		"The verdict, from the interval and the limit L in the bad direction:\n"
		"  either side has 2 or 3 runs (too few for 95%)   too few runs: K more needed\n"
		"  interval wholly at or above +L                  regression (exit 1)\n"
		"  interval wholly at or below -L                  improvement\n"
		"  interval wholly below +L                        no significant change\n"
		"  interval holds +L and values below it           too noisy: K more runs needed\n"
		"                                                  (or: " STR(
			COMPARE_MAX_RUNS) " runs a side would not do)\n"
					  "A regression needs no more than its interval, however noisy the runs.\n"
					  "Exit code: 0 no regression, 1 at least one regression, 2 bad input.\n",
	.permute = true, /* pmbpf compare A.json B.json -o json */
};

static int load(const char *path, struct series *s)
{
	char err[256], *buf = NULL;
	size_t len = 0;
	int ret;

	ret = file__read_all(path, INPUT_MAX_BYTES, &buf, &len);
	if (ret == -EFBIG) {
		pr_err("%s holds more than %lu MiB: not a 'pmbpf stat -o json' file\n", path,
		       INPUT_MAX_BYTES >> 20);
		return ret;
	}
	if (ret) {
		pr_err("cannot read %s: %s\n", path, strerror(-ret));
		return ret;
	}
	ret = series__from_json(s, buf, len, "A", err, sizeof(err));
	free(buf);
	if (ret) {
		pr_err("%s: %s\n", path, err);
		return ret;
	}
	s->label = strdup(path);
	return s->label ? 0 : -ENOMEM;
}

/*
 * Names in the files (the command, metrics) reach a terminal: the table and
 * markdown pass text__char()'s rule (JSON escapes them itself).
 */
static int printable(enum compare_format fmt, char **text, size_t *len)
{
	char *safe;

	if (fmt == COMPARE_JSON)
		return 0;
	safe = malloc(TEXT_PRINTABLE_SIZE(*len));
	if (!safe) {
		pr_err("%s\n", strerror(ENOMEM));
		return -ENOMEM;
	}
	text__printable(safe, TEXT_PRINTABLE_SIZE(*len), *text, true);
	free(*text);
	*text = safe;
	*len = strlen(safe);
	return 0;
}

int cmd_compare(int argc, char **argv)
{
	struct threshold th[COMPARE_MAX_THRESHOLDS];
	enum compare_format fmt = COMPARE_TABLE;
	struct series base = {}, new = {};
	struct compare_result *r = NULL;
	struct cmdopt_getopt g = {};
	int c, nr_th = 0, rc = 2;
	char err[600], *text = NULL;
	size_t len = 0;
	FILE *f;

	signal(SIGPIPE, SIG_IGN); /* a closed pipe is EPIPE: exit with the verdict */
	while ((c = cmdopt__next(&compare_cmdopts, &g, argc, argv)) != -1) {
		switch (c) {
		case 't':
			if (nr_th == COMPARE_MAX_THRESHOLDS) {
				pr_err("at most %d thresholds\n", COMPARE_MAX_THRESHOLDS);
				return 2;
			}
			if (threshold__parse(optarg, &th[nr_th++])) {
				pr_err("invalid --threshold '%s': give NAME=+P%% or NAME=-P%% (0 < P < 1000)\n",
				       optarg);
				return 2;
			}
			break;
		case 'o':
			if (compare_format__parse(optarg, &fmt)) {
				pr_err("unknown output format '%s': use table, json or markdown\n",
				       optarg);
				return 2;
			}
			break;
		case 'h':
			text = cmdopt__usage(&compare_cmdopts, &len);
			if (!text) {
				pr_err("%s\n", strerror(ENOMEM));
				return 2;
			}
			rc = report__write(STDOUT_FILENO, "the help", text, len) == -EIO ? 2 : 0;
			free(text);
			return rc;
		default:
			pr_err("try 'pmbpf compare --help'\n");
			return 2;
		}
	}
	if (argc - optind != 2) {
		pr_err("give two files: pmbpf compare BASE.json NEW.json\n");
		return 2;
	}
	if (load(argv[optind], &base) || load(argv[optind + 1], &new))
		goto out;
	r = malloc(sizeof(*r));
	if (!r)
		goto out;
	if (compare__series(&base, &new, th, nr_th, r, err, sizeof(err))) {
		pr_err("%s\n", err);
		goto out;
	}
	rc = r->counts[VERDICT_REGRESSION] ? 1 : 0;
	f = open_memstream(&text, &len);
	if (!f) {
		pr_err("%s\n", strerror(errno));
		rc = 2;
		goto out;
	}
	compare__print(f, fmt, r);
	if (fclose(f) || printable(fmt, &text, &len) ||
	    report__write(STDOUT_FILENO, "the comparison", text, len) == -EIO)
		rc = 2;
out:
	free(text);
	free(r);
	series__free(&base);
	series__free(&new);
	return rc;
}
