// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Shared library of the profiling workload: a function with a known name.
 * Its name is versioned as glibc's are (libprofhot.map): the symbol table
 * has the implementation's local name and "proflib_spin@@PROFHOT_1" at the
 * same address, and profiles must say "proflib_spin" (glibc's
 * "__libc_start_main@@GLIBC_2.34" is made the same way).
 */

/* Burn CPU in this library; returns a value so the work is not optimised away. */
__attribute__((noinline)) double proflib_spin_impl(long n)
{
	volatile double y = 1.0;
	long i;

	for (i = 0; i < n; i++)
		y = y * 1.0000001 + 1e-9;
	return y;
}
__asm__(".symver proflib_spin_impl, proflib_spin@@PROFHOT_1");
