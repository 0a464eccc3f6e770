// SPDX-License-Identifier: MIT
/* cuptrace.torch's backward ranges, in C: per module call, a Python
 * wrapper, a Python hook and Tensor.register_hook would cost about 8 us a
 * call, 13 % of a small MLP's training step.
 *
 * BackwardHook: the one hook cuptrace puts on a tensor (in the tensor's
 * hook dict, under the key "cuptrace"). Its gradient ends the backward of
 * the modules the tensor was input to (closes first) and starts the
 * backward of the modules whose output it is (opens, outer modules first so
 * that the ranges nest).
 *
 * WithBackward(forward, fwd, bwd): a module's forward inside range fwd;
 * then, when the call's output and input need gradients, the output's hook
 * opens bwd and the input's closes it. Outputs and inputs other than
 * tensors, tuples and lists go through cuptrace.torch's _first_grad_tensor.
 *
 * Where cuptrace._torchhooks is built for the running torch, the hook of a
 * tensor that has a grad_fn is that module's C++ pre-hook on the node
 * (_torchhooks.cpp: the same closes and opens, no Python in backward);
 * BackwardHook then serves leaves and tensor subclasses only. */
#include "_cuptrace.h"
#include "_torchhooks.h"

#include <dlfcn.h>
#include <stddef.h>

/* Set by _torch_setup(Tensor, OrderedDict, first_grad_tensor, api): api is
 * cuptrace._torchhooks' capsule, or None where that module is not built
 * for this torch (then every tensor takes the hook dict route). */
static PyObject *tensor_type, *odict_type, *first_grad;
static const ct_torchhooks_api *nodes;
static PyObject *s_requires_grad, *s_backward_hooks, *s_grad_fn, *s_register_hook_dict, *s_key;

/* ---- BackwardHook ---- */

typedef struct {
	PyObject_HEAD
	Py_ssize_t closes;
	/* The backward ranges to open, outer modules first: NULL, one Range
	 * (a module's output hooked by that module alone: the common case,
	 * no list to allocate) or a list of Range. */
	PyObject *opens;
	vectorcallfunc vectorcall;
} BackwardHook;

static PyTypeObject BackwardHookType;

static PyObject *hook_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
				 PyObject *kwnames)
{
	(void)args, (void)nargsf, (void)kwnames;
	BackwardHook *h = (BackwardHook *)self;
	/* A leaf tensor keeps its hook from one backward to the next: what
	 * was asked for is done once. */
	Py_ssize_t closes = h->closes;
	PyObject *opens = h->opens;
	h->closes = 0, h->opens = NULL;
	if (ct_py_pop)
		for (Py_ssize_t i = 0; i < closes; i++)
			ct_py_pop();
	if (opens && ct_py_push) {
		if (PyList_CheckExact(opens))
			for (Py_ssize_t i = 0; i < PyList_GET_SIZE(opens); i++)
				ct_py_push(((Range *)PyList_GET_ITEM(opens, i))->utf8);
		else
			ct_py_push(((Range *)opens)->utf8);
	}
	Py_XDECREF(opens);
	Py_RETURN_NONE;
}

/* r opens before what h opens already (the outer module's wrapper hooks
 * after the inner one returned). */
static int hook_open_first(BackwardHook *h, Range *r)
{
	if (!h->opens) {
		h->opens = Py_NewRef(r);
		return 0;
	}
	if (!PyList_CheckExact(h->opens)) {
		PyObject *l = PyList_New(2);
		if (!l)
			return -1;
		PyList_SET_ITEM(l, 0, Py_NewRef(r));
		PyList_SET_ITEM(l, 1, h->opens); /* the list takes the reference */
		h->opens = l;
		return 0;
	}
	return PyList_Insert(h->opens, 0, (PyObject *)r);
}

static void hook_dealloc(BackwardHook *h)
{
	Py_XDECREF(h->opens);
	PyObject_Free(h);
}

static PyTypeObject BackwardHookType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "cuptrace._BackwardHook",
    .tp_basicsize = sizeof(BackwardHook),
    .tp_dealloc = (destructor)hook_dealloc,
    .tp_vectorcall_offset = offsetof(BackwardHook, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
};

