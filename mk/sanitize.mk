# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# make sanitize        pmbpf and its unit tests built with UBSan and ASan (halt
#                      on the first error) in $(OUTPUT)san/: the unit tests, then
#                      record, stat, profile (fp, dwarf, off-cpu, -- COMMAND), serve, top,
#                      list and doctor for a few seconds each on this host
#                      (tests/sanitize/run.sh, root); not part of make test
SAN_FLAGS := -fsanitize=undefined,address -fno-sanitize-recover=all -fno-omit-frame-pointer

.PHONY: sanitize
sanitize:
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(OUTPUT)san/ EXTRA_CFLAGS="$(SAN_FLAGS)" \
		EXTRA_LDFLAGS="$(SAN_FLAGS)" unit $(OUTPUT)san/pmbpf $(OUTPUT)san/workloads/work
	$(Q)tests/sanitize/run.sh $(OUTPUT)san/pmbpf $(OUTPUT)san/workloads/work
