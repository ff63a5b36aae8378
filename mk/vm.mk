# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# VM tests (tests/vm/): static pmbpf builds for the guests; the systemd guest.
include tests/vm/vm.mk
# make vmtest-systemd: deploy/pmbpf.service under a real systemd in a guest.
include tests/vm/systemd.mk

.PHONY: FORCE
FORCE:

build/arm64/pmbpf: FORCE
	$(Q)$(MAKE) --no-print-directory ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- STATIC=1 \
		OUTPUT=build/arm64/ all

build/x86-static/pmbpf: FORCE
	$(Q)$(MAKE) --no-print-directory STATIC=1 OUTPUT=build/x86-static/ all
