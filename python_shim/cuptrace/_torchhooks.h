// SPDX-License-Identifier: MIT
/* The C interface of cuptrace._torchhooks (_torchhooks.cpp), which
 * _torch.c takes from the capsule `_torchhooks.api`: backward-range hooks
 * put on autograd's grad_fn nodes in C++, so that backward runs no Python
 * for them (no GIL, no gradient wrapped in a Python tensor) and a module
 * call hooks its output without torch's hook dict on the tensor (about
 * 1.6 us a module call on torch 1.13 that way, 0.1 us this way).
 *
 * The module is built against the headers of the torch it runs with and
 * refuses to load under another version (cuptrace/torch.py checks), since
 * torch's C++ classes have no stable ABI. Tensors that have no grad_fn
 * (leaves) keep the hook dict route of _torch.c. */
#ifndef CUPTRACE_TORCHHOOKS_H
#define CUPTRACE_TORCHHOOKS_H

#include <Python.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CT_TORCHHOOKS_ABI 1

typedef struct ct_node_hook ct_node_hook; /* one hook on one node (C++) */

typedef struct {
	int abi; /* CT_TORCHHOOKS_ABI */
	/* Where the hooks find the range calls (read at each call: NULL while
	 * not tracing). */
	void (*set_ranges)(int (**push)(const char *), int (**pop)(void));
	/* t is a torch.Tensor. 0: it needs no gradient; 1: it has a grad_fn,
	 * *h is our hook for t's output of that node or NULL when there is
	 * none yet; 2: a leaf that needs a gradient (no node to hook);
	 * -1: a Python error is set. */
	int (*probe)(PyObject *t, ct_node_hook **h);
	/* The same, and when it says 1 our hook is made if there was none. */
	int (*probe_hook)(PyObject *t, ct_node_hook **h);
	/* The hook's gradient closes one more range, opens name (before what
	 * it opens already: outer modules first). name must live as long as
	 * the process: intern() makes such a copy. 0, or -1 with an error. */
	int (*add_close)(ct_node_hook *h);
	int (*open_first)(ct_node_hook *h, const char *name);
	const char *(*intern)(const char *utf8);
} ct_torchhooks_api;

#ifdef __cplusplus
}
#endif

#endif