/* What one tensor of a call is to the backward ranges: whether it needs a
 * gradient, and either its hook (it has one: it does) or what making one
 * takes. Probing reads the tensor's hook dict first (about 50 ns) and then
 * grad_fn, which a new hook needs anyway; `requires_grad` (about 200 ns on
 * torch 1.13) only for tensors with neither: leaves and tensors without
 * gradient. */
typedef struct {
	PyObject *t;	  /* borrowed */
	BackwardHook *h;  /* borrowed from t's hook dict, or NULL */
	PyObject *hooks;  /* t's hook dict or None (new reference) */
	PyObject *gf;	  /* t's grad_fn (new reference) when h is NULL */
} Probe;

static void probe_done(Probe *p)
{
	Py_CLEAR(p->hooks);
	Py_CLEAR(p->gf);
}

/* 1: t needs a gradient, 0: it does not (or cannot be hooked), -1: error.
 * p is set in any case (probe_done releases it). */
static int probe(PyObject *t, Probe *p)
{
	p->t = t, p->h = NULL, p->gf = NULL;
	p->hooks = PyObject_GetAttr(t, s_backward_hooks);
	if (!p->hooks)
		return -1;
	if (p->hooks != Py_None && PyDict_Check(p->hooks)) {
		PyObject *h = PyDict_GetItemWithError(p->hooks, s_key);
		if (h) {
			/* Something else under our key (the hook of another copy
			 * of this module, or the program's own): not ours to
			 * change, and no range goes through this tensor. */
			if (Py_TYPE(h) != &BackwardHookType)
				return 0;
			p->h = (BackwardHook *)h;
			return 1;
		}
		if (PyErr_Occurred())
			return -1;
	}
	p->gf = PyObject_GetAttr(t, s_grad_fn);
	if (!p->gf)
		return -1;
	if (p->gf != Py_None)
		return 1;
	PyObject *rg = PyObject_GetAttr(t, s_requires_grad);
	if (!rg)
		return -1;
	int yes = rg == Py_True;
	Py_DECREF(rg);
	return yes;
}

/* The probed tensor's hook, made and registered when it has none: what
 * Tensor.register_hook does, less its RemovableHandle (about 2 us): the
 * dict is torch's own kind (handles keep weak references to it),
 * registered with the tensor's grad_fn when it has one. Borrowed. */
static BackwardHook *hook_of(Probe *p)
{
	if (p->h)
		return p->h;
	BackwardHook *h = PyObject_New(BackwardHook, &BackwardHookType);
	if (!h)
		return NULL;
	h->closes = 0, h->opens = NULL, h->vectorcall = hook_vectorcall;
	if (p->hooks != Py_None) {
		if (PyObject_SetItem(p->hooks, s_key, (PyObject *)h))
			goto fail;
	} else {
		PyObject *hooks = PyObject_CallNoArgs(odict_type);
		if (!hooks)
			goto fail;
		Py_SETREF(p->hooks, hooks);
		if (PyObject_SetItem(hooks, s_key, (PyObject *)h) ||
		    PyObject_SetAttr(p->t, s_backward_hooks, hooks))
			goto fail;
		if (p->gf != Py_None) {
			PyObject *r = PyObject_CallMethodOneArg(p->gf, s_register_hook_dict, p->t);
			if (!r)
				goto fail;
			Py_DECREF(r);
		}
	}
	Py_DECREF(h); /* the dict holds it */
	return p->h = h;
fail:
	Py_DECREF(h);
	return NULL;
}

/* ---- WithBackward ---- */

typedef struct {
	PyObject_HEAD
	PyObject *forward;
	Range *fwd, *bwd;
	const char *bwd_kept; /* bwd's name for the node hooks (nodes->intern) */
	vectorcallfunc vectorcall;
} WithBackward;

static PyTypeObject WithBackwardType;

static PyObject *first_of(PyObject *const *items, Py_ssize_t n);

