# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Workloads of the stack profiler tests (tests/test_profile.py): built with
# frame pointers, and with a shared library, so that stacks unwind in the
# kernel through an executable (PIE) and a library.

PROF_WORKLOAD_CFLAGS := -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer

$(OUTPUT)workloads/libprofhot.so: tests/workloads/lib/libprofhot.c tests/workloads/lib/libprofhot.map | $(OUTPUT)workloads
	$(call msg,CC,$@)
	$(Q)$(CC) $(PROF_WORKLOAD_CFLAGS) $(WARN) -std=gnu11 -fPIC -shared $< \
		-Wl,--version-script=tests/workloads/lib/libprofhot.map -o $@

$(OUTPUT)workloads/profload: tests/workloads/profload.c $(OUTPUT)workloads/libprofhot.so | $(OUTPUT)workloads
	$(call msg,CC,$@)
	$(Q)$(CC) $(PROF_WORKLOAD_CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE $< \
		-L$(OUTPUT)workloads -lprofhot -Wl,-rpath,'$$ORIGIN' -o $@

test: $(OUTPUT)workloads/profload

# --call-graph dwarf (tests/test_dwarf.py): no frame pointers anywhere, as in
# distribution packages; a C++ workload for demangled names.
DWARF_WORKLOAD_CFLAGS := -O2 -g -fomit-frame-pointer

$(OUTPUT)workloads/dwarfload: tests/workloads/dwarfload.c | $(OUTPUT)workloads
	$(call msg,CC,$@)
	$(Q)$(CC) $(DWARF_WORKLOAD_CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE $< -o $@

test: $(OUTPUT)workloads/dwarfload

$(OUTPUT)workloads/dwarfcpp: tests/workloads/dwarfcpp.cc | $(OUTPUT)workloads
	$(call msg,CXX,$@)
	$(Q)$(CROSS_COMPILE)g++ $(DWARF_WORKLOAD_CFLAGS) -Wall -Wextra -Werror -std=gnu++17 $< -o $@

test: $(OUTPUT)workloads/dwarfcpp
