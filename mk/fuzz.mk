# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# make fuzz            libFuzzer harnesses (tests/fuzz/fuzz_NAME.c, clang with
#                      -fsanitize=fuzzer,address,undefined; a build of its own in
#                      $(OUTPUT)fuzz/) for the parsers of outside input, each run
#                      FUZZ_SECONDS (default 20) from its seed corpus
#                      tests/fuzz/NAME/ (inputs it finds go to $(OUTPUT)fuzz/corpus/,
#                      a crash's input to $(OUTPUT)fuzz/crash/); FUZZ=NAME runs one
# make fuzz-build      only build them
FUZZ_SECONDS ?= 20
FUZZ_CC ?= clang
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_NAMES := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ ?= $(FUZZ_NAMES)

.PHONY: fuzz fuzz-build fuzz-bins
# in the sub-make, OUTPUT is $(OUTPUT)fuzz/ and the objects are clang's
fuzz-bins: $(patsubst %,$(OUTPUT)fuzz_%,$(FUZZ_NAMES))

$(OUTPUT)fuzz_events_hybrid: tests/fuzz/fuzz_events.c
$(OUTPUT)fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(USER_OBJS)
	$(call msg,FUZZ-LD,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -DFUZZ_SYSFS='"$(abspath tests/unit/fake-sysfs)"' \
		$< $(USER_OBJS) $(ALL_LDFLAGS) $(LIBS) -o $@

fuzz-build:
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(OUTPUT)fuzz/ CC=$(FUZZ_CC) \
		EXTRA_CFLAGS="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" EXTRA_LDFLAGS="$(FUZZ_SAN)" fuzz-bins

fuzz: fuzz-build
	$(Q)tests/fuzz/run.sh $(OUTPUT)fuzz/ $(FUZZ_SECONDS) $(FUZZ)
