// SPDX-License-Identifier: MIT
/* cuptrace._cuptrace: the hot path of the Python annotations, in C.
 *
 * The control API of include/cuptrace/cuptrace.h is resolved once with
 * dlsym (bind()): from the process (LD_PRELOAD / `cuptrace run`) or from the
 * library activate() loads. Until then, and when the library says tracing
 * is off, every entry point tests one pointer and returns. range(name)
 * returns one Range object per name, cached by the str, holding the name's
 * UTF-8 bytes, so that `with cuptrace.range("x"):` allocates nothing and
 * encodes nothing after its first use. */
#include "_cuptrace.h"

#include <dlfcn.h>
#include <limits.h>
#include <stddef.h>

/* The library's own parser of CUPTRACE_* values (libtrace/config/config.c,
 * compiled into this module): activate() checks options with it. */
#include "config.h"

/* Shared with _torch.c (hidden: -fvisibility=hidden). */
int (*ct_py_push)(const char *);
int (*ct_py_pop)(void);
#define api_push ct_py_push
#define api_pop ct_py_pop
static void (*api_mark)(const char *);
static void (*api_step)(void);
static void (*api_start)(void);
static void (*api_stop)(void);
static int (*api_enabled)(void);
static const char *(*api_flush)(void);
static const char *(*api_rotate)(void);
static int (*api_dump)(void);
/* Not cleared by _unbind: what the library of a child that does not trace
 * recorded all the same (NVTX, CUDA) is still its to finish. */
static void (*api_leaving)(int);

/* Above this many names (names made per call, e.g. f"batch {i}"), new
 * names are not cached: memory stays bounded. */
#define CACHE_MAX 4096
static PyObject *cache; /* str -> Range */

/* ---- Range: a named range, a context manager, a decorator and a pair of
 * hook functions (push/pop ignore their arguments: module hooks). ---- */

static PyObject *range_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
				  PyObject *kwnames);

static Range *range_new_of(PyObject *name)
{
	if (!PyUnicode_Check(name)) {
		PyErr_Format(PyExc_TypeError, "range name must be str, not %.80s",
			     Py_TYPE(name)->tp_name);
		return NULL;
	}
	Range *r = PyObject_New(Range, &RangeType);
	if (!r)
		return NULL;
	r->bytes = NULL;
	/* The str caches its UTF-8 form; it lives as long as r holds it. */
	r->utf8 = PyUnicode_AsUTF8(name);
	if (!r->utf8) {
		PyErr_Clear();
		r->bytes = PyUnicode_AsEncodedString(name, "utf-8", "replace");
		if (!r->bytes) {
			r->name = NULL;
			Py_DECREF(r);
			return NULL;
		}
		r->utf8 = PyBytes_AS_STRING(r->bytes);
	}
	r->vectorcall = range_vectorcall;
	Py_INCREF(name);
	r->name = name;
	return r;
}

static void range_dealloc(Range *r)
{
	Py_XDECREF(r->name);
	Py_XDECREF(r->bytes);
	PyObject_Free(r);
}

static PyObject *range_tp_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	(void)type;
	PyObject *name;
	static char *kwl[] = {"name", NULL};
	if (!PyArg_ParseTupleAndKeywords(args, kw, "U:Range", kwl, &name))
		return NULL;
	return (PyObject *)range_new_of(name);
}

static PyObject *range_push(Range *r, PyObject *const *args, Py_ssize_t n)
{
	(void)args, (void)n;
	if (api_push)
		api_push(r->utf8);
	Py_RETURN_NONE;
}

static PyObject *range_pop(Range *r, PyObject *const *args, Py_ssize_t n)
{
	(void)r, (void)args, (void)n;
	if (api_pop)
		api_pop();
	Py_RETURN_NONE;
}

static PyObject *wrap_of(Range *r, PyObject *fn);

/* copy, deepcopy and pickle: Range(name). */
static PyObject *range_reduce(Range *r, PyObject *unused)
{
	(void)unused;
	return Py_BuildValue("O(O)", (PyObject *)&RangeType, r->name);
}

/* `with r:` looks up r.__enter__ and r.__exit__ and calls them with 0 and 3
 * arguments; binding a method there would allocate twice per range. The
 * descriptor below hands out r itself (no allocation) and r's call tells
 * the two apart by their number of arguments; one argument is a function
 * to decorate (@cuptrace.range("x")). */
