// SPDX-License-Identifier: MIT
// cuptrace._torchops: torch's operators, autograd functions and
// record_function scopes as the library's torch source records them
// (include/cuptrace/torch_abi.h), seen by a global RecordFunction callback,
// as torch.profiler sees them but without its event lists: each operator is
// handed to the library as it ends.
//
// An operator (an aten or custom op, an autograd function, TorchScript) is
// a local of the frame that runs it: it ends on the thread it began on,
// after the operators it holds. Its start goes on the thread's stack
// (_torchops.h: no allocation, its input text in the thread's arena), and
// its id is pushed for the CUDA work it launches (cuptrace_torch_enter).
// A record_function scope may end on another thread (its object is Python's)
// and out of order: its start is kept in an ObserverContext, and it pushes
// no id (a kernel's operator is the aten op that launched it; the scope is
// the ops' enclosing slice). Nothing here throws into torch: every callback
// catches all.
#include "_torchops.h"

#include <Python.h>

#include <dlfcn.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>

#ifndef CT_TORCH_VERSION
#error "CT_TORCH_VERSION: the torch.__version__ these headers are of"
#endif

namespace ct_ops {

Lib lib;
thread_local Thread self;

int os_tid()
{
	if (!self.tid)
		self.tid = (int)syscall(SYS_gettid);
	return self.tid;
}

} // namespace ct_ops

