/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __PMBPF_COMMANDS_H
#define __PMBPF_COMMANDS_H

#include "cmdopt.h"
#include "common.h"

/* PMBPF_VERSION comes from the Makefile (debian/changelog). */

/* Each command's options and usage (cmdopt.h), for its parser and the unit test. */
extern const struct cmdopts record_cmdopts, stat_cmdopts, doctor_cmdopts, compare_cmdopts;
#ifndef PMBPF_MINIMAL
extern const struct cmdopts serve_cmdopts, top_cmdopts, profile_cmdopts, cpi_cmdopts;
#endif

int cmd_record(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_cpi(int argc, char **argv);
int cmd_fields(int argc, char **argv);
#ifndef PMBPF_MINIMAL
int cmd_serve(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_profile(int argc, char **argv);
#endif

#endif
