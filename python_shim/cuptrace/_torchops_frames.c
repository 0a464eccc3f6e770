// SPDX-License-Identifier: MIT
/* The Python frames an operator was called from (CUPTRACE_TORCH=stack), as
 * "train.py(42): forward;train.py(60): <module>", innermost first, for
 * cuptrace._torchops (_torchops.h declares ct_ops_python_stack).
 *
 * torch's Python bindings release the GIL before they run an operator, so
 * the operator's start callback cannot use the C API to read frames. On
 * CPython 3.11 and 3.12 the thread's own frame chain is read as it stands
 * (the interpreter's internal frame layout, for the exact Python this
 * module is built against): only the thread that owns those frames changes
 * them, and it is here, in C; code objects and their names do not change.
 * Nothing is allocated and no Python object is touched but to read it. A
 * name that is not ASCII and has no UTF-8 form cached reads "?". A thread
 * without a Python thread state (autograd's workers) has no frames. Other
 * Pythons, and a Python whose internal headers do not compile here (the
 * package's builder then compiles this file again with CT_NO_FRAME_CHAIN):
 * only a thread that holds the GIL gets its frames (through the C API);
 * operators called from Python mostly have none there. Seen on 3.11. */
#define PY_SSIZE_T_CLEAN
#define Py_BUILD_CORE_MODULE 1 /* the internal frame layout (3.11, 3.12) */
#include <Python.h>

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030D0000 && !defined(CT_NO_FRAME_CHAIN)
#include <internal/pycore_frame.h>
#define CT_FRAME_CHAIN 1
#else
#include <frameobject.h>
#endif

#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct out {
	char *buf;
	uint32_t cap, n;
};

static int put(struct out *o, const char *s, size_t len)
{
	if (len > o->cap - o->n)
		return 0;
	memcpy(o->buf + o->n, s, len);
	o->n += (uint32_t)len;
	return 1;
}

/* One frame, ';' before all but the first; 0 when it does not fit (the
 * text then ends before it). */
static int frame(struct out *o, const char *file, Py_ssize_t flen, int line, const char *name,
		 Py_ssize_t nlen)
{
	char at[32];
	int k = snprintf(at, sizeof at, "(%d): ", line);
	uint32_t mark = o->n;
	if ((o->n && !put(o, ";", 1)) || !put(o, file, (size_t)flen) || !put(o, at, (size_t)k) ||
	    !put(o, name, (size_t)nlen)) {
		o->n = mark;
		return 0;
	}
	return 1;
}

#ifdef CT_FRAME_CHAIN

/* A str's UTF-8 bytes where they exist already (ASCII, or a cached UTF-8
 * form); NULL otherwise. Reads only. */
static const char *text_of(PyObject *s, Py_ssize_t *len)
{
	if (!s || !PyUnicode_Check(s))
		return NULL;
	if (PyUnicode_IS_COMPACT_ASCII(s)) {
		*len = PyUnicode_GET_LENGTH(s);
		return (const char *)PyUnicode_DATA(s);
	}
	PyCompactUnicodeObject *c = (PyCompactUnicodeObject *)s;
	if (PyUnicode_IS_COMPACT(s) && c->utf8) {
		*len = c->utf8_length;
		return c->utf8;
	}
	return NULL;
}

uint32_t ct_ops_python_stack(char *buf, uint32_t cap)
{
	struct out o = {buf, cap, 0};
	if (!Py_IsInitialized() || _Py_IsFinalizing())
		return 0;
	PyThreadState *ts = PyGILState_GetThisThreadState();
	if (!ts || !ts->cframe)
		return 0;
	int depth = 0;
	for (_PyInterpreterFrame *f = ts->cframe->current_frame; f && depth < 128;
	     f = f->previous) {
		if (_PyFrame_IsIncomplete(f))
			continue; /* being set up */
#if PY_VERSION_HEX >= 0x030C0000
		if (f->owner == FRAME_OWNED_BY_CSTACK)
			continue; /* 3.12's shim between C and Python */
#endif
		PyCodeObject *code = f->f_code;
		Py_ssize_t flen = 1, nlen = 1;
		const char *file = text_of(code->co_filename, &flen);
		const char *name = text_of(code->co_name, &nlen);
		int line = PyCode_Addr2Line(code, _PyInterpreterFrame_LASTI(f) *
							(int)sizeof(_Py_CODEUNIT));
		if (!frame(&o, file ? file : "?", file ? flen : 1, line, name ? name : "?",
			   name ? nlen : 1))
			break;
		depth++;
	}
	return o.n;
}

#else

uint32_t ct_ops_python_stack(char *buf, uint32_t cap)
{
	struct out o = {buf, cap, 0};
	if (!Py_IsInitialized() || !PyGILState_Check())
		return 0;
	PyObject *et, *ev, *tb;
	PyErr_Fetch(&et, &ev, &tb);
	PyFrameObject *f = PyEval_GetFrame();
	Py_XINCREF(f);
	for (int depth = 0; f && depth < 128; depth++) {
		PyCodeObject *code = PyFrame_GetCode(f);
		Py_ssize_t flen = 0, nlen = 0;
		const char *file = PyUnicode_AsUTF8AndSize(code->co_filename, &flen);
		const char *name = file ? PyUnicode_AsUTF8AndSize(code->co_name, &nlen) : NULL;
		int line = PyFrame_GetLineNumber(f);
		Py_DECREF(code);
		if (!file || !name)
			PyErr_Clear();
		else if (!frame(&o, file, flen, line, name, nlen))
			break;
		PyFrameObject *back = PyFrame_GetBack(f);
		Py_DECREF(f);
		f = back;
	}
	Py_XDECREF(f);
	PyErr_Restore(et, ev, tb);
	return o.n;
}

#endif
