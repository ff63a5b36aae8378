// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Shared library of the profiling workload: a function with a known name. */

/* Burn CPU in this library; returns a value so the work is not optimised away. */
__attribute__((noinline)) double proflib_spin(long n)
{
	volatile double y = 1.0;
	long i;

	for (i = 0; i < n; i++)
		y = y * 1.0000001 + 1e-9;
	return y;
}