namespace {

using namespace ct_ops;

// CUPTRACE_TORCH_* of the installed observer; 0: none (ops that began
// before uninstall still end and are recorded).
std::atomic<unsigned> flags{0};
std::atomic<uint64_t> last_id{0};
at::CallbackHandle handle = 0;

// A scope's start, on the heap: it may end on any thread.
struct Scope final : at::ObserverContext {
	uint64_t id = 0, start = 0;
	int tid = 0;
	bool pushed = false; // cuptrace_torch_enter called (an op too deep for the stack)
	uint32_t dims_len = 0, types_len = 0, stack_len = 0;
	std::string text;
};

uint32_t fold(at::RecordScope s)
{
	switch (s) {
	case at::RecordScope::FUNCTION:
		return CUPTRACE_TORCH_SCOPE_OP;
	case at::RecordScope::BACKWARD_FUNCTION:
		return CUPTRACE_TORCH_SCOPE_BACKWARD;
	case at::RecordScope::USER_SCOPE:
		return CUPTRACE_TORCH_SCOPE_USER;
	default:
		return CUPTRACE_TORCH_SCOPE_OTHER;
	}
}

// dims, types, stack into buf, each cut at the library's 4096 bytes.
void take_text(const at::RecordFunction &fn, unsigned f, char *buf, uint32_t cap,
	       uint32_t *dims, uint32_t *types, uint32_t *stack)
{
	auto part = [&cap](uint32_t used) {
		cap -= used;
		return cap < 4096 ? cap : 4096u;
	};
	*dims = *types = *stack = 0;
	if (f & CUPTRACE_TORCH_SHAPES) {
		*dims = input_dims(fn, buf, part(0));
		*types = input_types(fn, buf + *dims, part(*dims));
	}
	if (f & CUPTRACE_TORCH_STACK)
		*stack = ct_ops_python_stack(buf + *dims + *types, part(*types));
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction &fn)
{
	try {
		unsigned f = flags.load(std::memory_order_relaxed);
		if (!f)
			return nullptr;
		if (f & CUPTRACE_TORCH_MEMORY)
			mem_this_thread();
		uint64_t id = last_id.fetch_add(1, std::memory_order_relaxed) + 1;
		bool scope = fn.scope() == at::RecordScope::USER_SCOPE;
		bool text = f & (CUPTRACE_TORCH_SHAPES | CUPTRACE_TORCH_STACK);
		unsigned d = self.depth;
		if (!scope && d < kDepth && (!text || kArena - arena_top() >= 3 * 4096)) {
			Open &o = self.open[d];
			o.key = &fn;
			o.id = id;
			o.off = arena_top();
			o.types_len = o.stack_len = 0;
			// On the stack before its text is taken, with the rest
			// of the arena held: taking Python frames through the C
			// API (Pythons other than 3.11-3.12) may run a
			// collection, whose finalizers may run operators.
			o.dims_len = (uint32_t)kArena - o.off;
			self.depth = d + 1;
			uint32_t dims = 0, types = 0, stack = 0;
			try {
				if (text)
					take_text(fn, f, self.arena + o.off, o.dims_len, &dims,
						  &types, &stack);
			} catch (...) {
				dims = types = stack = 0;
			}
			o.dims_len = dims, o.types_len = types, o.stack_len = stack;
			o.start = lib.now();
			lib.enter(id);
			return nullptr;
		}
		auto s = std::make_unique<Scope>();
		s->id = id;
		s->tid = os_tid();
		if (text) {
			s->text.resize(3 * 4096);
			take_text(fn, f, &s->text[0], (uint32_t)s->text.size(), &s->dims_len,
				  &s->types_len, &s->stack_len);
			s->text.resize(s->dims_len + s->types_len + s->stack_len);
		}
		s->start = lib.now();
		if (!scope) {
			lib.enter(id);
			s->pushed = true;
		}
		return s;
	} catch (...) {
		return nullptr;
	}
}

void put_text(struct cuptrace_torch_op &op, const char *text, uint32_t dims, uint32_t types,
	      uint32_t stack)
{
	op.dims = text;
	op.dims_len = dims;
	op.types = text + dims;
	op.types_len = types;
	op.stack = text + dims + types;
	op.stack_len = stack;
}

void on_end(const at::RecordFunction &fn, at::ObserverContext *ctx)
{
	try {
		struct cuptrace_torch_op op;
		std::memset(&op, 0, sizeof op);
		op.end = lib.now();
		if (ctx) {
			auto *s = static_cast<Scope *>(ctx);
			if (s->pushed)
				lib.exit();
			op.id = s->id;
			op.start = s->start;
			op.tid = s->tid != os_tid() ? (uint64_t)s->tid : 0;
			put_text(op, s->text.data(), s->dims_len, s->types_len, s->stack_len);
		} else {
			// The innermost open op, but for one that ends out of
			// order; not found: it began before install.
			unsigned d = self.depth, i = d;
			while (i && self.open[i - 1].key != &fn)
				i--;
			if (!i)
				return;
			const Open &o = self.open[i - 1];
			lib.exit();
			op.id = o.id;
			op.start = o.start;
			put_text(op, self.arena + o.off, o.dims_len, o.types_len, o.stack_len);
			// Its text stays in the arena until lib.op() below has
			// copied it; a stack entry removed from the middle leaves
			// its text to be reclaimed with the entries above it.
			if (i != d)
				std::memmove(&self.open[i - 1], &self.open[i], (d - i) * sizeof(Open));
			self.depth = d - 1;
		}
		op.name = fn.name();
		op.name_len = op.name ? (uint32_t)std::strlen(op.name) : 0;
		op.scope = fold(fn.scope());
		int64_t seq = fn.seqNr();
		op.seq = seq >= 0 ? (uint64_t)seq + 1 : 0;
		op.rf_tid = fn.threadId();
		op.fwd_tid = fn.forwardThreadId();
		lib.op(&op);
	} catch (...) {
	}
}

void after_fork_child()
{
	self.tid = 0;
}

template <typename T> bool sym(T &to, const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name);
	to = reinterpret_cast<T>(p);
	return p != nullptr;
}