static PyObject *range_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
				  PyObject *kwnames)
{
	Range *r = (Range *)self;
	Py_ssize_t n = PyVectorcall_NARGS(nargsf);
	if (kwnames && PyTuple_GET_SIZE(kwnames))
		n = -1;
	switch (n) {
	case 0: /* __enter__ */
		if (api_push)
			api_push(r->utf8);
		Py_INCREF(self);
		return self;
	case 3: /* __exit__(type, value, traceback) */
		if (api_pop)
			api_pop();
		Py_RETURN_FALSE;
	case 1:
		return wrap_of(r, args[0]);
	}
	return PyErr_Format(PyExc_TypeError, "a Range decorates one callable"), NULL;
}

typedef struct {
	PyObject_HEAD
} Special;

static PyObject *special_get(PyObject *self, PyObject *obj, PyObject *type)
{
	(void)type;
	PyObject *r = obj ? obj : self;
	Py_INCREF(r);
	return r;
}

static PyTypeObject SpecialType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "cuptrace._RangeSpecial",
    .tp_basicsize = sizeof(Special),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_descr_get = special_get,
};

static PyObject *range_repr(Range *r)
{
	return PyUnicode_FromFormat("cuptrace.range(%R)", r->name);
}

static PyMethodDef range_methods[] = {
    {"push", (PyCFunction)(void (*)(void))range_push, METH_FASTCALL,
     "Opens the range; ignores its arguments (usable as a hook)."},
    {"pop", (PyCFunction)(void (*)(void))range_pop, METH_FASTCALL,
     "Closes the innermost range; ignores its arguments."},
    {"__reduce__", (PyCFunction)range_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyObject *range_get_name(Range *r, void *unused)
{
	(void)unused;
	Py_INCREF(r->name);
	return r->name;
}

static PyGetSetDef range_getset[] = {
    {"name", (getter)range_get_name, NULL, "the range's name", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject RangeType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "cuptrace.Range",
    .tp_basicsize = sizeof(Range),
    .tp_dealloc = (destructor)range_dealloc,
    .tp_repr = (reprfunc)range_repr,
    .tp_vectorcall_offset = offsetof(Range, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A named range: `with r:`, `@r`, or r.push / r.pop as hooks.",
    .tp_methods = range_methods,
    .tp_getset = range_getset,
    .tp_new = range_tp_new,
};

/* ---- Wrapped: a function called inside a range (vectorcall, no tuple) ---- */

typedef struct {
	PyObject_HEAD
	Range *range;
	PyObject *fn;
	PyObject *dict; /* __name__, __doc__, __wrapped__ (functools.update_wrapper) */
	vectorcallfunc vectorcall;
} Wrapped;

static PyTypeObject WrappedType;

static PyObject *wrapped_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
				    PyObject *kwnames)
{
	Wrapped *w = (Wrapped *)self;
	if (!api_push)
		return PyObject_Vectorcall(w->fn, args, nargsf, kwnames);
	api_push(w->range->utf8);
	PyObject *res = PyObject_Vectorcall(w->fn, args, nargsf, kwnames);
	if (api_pop)
		api_pop();
	return res;
}

static PyObject *wrap_of(Range *r, PyObject *fn)
{
	if (!PyCallable_Check(fn))
		return PyErr_Format(PyExc_TypeError, "cannot annotate %.80s: not callable",
				    Py_TYPE(fn)->tp_name), NULL;
	Wrapped *w = PyObject_GC_New(Wrapped, &WrappedType);
	if (!w)
		return NULL;
	Py_INCREF(r);
	Py_INCREF(fn);
	w->range = r;
	w->fn = fn;
	w->dict = NULL;
	w->vectorcall = wrapped_vectorcall;
	PyObject_GC_Track(w);
	return (PyObject *)w;
}

static int wrapped_traverse(Wrapped *w, visitproc visit, void *arg)
{
	Py_VISIT(w->fn);
	Py_VISIT(w->dict);
	return 0;
}

static int wrapped_clear(Wrapped *w)
{
	Py_CLEAR(w->fn);
	Py_CLEAR(w->dict);
	return 0;
}

static void wrapped_dealloc(Wrapped *w)
{
	PyObject_GC_UnTrack(w);
	wrapped_clear(w);
	Py_CLEAR(w->range);
	PyObject_GC_Del(w);
}

/* Methods of a class: bind like a function does. */
static PyObject *wrapped_get(PyObject *self, PyObject *obj, PyObject *type)
{
	(void)type;
	if (!obj || obj == Py_None) {
		Py_INCREF(self);
		return self;
	}
	return PyMethod_New(self, obj);
}

/* pickle (torch.save of an annotated model, a decorated function sent to
 * a multiprocessing pool): a module's wrapped forward is saved as the bound
 * forward itself, so that the file loads where cuptrace is not installed
 * (an annotated model with backward ranges could not be saved at all); a
 * decorated function by its name, as pickle saves functions. */
static PyObject *wrapped_reduce(Wrapped *w, PyObject *unused)
{
	(void)unused;
	if (PyMethod_Check(w->fn))
		return PyObject_CallMethod(w->fn, "__reduce__", NULL);
	PyObject *q = PyObject_GetAttrString(w->fn, "__qualname__");
	if (q)
		return q;
	PyErr_Clear();
	return Py_BuildValue("O(O)", (PyObject *)w->range, w->fn);
}

/* copy.deepcopy of a module that annotate_modules wrapped: the wrapper is
 * made again, around the copy's bound forward; a decorated function is
 * not copied, as functions are not. */
static PyObject *wrapped_deepcopy(Wrapped *w, PyObject *memo)
{
	if (!PyMethod_Check(w->fn))
		return Py_NewRef((PyObject *)w);
	PyObject *copy = PyImport_ImportModule("copy");
	PyObject *fn = copy ? PyObject_CallMethod(copy, "deepcopy", "OO", w->fn, memo) : NULL;
	Py_XDECREF(copy);
	if (!fn)
		return NULL;
	PyObject *r = PyObject_CallOneArg((PyObject *)w->range, fn);
	Py_DECREF(fn);
	return r;
}

static PyMethodDef wrapped_methods[] = {
    {"__reduce__", (PyCFunction)wrapped_reduce, METH_NOARGS, NULL},
    {"__deepcopy__", (PyCFunction)wrapped_deepcopy, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef wrapped_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject WrappedType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "cuptrace.Annotated",
    .tp_basicsize = sizeof(Wrapped),
    .tp_dealloc = (destructor)wrapped_dealloc,
    .tp_vectorcall_offset = offsetof(Wrapped, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
		Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "A function whose every call is a range.",
    .tp_traverse = (traverseproc)wrapped_traverse,
    .tp_clear = (inquiry)wrapped_clear,
    .tp_descr_get = wrapped_get,
    .tp_dictoffset = offsetof(Wrapped, dict),
    .tp_getset = wrapped_getset,
    .tp_methods = wrapped_methods,
};

/* ---- module functions ---- */

static PyObject *mod_range(PyObject *m, PyObject *name)
{
	(void)m;
	PyObject *r = PyDict_GetItemWithError(cache, name); /* borrowed */
	if (r) {
		Py_INCREF(r);
		return r;
	}
	if (PyErr_Occurred())
		return NULL;
	r = (PyObject *)range_new_of(name);
	if (r && PyDict_GET_SIZE(cache) < CACHE_MAX && PyDict_SetItem(cache, name, r)) {
		Py_DECREF(r);
		return NULL;
	}
	return r;
}

static PyObject *mod_mark(PyObject *m, PyObject *name)
{
	(void)m;
	if (!api_mark)
		Py_RETURN_NONE;
	PyObject *r = mod_range(m, name);
	if (!r)
		return NULL;
	api_mark(((Range *)r)->utf8);
	Py_DECREF(r);
	Py_RETURN_NONE;
}

static PyObject *mod_push(PyObject *m, PyObject *name)
{
	PyObject *r = mod_range(m, name);
	if (!r)
		return NULL;
	int d = api_push ? api_push(((Range *)r)->utf8) : 0;
	Py_DECREF(r);
	return PyLong_FromLong(d);
}

static PyObject *mod_pop(PyObject *m, PyObject *unused)
{
	(void)m, (void)unused;
	return PyLong_FromLong(api_pop ? api_pop() : 0);
}

#define CALL0(fn)                                                                                  \
	static PyObject *mod_##fn(PyObject *m, PyObject *unused)                                   \
	{                                                                                          \
		(void)m, (void)unused;                                                             \
		if (api_##fn)                                                                      \
			api_##fn();                                                                \
		Py_RETURN_NONE;                                                                    \
	}
CALL0(step)
CALL0(start)
CALL0(stop)

/* A call that waits for the writer and returns a path (or NULL). */
static PyObject *path_call(const char *(*fn)(void))
{
	const char *path = NULL;
	if (fn) {
		/* The writer may take a while: let other Python threads run. */
		Py_BEGIN_ALLOW_THREADS
		path = fn();
		Py_END_ALLOW_THREADS
	}
	if (!path)
		Py_RETURN_NONE;
	return PyUnicode_DecodeFSDefault(path);
}

static PyObject *mod_flush(PyObject *m, PyObject *unused)
{
	(void)m, (void)unused;
	return path_call(api_flush);
}

static PyObject *mod_rotate(PyObject *m, PyObject *unused)
{
	(void)m, (void)unused;
	return path_call(api_rotate);
}

static PyObject *mod_dump(PyObject *m, PyObject *unused)
{
	(void)m, (void)unused;
	return PyBool_FromLong(api_dump && api_dump() == 0);
}

static PyObject *mod_enabled(PyObject *m, PyObject *unused)
{
	(void)m, (void)unused;
	return PyBool_FromLong(api_push != NULL);
}

/* bind(path=None): resolve the control API in the process (None) or in the
 * library at path (dlopen'ed RTLD_GLOBAL, as NVTX and CUDA will look for
 * it). Returns whether tracing is on; raises OSError when path cannot be
 * loaded. */
static PyObject *mod_bind(PyObject *m, PyObject *args)
{
	(void)m;
	const char *path = NULL;
	if (!PyArg_ParseTuple(args, "|z:_bind", &path))
		return NULL;
	void *h = RTLD_DEFAULT;
	if (path) {
		h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
		if (!h)
			return PyErr_Format(PyExc_OSError, "cannot load %s: %s", path, dlerror()), NULL;
	}
#define SYM(v, name) *(void **)&v = dlsym(h, name)
	int (*push)(const char *), (*pop)(void), (*enabled)(void);
	SYM(push, "cuptrace_range_push");
	SYM(pop, "cuptrace_range_pop");
	SYM(enabled, "cuptrace_enabled");
	SYM(api_mark, "cuptrace_mark");
	SYM(api_step, "cuptrace_step");
	SYM(api_start, "cuptrace_start");
	SYM(api_stop, "cuptrace_stop");
	SYM(api_flush, "cuptrace_flush"); /* newer libraries only */
	SYM(api_rotate, "cuptrace_rotate");
	SYM(api_dump, "cuptrace_dump"); /* newer libraries only */
	void (*leaving)(int);
	SYM(leaving, "cuptrace_leaving");
#undef SYM
	/* Tracing off (no library, bad settings, rank not selected): every
	 * entry point stays one test of a NULL pointer. */
	int on = push && pop && enabled && api_mark && api_step && api_start && api_stop &&
		 enabled();
	api_enabled = on ? enabled : NULL;
	api_pop = on ? pop : NULL;
	api_push = on ? push : NULL;
	api_leaving = on ? leaving : NULL;
	if (!on)
		api_mark = NULL, api_step = NULL, api_start = NULL, api_stop = NULL,
		api_flush = NULL, api_rotate = NULL, api_dump = NULL;
	return PyBool_FromLong(on);
}

/* _leaving(status): os._exit(status) comes next (the package's wrapper of
 * it, set up by activate()). A status that os._exit refuses is left to it
 * to refuse: the process does not leave then. */
static PyObject *mod_leaving(PyObject *m, PyObject *arg)
{
	(void)m;
	if (!api_leaving || !PyIndex_Check(arg))
		Py_RETURN_NONE;
	PyObject *i = PyNumber_Index(arg);
	int overflow = 0;
	long v = i ? PyLong_AsLongAndOverflow(i, &overflow) : -1;
	Py_XDECREF(i);
	if (PyErr_Occurred() || overflow || v < INT_MIN || v > INT_MAX) {
		PyErr_Clear();
		Py_RETURN_NONE;
	}
	api_leaving((int)v);
	Py_RETURN_NONE;
}

/* _check(VAR, value) -> None, or the library's reason why the value is
 * bad ("CUPTRACE_X=value: why"). value: the bytes the library will read
 * from the environment (os.fsencode). */
static PyObject *mod_check(PyObject *m, PyObject *args)
{
	(void)m;
	const char *var, *value;
	if (!PyArg_ParseTuple(args, "sy:_check", &var, &value))
		return NULL;
	struct ct_config c;
	char err[512] = "";
	ct_config_defaults(&c);
	if (!ct_config_set(&c, var, value, err, sizeof err))
		Py_RETURN_NONE;
	return PyUnicode_DecodeFSDefault(err);
}

/* _unbind(): tracing off for this process's annotations (a fork child
 * that must not trace). */
static PyObject *mod_unbind(PyObject *m, PyObject *unused)
{
	(void)m, (void)unused;
	api_push = NULL, api_pop = NULL, api_enabled = NULL;
	api_mark = NULL, api_step = NULL, api_start = NULL, api_stop = NULL;
	api_flush = NULL, api_rotate = NULL, api_dump = NULL;
	Py_RETURN_NONE;
}

static PyMethodDef mod_methods[] = {
    {"_unbind", mod_unbind, METH_NOARGS, NULL},
    {"_check", mod_check, METH_VARARGS, NULL},
    {"_leaving", mod_leaving, METH_O, NULL},
    {"range", mod_range, METH_O,
     "range(name) -> Range: `with cuptrace.range(name):` or `@cuptrace.range(name)`."},
    {"mark", mod_mark, METH_O, "mark(name): an instant event."},
    {"push", mod_push, METH_O, "push(name) -> depth: opens a range on this thread."},
    {"pop", mod_pop, METH_NOARGS, "pop() -> depth: closes this thread's innermost range."},
    {"step", mod_step, METH_NOARGS, "step(): a step boundary (drives CUPTRACE_STEPS)."},
    {"start", mod_start, METH_NOARGS, "start(): opens a capture window (capture=api)."},
    {"stop", mod_stop, METH_NOARGS, "stop(): closes the capture window."},
    {"flush", mod_flush, METH_NOARGS,
     "flush() -> path or None: everything recorded so far into the trace file, waited for."},
    {"rotate", mod_rotate, METH_NOARGS,
     "rotate() -> path or None: finishes the trace file (as at exit) and records on into a new "
     "one; returns the finished file's path (None: nothing recorded since the last one)."},
    {"dump", mod_dump, METH_NOARGS,
     "dump() -> bool: flight mode (flight=SECONDS): writes the last SECONDS kept in memory as a "
     "trace file, and makes every rank of the job do the same; never waits. False when this "
     "process is not tracing in flight mode."},
    {"enabled", mod_enabled, METH_NOARGS, "enabled() -> bool: is this process tracing?"},
    {"_bind", mod_bind, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {
    PyModuleDef_HEAD_INIT, "cuptrace._cuptrace", "cuptrace's annotations, in C.", -1,
    mod_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__cuptrace(void)
{
	if (PyType_Ready(&RangeType) < 0 || PyType_Ready(&WrappedType) < 0 ||
	    PyType_Ready(&SpecialType) < 0)
		return NULL;
	PyObject *special = PyObject_New(PyObject, &SpecialType);
	if (!special || PyDict_SetItemString(RangeType.tp_dict, "__enter__", special) ||
	    PyDict_SetItemString(RangeType.tp_dict, "__exit__", special))
		return NULL;
	Py_DECREF(special);
	PyType_Modified(&RangeType);
	PyObject *m = PyModule_Create(&moddef);
	if (!m)
		return NULL;
	cache = PyDict_New();
	Py_INCREF(&RangeType);
	Py_INCREF(&WrappedType);
	if (!cache || PyModule_AddObject(m, "Range", (PyObject *)&RangeType) < 0 ||
	    PyModule_AddObject(m, "Annotated", (PyObject *)&WrappedType) < 0 ||
	    ct_py_torch_init(m) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
