// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * C++ workload of tests/test_dwarf.py: hot functions in a namespace, a
 * template and a class, whose symbols are mangled (_ZN...): the profile must
 * show them demangled. Built -fomit-frame-pointer (mk/profile.mk).
 *
 *   dwarfcpp SECONDS
 */
#include <chrono>
#include <cstdint>
#include <cstdlib>

namespace pmbpf_test {

static volatile std::uint64_t sink;

template <typename T> struct Mixer {
	__attribute__((noipa)) T churn(T x, int rounds)
	{
		for (int i = 0; i < rounds; i++)
			x = x * static_cast<T>(6364136223846793005ULL) +
			    static_cast<T>(1442695040888963407ULL);
		return x;
	}
};

__attribute__((noipa)) std::uint64_t hot_work(int rounds)
{
	Mixer<std::uint64_t> m;

	return m.churn(sink, rounds) + 1;
}

} // namespace pmbpf_test

int main(int argc, char **argv)
{
	using clock = std::chrono::steady_clock;
	auto end = clock::now() + std::chrono::duration<double>(argc > 1 ? std::atof(argv[1]) : 1.0);

	while (clock::now() < end)
		pmbpf_test::sink = pmbpf_test::sink + pmbpf_test::hot_work(100000);
	return 0;
}
