# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# make man: the man pages, from docs/man/*.in (hand-written roff) and pmbpf
# itself (options from each command's --help, top's keys from its help
# screen in user/cmd/top_draw.c, the version from debian/changelog): docs/man/mkman.py.
# Checked by tests/test_man.py.

MAN_SRCS := $(wildcard docs/man/*.in)
MAN_PAGES := $(patsubst docs/man/%.in,$(OUTPUT)man/%,$(MAN_SRCS))

.PHONY: man
man: $(MAN_PAGES)

$(OUTPUT)man:
	$(Q)mkdir -p $@

$(OUTPUT)man/%: docs/man/%.in docs/man/mkman.py $(wildcard docs/man/*.roff) docs/fields.md \
		user/cmd/top_draw.c $(OUTPUT)pmbpf debian/changelog | $(OUTPUT)man
	$(call msg,MAN,$@)
	$(Q)$(PYTHON) docs/man/mkman.py --pmbpf $(OUTPUT)pmbpf --version $(VERSION) \
		--date $(VERSION_DATE) $< > $@
