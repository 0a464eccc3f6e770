// SPDX-License-Identifier: MIT
/* A wide NVTX message longer than the recorder keeps (96 KiB of UTF-8),
 * cut where a 3-byte character would not fit whole: "a" then 40000 x
 * U+4E2D. The kept text must be "a" and 32767 whole characters (98302
 * bytes), nothing after them. */
#include "truth.h"

#include <nvtx3/nvToolsExt.h>
#include <wchar.h>

int main(void)
{
	static wchar_t w[40002];
	w[0] = L'a';
	for (int i = 1; i <= 40000; i++)
		w[i] = 0x4e2d;
	w[40001] = 0;
	nvtxRangePushW(w);
	nvtxRangePop();
	return 0;
}