// install(bits) -> bool: the observer on, with CUPTRACE_TORCH_* bits (the
// library's cuptrace_torch_config() where bits is None); False where the
// library's torch entry points are not in the process or say off.
PyObject *install(PyObject *, PyObject *args)
{
	PyObject *want = Py_None;
	if (!PyArg_ParseTuple(args, "|O:install", &want))
		return nullptr;
	Lib l;
	if (!(sym(l.config, "cuptrace_torch_config") && sym(l.now, "cuptrace_torch_now") &&
	      sym(l.enter, "cuptrace_torch_enter") && sym(l.exit, "cuptrace_torch_exit") &&
	      sym(l.op, "cuptrace_torch_op") && sym(l.mem, "cuptrace_torch_mem")))
		Py_RETURN_FALSE;
	unsigned f;
	if (want == Py_None) {
		f = l.config();
	} else {
		f = (unsigned)PyLong_AsUnsignedLongMask(want);
		if (PyErr_Occurred())
			return nullptr;
	}
	if (!(f & CUPTRACE_TORCH_ON))
		Py_RETURN_FALSE;
	if (handle) // installed already: the same callback, new settings
		at::removeCallback(handle), handle = 0;
	static bool once = (pthread_atfork(nullptr, nullptr, after_fork_child), true);
	(void)once;
	try {
		if (!lib.op)
			lib = l;
		mem_setup(f & CUPTRACE_TORCH_MEMORY);
		flags.store(f, std::memory_order_relaxed);
		// Every scope, as torch.profiler's default; inputs boxed only
		// for their sizes.
		handle = at::addGlobalCallback(at::RecordFunctionCallback(on_start, on_end)
						       .needsInputs((f & CUPTRACE_TORCH_SHAPES) != 0));
	} catch (const std::exception &e) {
		flags.store(0);
		PyErr_SetString(PyExc_RuntimeError, e.what());
		return nullptr;
	}
	Py_RETURN_TRUE;
}

// uninstall(): no more operators recorded (those open still end).
PyObject *uninstall(PyObject *, PyObject *)
{
	flags.store(0);
	try {
		mem_setup(false);
		if (handle)
			at::removeCallback(handle);
	} catch (const std::exception &e) {
		PyErr_SetString(PyExc_RuntimeError, e.what());
		handle = 0;
		return nullptr;
	}
	handle = 0;
	Py_RETURN_NONE;
}

// installed() -> the CUPTRACE_TORCH_* bits in use, 0 when off.
PyObject *installed(PyObject *, PyObject *)
{
	return PyLong_FromUnsignedLong(handle ? flags.load() : 0);
}

// _mem_step_aside() -> bool: this thread's allocation reporter out of
// torch's profiler slot (a torch profiler is starting here); _mem_back()
// puts it back (the profiler stopped).
PyObject *mem_aside(PyObject *, PyObject *)
{
	return PyBool_FromLong(mem_step_aside());
}

PyObject *mem_back(PyObject *, PyObject *)
{
	if (flags.load() & CUPTRACE_TORCH_MEMORY)
		mem_this_thread();
	Py_RETURN_NONE;
}

PyMethodDef methods[] = {
    {"_mem_step_aside", mem_aside, METH_NOARGS, nullptr},
    {"_mem_back", mem_back, METH_NOARGS, nullptr},
    {"install", install, METH_VARARGS,
     "install(bits=None) -> bool: record torch's operators through the library."},
    {"uninstall", uninstall, METH_NOARGS, "uninstall(): stop recording torch's operators."},
    {"installed", installed, METH_NOARGS, "installed() -> CUPTRACE_TORCH_* bits in use, 0: off."},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "cuptrace._torchops",
    "torch's operators to cuptrace's torch source (a RecordFunction observer).", -1,
    methods, nullptr, nullptr, nullptr, nullptr,
};

} // namespace

PyMODINIT_FUNC PyInit__torchops(void)
{
	PyObject *m = PyModule_Create(&module);
	if (!m)
		return nullptr;
	if (PyModule_AddStringConstant(m, "torch_version", CT_TORCH_VERSION) < 0 ||
	    PyModule_AddIntConstant(m, "ON", CUPTRACE_TORCH_ON) < 0 ||
	    PyModule_AddIntConstant(m, "SHAPES", CUPTRACE_TORCH_SHAPES) < 0 ||
	    PyModule_AddIntConstant(m, "MEMORY", CUPTRACE_TORCH_MEMORY) < 0 ||
	    PyModule_AddIntConstant(m, "STACK", CUPTRACE_TORCH_STACK) < 0) {
		Py_DECREF(m);
		return nullptr;
	}
	return m;
}
