# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# make sanitize        the unit tests built and run with UBSan and ASan
#                      (a separate build in $(OUTPUT)san/; not part of make test)
SAN_FLAGS := -fsanitize=undefined,address -fno-sanitize-recover=all -fno-omit-frame-pointer

.PHONY: sanitize
sanitize:
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(OUTPUT)san/ EXTRA_CFLAGS="$(SAN_FLAGS)" \
		EXTRA_LDFLAGS="$(SAN_FLAGS)" unit
