# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# make freshtest   the README's first commands (./deploy/install-deps.sh, make
#                  run, make unit, the set-up tests) in a copy of a fresh
#                  debootstrapped Debian 12 root, chroot on this kernel, with
#                  each step's time and the disk used: tests/fresh/run.sh
#                  (root; FRESHTEST_ARGS=--no-lists: no apt package lists)
.PHONY: freshtest
freshtest:
	$(Q)tests/fresh/run.sh $(FRESHTEST_ARGS)