/* The tensor of o to hook: o itself when it is a plain tensor, else the
 * first tensor needing a gradient in it, as cuptrace.torch's
 * _first_grad_tensor finds it (tuples and lists here, without a Python
 * call; anything else there), or None. New reference. */
static PyObject *grad_tensor(PyObject *o)
{
	if (Py_TYPE(o) == (PyTypeObject *)tensor_type)
		return Py_NewRef(o);
	if (PyTuple_CheckExact(o))
		return first_of(&PyTuple_GET_ITEM(o, 0), PyTuple_GET_SIZE(o));
	if (PyList_CheckExact(o)) {
		/* A copy: the list may change under a Python call in first_of. */
		PyObject *t = PyList_AsTuple(o);
		if (!t)
			return NULL;
		PyObject *r = first_of(&PyTuple_GET_ITEM(t, 0), PyTuple_GET_SIZE(t));
		Py_DECREF(t);
		return r;
	}
	return PyObject_CallOneArg(first_grad, o);
}

static PyObject *first_of(PyObject *const *items, Py_ssize_t n)
{
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *o = items[i], *r;
		if (o == Py_None || PyLong_CheckExact(o) || PyFloat_CheckExact(o) ||
		    PyUnicode_CheckExact(o) || PyBool_Check(o))
			continue;
		if (Py_TYPE(o) == (PyTypeObject *)tensor_type) {
			PyObject *rg = PyObject_GetAttr(o, s_requires_grad);
			if (!rg)
				return NULL;
			Py_DECREF(rg);
			if (rg == Py_True)
				return Py_NewRef(o);
			continue;
		}
		r = grad_tensor(o);
		if (r != Py_None)
			return r;
		Py_DECREF(r);
	}
	return Py_NewRef(Py_None);
}

/* One tensor of a call, hooked one of two ways: on its grad_fn node in C++
 * (nodes: tensors that have a grad_fn, when cuptrace._torchhooks is built
 * for this torch) or through its hook dict (leaves, and everything without
 * that module). */
typedef struct {
	Probe py;
	int on_node;
	ct_node_hook *node;
} Side;

/* As probe: 1 the tensor needs a gradient, 0 not, -1 error. make: a node
 * hook is made at once (a call's output: one call into C++, not two; an
 * output whose call gets no range after all keeps a hook that does
 * nothing). */
static int side_probe(PyObject *t, Side *s, int make)
{
	s->on_node = 0, s->node = NULL;
	s->py = (Probe){.t = t};
	if (nodes && Py_TYPE(t) == (PyTypeObject *)tensor_type) {
		int r = (make ? nodes->probe_hook : nodes->probe)(t, &s->node);
		if (r != 2) {
			s->on_node = r == 1;
			return r;
		}
	}
	return probe(t, &s->py);
}

/* The side's hook made (when it has none): 0, or -1 with an error. */
static int side_hook(Side *s)
{
	if (s->on_node) {
		if (!s->node) {
			int r = nodes->probe_hook(s->py.t, &s->node);
			if (r < 0)
				return -1;
			if (r != 1 || !s->node)
				return PyErr_SetString(PyExc_RuntimeError,
						       "cuptrace: a tensor lost its grad_fn"),
				       -1;
		}
		return 0;
	}
	return hook_of(&s->py) ? 0 : -1;
}

static int side_open_first(Side *s, WithBackward *w)
{
	if (!s->on_node)
		return hook_open_first(s->py.h, w->bwd);
	if (!w->bwd_kept && !(w->bwd_kept = nodes->intern(w->bwd->utf8)))
		return -1;
	return nodes->open_first(s->node, w->bwd_kept);
}

static int side_close(Side *s)
{
	if (s->on_node)
		return nodes->add_close(s->node);
	s->py.h->closes++;
	return 0;
}

/* The hooks of one call: out's gradient opens bwd, the input's closes it.
 * Nothing is hooked unless both need a gradient. */
