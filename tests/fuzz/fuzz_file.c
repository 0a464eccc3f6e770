// SPDX-License-Identifier: MIT
/* libFuzzer target: any bytes as a .ctr file. */
#include "read_all.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_read_all(data, size);
	return 0;
}
