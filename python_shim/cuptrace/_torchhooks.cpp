// SPDX-License-Identifier: MIT
// cuptrace._torchhooks: the backward ranges' hooks as autograd pre-hooks on
// grad_fn nodes, in C++ (the interface: _torchhooks.h). A hook fires when
// its node runs in backward, that is when the gradient of the hooked output
// has arrived: it closes the backward ranges of the modules that output went
// into and opens those of the modules it came out of, like _torch.c's
// Python hook, but without the GIL and without wrapping the gradient in a
// Python tensor.
//
// Built against the headers of the torch it runs with (python_shim/setup.py,
// python_shim/python.mk); torch.py loads it only when torch.__version__ is
// the one it was built for (CT_TORCH_VERSION).
#include "_torchhooks.h"

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/python_variable.h>

#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <string>
#include <unordered_set>
#include <vector>

#ifndef CT_TORCH_VERSION
#error "CT_TORCH_VERSION: the torch.__version__ these headers are of"
#endif

namespace {

int (**push_fn)(const char *);
int (**pop_fn)(void);

} // namespace

namespace torch::dynamo::autograd {
class CompiledNodeArgs; // torch 2.x's compiled autograd (declared here for 1.13)
}

// One hook on one node, for one of its outputs (several outputs of a node
// are several tensors: a hook each, as torch's own tensor hooks are).
struct ct_node_hook : torch::autograd::FunctionPreHook {
	explicit ct_node_hook(uint32_t nr) : output_nr(nr) {}

	torch::autograd::variable_list
	operator()(const torch::autograd::variable_list &grads) override
	{
		// What was asked for is done once (a graph kept with
		// retain_graph runs its hooks again).
		int n;
		const char *o;
		std::vector<const char *> m;
		{
			held g(this);
			n = closes;
			closes = 0;
			o = one;
			one = nullptr;
			m.swap(more);
		}
		int (*pop)(void) = pop_fn ? *pop_fn : nullptr;
		int (*push)(const char *) = push_fn ? *push_fn : nullptr;
		if (pop)
			for (int i = 0; i < n; i++)
				pop();
		if (push) {
			if (o)
				push(o);
			// more holds the outer module last: it opens first.
			for (auto it = m.rbegin(); it != m.rend(); ++it)
				push(*it);
		}
		return grads;
	}

	// torch 2.x's compiled autograd asks each pre-hook for its part of the
	// compiled graph; the base class raises (torch's own C++ hooks do), which
	// would fail the program's backward. Ours gives none: under compiled
	// autograd there are no backward ranges (set_backward_hooks("tensor")
	// has them). Not marked override: 1.13 has no such method.
	void compiled_args(torch::dynamo::autograd::CompiledNodeArgs &) const {}

	// The hook's state, taken by another thread's forward (add_close,
	// open_first: under the GIL) while this node runs in a backward (no
	// GIL) is held under a spin lock: a few stores either side, never
	// contended but in that case, so no mutex and no syscall.
	struct held {
		explicit held(ct_node_hook *h) : h(h)
		{
			while (h->busy.test_and_set(std::memory_order_acquire))
				std::this_thread::yield();
		}
		~held() { h->busy.clear(std::memory_order_release); }
		held(const held &) = delete;
		held &operator=(const held &) = delete;
		ct_node_hook *h;
	};

	void add_close()
	{
		held g(this);
		closes++;
	}

	// The range to open before those already asked for.
	void open_first(const char *name)
	{
		held g(this);
		if (!one && more.empty()) {
			one = name;
			return;
		}
		if (one)
			more.push_back(one), one = nullptr;
		more.push_back(name);
	}

	const uint32_t output_nr;
	std::atomic_flag busy = ATOMIC_FLAG_INIT;
	int closes = 0;
	// The ranges to open: one (a module's output hooked by that module
	// alone, the common case: no allocation) or more.
	const char *one = nullptr;
	std::vector<const char *> more;
};

namespace {

ct_node_hook *find(torch::autograd::Node &fn, uint32_t nr)
{
	for (const auto &h : fn.pre_hooks())
		if (auto *mine = dynamic_cast<ct_node_hook *>(h.get()); mine && mine->output_nr == nr)
			return mine;
	return nullptr;
}

int fail(const std::exception &e)
{
	PyErr_SetString(PyExc_RuntimeError, e.what());
	return -1;
}

void set_ranges(int (**push)(const char *), int (**pop)(void))
{
	push_fn = push;
	pop_fn = pop;
}

// Adding the node's first hook of ours while another thread runs that node
// in a backward is the race torch's own Tensor.register_hook has on such a
// node (its hook list is a plain vector); adding to a hook we made already
// is guarded (ct_node_hook::held).
int probe_or_hook(PyObject *t, ct_node_hook **h, bool make)
{
	*h = nullptr;
	if (!THPVariable_Check(t)) {
		PyErr_SetString(PyExc_TypeError, "cuptrace._torchhooks: not a tensor");
		return -1;
	}
	try {
		const at::Tensor &v = THPVariable_Unpack(t);
		if (!v.requires_grad())
			return 0;
		const auto &fn = v.grad_fn();
		if (!fn)
			return 2;
		uint32_t nr = v.output_nr();
		if ((*h = find(*fn, nr)) || !make)
			return 1;
		auto mine = std::make_unique<ct_node_hook>(nr);
		*h = mine.get();
		fn->add_pre_hook(std::move(mine));
		return 1;
	} catch (const std::exception &e) {
		*h = nullptr;
		return fail(e);
	}
}

int probe(PyObject *t, ct_node_hook **h)
{
	return probe_or_hook(t, h, false);
}

int probe_hook(PyObject *t, ct_node_hook **h)
{
	return probe_or_hook(t, h, true);
}

int add_close(ct_node_hook *h)
{
	h->add_close();
	return 0;
}

int open_first(ct_node_hook *h, const char *name)
{
	try {
		h->open_first(name);
		return 0;
	} catch (const std::exception &e) {
		return fail(e);
	}
}

// Range names the hooks hold: one copy per distinct name, for the life of
// the process (a graph may outlive the modules and their Range objects; a
// hook is freed with its node, often where no Python may run).
const char *intern(const char *utf8)
{
	static std::mutex mu;
	static auto *names = new std::unordered_set<std::string>;
	try {
		std::lock_guard<std::mutex> g(mu);
		return names->emplace(utf8).first->c_str();
	} catch (const std::exception &e) {
		fail(e);
		return nullptr;
	}
}

const ct_torchhooks_api api = {
    CT_TORCHHOOKS_ABI, set_ranges, probe, probe_hook, add_close, open_first, intern,
};

PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "cuptrace._torchhooks",
    "Backward-range hooks on autograd nodes, in C++ (cuptrace.torch uses them).", -1,
    nullptr, nullptr, nullptr, nullptr, nullptr,
};

} // namespace

PyMODINIT_FUNC PyInit__torchhooks(void)
{
	PyObject *m = PyModule_Create(&module);
	if (!m)
		return nullptr;
	PyObject *cap = PyCapsule_New(const_cast<ct_torchhooks_api *>(&api),
				      "cuptrace._torchhooks.api", nullptr);
	if (!cap || PyModule_AddObject(m, "api", cap) < 0) {
		Py_XDECREF(cap);
		Py_DECREF(m);
		return nullptr;
	}
	if (PyModule_AddStringConstant(m, "torch_version", CT_TORCH_VERSION) < 0) {
		Py_DECREF(m);
		return nullptr;
	}
	return m;
}