static int hook_call(WithBackward *w, PyObject *out, PyObject *const *args, Py_ssize_t n)
{
	PyObject *t_out = grad_tensor(out), *t_in = NULL;
	Side so = {0}, si = {0};
	int rc = -1, yes;
	if (!t_out)
		return -1;
	if (t_out == Py_None || (yes = side_probe(t_out, &so, 1)) == 0) {
		rc = 0;
		goto out;
	}
	if (yes < 0)
		goto out;
	t_in = n == 1 ? grad_tensor(args[0]) : first_of(args, n);
	if (!t_in)
		goto out;
	/* An identity (its input is its output): no gradient of its own to
	 * range, and one hook that opened and closed it would close the
	 * range of whatever was open before it. */
	if (t_in == Py_None || t_in == t_out || (yes = side_probe(t_in, &si, 0)) == 0) {
		rc = 0;
		goto out;
	}
	if (yes < 0)
		goto out;
	if (side_hook(&so) || side_hook(&si))
		goto out;
	/* The same output of the same node: the same tensor seen through two
	 * Python objects, an identity too. */
	if (so.on_node && so.node == si.node) {
		rc = 0;
		goto out;
	}
	if (side_open_first(&so, w) == 0)
		rc = side_close(&si);
out:
	probe_done(&so.py);
	probe_done(&si.py);
	Py_XDECREF(t_in);
	Py_DECREF(t_out);
	return rc;
}

static PyObject *wb_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
			       PyObject *kwnames)
{
	WithBackward *w = (WithBackward *)self;
	if (!ct_py_push)
		return PyObject_Vectorcall(w->forward, args, nargsf, kwnames);
	ct_py_push(w->fwd->utf8);
	PyObject *out = PyObject_Vectorcall(w->forward, args, nargsf, kwnames);
	if (ct_py_pop)
		ct_py_pop();
	/* The input is among the positional arguments; keyword arguments are
	 * not looked at. */
	if (out && hook_call(w, out, args, PyVectorcall_NARGS(nargsf)) < 0)
		Py_CLEAR(out);
	return out;
}

static PyObject *wb_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	PyObject *forward;
	Range *fwd, *bwd;
	static char *kwl[] = {"forward", "fwd", "bwd", NULL};
	if (!PyArg_ParseTupleAndKeywords(args, kw, "OO!O!:_WithBackward", kwl, &forward,
					 &RangeType, &fwd, &RangeType, &bwd))
		return NULL;
	WithBackward *w = PyObject_GC_New(WithBackward, type);
	if (!w)
		return NULL;
	w->forward = Py_NewRef(forward);
	w->fwd = (Range *)Py_NewRef(fwd);
	w->bwd = (Range *)Py_NewRef(bwd);
	w->bwd_kept = NULL;
	w->vectorcall = wb_vectorcall;
	PyObject_GC_Track(w);
	return (PyObject *)w;
}

static int wb_traverse(WithBackward *w, visitproc visit, void *arg)
{
	Py_VISIT(w->forward);
	return 0;
}

static int wb_clear(WithBackward *w)
{
	Py_CLEAR(w->forward);
	return 0;
}

static void wb_dealloc(WithBackward *w)
{
	PyObject_GC_UnTrack(w);
	wb_clear(w);
	Py_CLEAR(w->fwd);
	Py_CLEAR(w->bwd);
	PyObject_GC_Del(w);
}

/* pickle (torch.save of an annotated model): saved as the forward it
 * wraps, so that the file loads where cuptrace is not installed (the type
 * cannot be found by name: saving failed). */
static PyObject *wb_reduce(WithBackward *w, PyObject *unused)
{
	(void)unused;
	if (!w->forward)
		return PyErr_Format(PyExc_ValueError, "cleared _WithBackward"), NULL;
	return PyObject_CallMethod(w->forward, "__reduce__", NULL);
}

/* copy.deepcopy of an annotated model: the copy's wrapper calls the copy's
 * own forward. */
