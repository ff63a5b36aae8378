# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# make docs: the tables of docs/fields.md from the figure catalog
# (pmbpf fields --markdown, put between the file's marks by docs/mkfields.py).
# tests/test_catalog.py fails when the file and the catalog disagree.

.PHONY: docs
docs: $(OUTPUT)pmbpf
	$(call msg,DOCS,docs/fields.md)
	$(Q)$(PYTHON) docs/mkfields.py --pmbpf $(OUTPUT)pmbpf docs/fields.md
