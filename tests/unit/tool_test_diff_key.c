// SPDX-License-Identifier: MIT
/* The keys that match renamed rows in cuptrace diff (stats/diff_rows.c):
 * template arguments emptied (nested ones within, an operator's '<' and
 * an unbalanced one kept), NCCL kernels without their algorithm and
 * protocol, other names as they are, and a buffer too small cut short. */
#include "check.h"
#include "stats/diff.h"

static void key_is(const char *name, const char *want)
{
	char got[256];
	diff_key(name, got, sizeof got);
	if (strcmp(got, want)) {
		fprintf(stderr, "diff_key(%s) = %s, not %s\n", name, got, want);
		exit(1);
	}
}

int main(void)
{
	key_is("void foo<float, 128>(float*, int)", "void foo<>(float*, int)");
	key_is("void foo<float, 256>(float*, int)", "void foo<>(float*, int)");
	key_is("void at::native::kernel<4, at::native::F<float>, std::array<char*, 1ul> >(int)",
	       "void at::native::kernel<>(int)");
	key_is("void ns::a<1>::b<2>(x<3>)", "void ns::a<>::b<>(x<>)");
	key_is("std::ostream& operator<<(std::ostream&, int)",
	       "std::ostream& operator<<(std::ostream&, int)");
	key_is("f<>()", "f<>()");
	key_is("half<open(", "half<open(");
	key_is("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "ncclDevKernel_AllReduce_Sum_f32");
	key_is("ncclDevKernel_AllReduce_Sum_f32_TREE_LL128", "ncclDevKernel_AllReduce_Sum_f32");
	key_is("ncclDevKernel_AllGather_RING_SIMPLE(ncclDevComm*, unsigned long, ncclWork*)",
	       "ncclDevKernel_AllGather(ncclDevComm*, unsigned long, ncclWork*)");
	key_is("ncclKernel_AllReduce_COLLNET_DIRECT_LL_Sum_float",
	       "ncclKernel_AllReduce_Sum_float");
	key_is("layernorm(float*, float*, int)", "layernorm(float*, float*, int)");
	key_is(":slow_part", ":slow_part");
	key_is("", "");
	char small[8];
	diff_key("void foo<float>(int)", small, sizeof small);
	CHECK(!strcmp(small, "void fo"));
	diff_key("ncclDevKernel_AllReduce_RING", small, sizeof small);
	CHECK(strlen(small) == 7);
	puts("diff_key: ok");
	return 0;
}