static PyObject *wb_deepcopy(WithBackward *w, PyObject *memo)
{
	if (!w->forward)
		return PyErr_Format(PyExc_ValueError, "cleared _WithBackward"), NULL;
	PyObject *copy = PyImport_ImportModule("copy");
	PyObject *fn = copy ? PyObject_CallMethod(copy, "deepcopy", "OO", w->forward, memo) : NULL;
	Py_XDECREF(copy);
	if (!fn)
		return NULL;
	PyObject *r = PyObject_CallFunctionObjArgs((PyObject *)Py_TYPE(w), fn, (PyObject *)w->fwd,
						   (PyObject *)w->bwd, NULL);
	Py_DECREF(fn);
	return r;
}

static PyMethodDef wb_methods[] = {
    {"__reduce__", (PyCFunction)wb_reduce, METH_NOARGS, NULL},
    {"__deepcopy__", (PyCFunction)wb_deepcopy, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject WithBackwardType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "cuptrace._WithBackward",
    .tp_basicsize = sizeof(WithBackward),
    .tp_dealloc = (destructor)wb_dealloc,
    .tp_vectorcall_offset = offsetof(WithBackward, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "_WithBackward(forward, fwd, bwd): forward in range fwd, its backward in bwd.",
    .tp_traverse = (traverseproc)wb_traverse,
    .tp_clear = (inquiry)wb_clear,
    .tp_methods = wb_methods,
    .tp_new = wb_new,
};

static PyObject *torch_setup(PyObject *m, PyObject *args)
{
	(void)m;
	PyObject *t, *od, *fg, *api = Py_None;
	if (!PyArg_ParseTuple(args, "OOO|O:_torch_setup", &t, &od, &fg, &api))
		return NULL;
	const ct_torchhooks_api *a = NULL;
	if (api != Py_None) {
		a = PyCapsule_GetPointer(api, "cuptrace._torchhooks.api");
		if (!a)
			return NULL;
		if (a->abi != CT_TORCHHOOKS_ABI)
			return PyErr_Format(PyExc_ImportError,
					    "cuptrace._torchhooks: interface %d, not %d", a->abi,
					    CT_TORCHHOOKS_ABI),
			       NULL;
		a->set_ranges(&ct_py_push, &ct_py_pop);
	}
	nodes = a;
	Py_XSETREF(tensor_type, Py_NewRef(t));
	Py_XSETREF(odict_type, Py_NewRef(od));
	Py_XSETREF(first_grad, Py_NewRef(fg));
	Py_RETURN_NONE;
}

/* _torch_config() -> the library's cuptrace_torch_config() bits
 * (include/cuptrace/torch_abi.h: the torch source on, shapes, memory,
 * stack); 0 where the process does not trace (the library says so, or
 * is not in the process) or its library has no torch source. Not through
 * _bind's pointers: cuptrace._auto asks before the package binds. */
static PyObject *torch_config(PyObject *m, PyObject *unused)
{
	(void)m, (void)unused;
	unsigned (*config)(void);
	*(void **)&config = dlsym(RTLD_DEFAULT, "cuptrace_torch_config");
	return PyLong_FromUnsignedLong(config ? config() : 0);
}

static PyMethodDef torch_methods[] = {
    {"_torch_setup", torch_setup, METH_VARARGS, NULL},
    {"_torch_config", torch_config, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

int ct_py_torch_init(PyObject *m)
{
	if (PyType_Ready(&BackwardHookType) < 0 || PyType_Ready(&WithBackwardType) < 0)
		return -1;
	s_requires_grad = PyUnicode_InternFromString("requires_grad");
	s_backward_hooks = PyUnicode_InternFromString("_backward_hooks");
	s_grad_fn = PyUnicode_InternFromString("grad_fn");
	s_register_hook_dict = PyUnicode_InternFromString("_register_hook_dict");
	s_key = PyUnicode_InternFromString("cuptrace");
	if (!s_requires_grad || !s_backward_hooks || !s_grad_fn || !s_register_hook_dict || !s_key)
		return -1;
	Py_INCREF(&WithBackwardType);
	if (PyModule_AddObject(m, "_WithBackward", (PyObject *)&WithBackwardType) < 0)
		return -1;
	return PyModule_AddFunctions(m, torch_methods);
}
