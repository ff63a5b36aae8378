// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_events.c on tests/unit/fake-sysfs/hybrid: two core PMUs (cpu_core,
 * cpu_atom), so that an alias and a generic name get an encoding per PMU.
 */
#define EVENTS_TREE "hybrid"
#include "fuzz_events.c"
