// SPDX-License-Identifier: MIT
/* What the parts of the extension module share: the control API's entry
 * points (NULL while tracing is off) and the Range object. */
#ifndef CUPTRACE_PY_H
#define CUPTRACE_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* What setup.py's python_requires declares: Py_NewRef is 3.10's. */
#if PY_VERSION_HEX < 0x030A0000
#error "cuptrace's extension needs Python 3.10 or newer"
#endif

extern int (*ct_py_push)(const char *);
extern int (*ct_py_pop)(void);

typedef struct {
	PyObject_HEAD
	PyObject *name;	 /* the str */
	PyObject *bytes; /* UTF-8 with lone surrogates replaced, when needed */
	const char *utf8;
	vectorcallfunc vectorcall;
} Range;

extern PyTypeObject RangeType;

/* _torch.c: the types behind cuptrace.torch's backward ranges, added to
 * module m; 0 or -1 with an exception. */
int ct_py_torch_init(PyObject *m);

#endif
