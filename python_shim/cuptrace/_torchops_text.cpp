// SPDX-License-Identifier: MIT
// The text an operator's start takes for the library (CUPTRACE_TORCH=shapes):
// its inputs' sizes and types as Kineto's "Input Dims" and "Input type" show
// them (its Python frames: _torchops_frames.c).
//
//   dims   "2,3;3;" : an input's sizes joined by ',', inputs by ';'; an
//          input that is not a defined tensor has none
//   types  "float;float;Scalar" : a tensor's dtype as torch names it
//          (float, long int, c10::Half, ...), "Scalar" for a number or a
//          bool, "TensorList" for a list of tensors (its tensors' sizes are
//          not given, as in torch 1.13's), from torch 2.2 on "ScalarList"
//          for a list of up to 30 numbers (a size, dims), nothing for the
//          rest
#include "_torchops.h"

#include <cstring>

namespace {

struct Out {
	char *buf;
	uint32_t cap, n;

	bool put(const char *s, size_t len)
	{
		if (len > cap - n)
			return false;
		std::memcpy(buf + n, s, len);
		n += (uint32_t)len;
		return true;
	}
	bool put_u(uint64_t v) // (snprintf's cost would be most of an operator's)
	{
		char d[24];
		int k = sizeof d;
		do
			d[--k] = (char)('0' + v % 10);
		while (v /= 10);
		return put(d + k, sizeof d - (size_t)k);
	}
};

// Each input in turn, ';' between them; an input that does not fit ends
// the text before it (the library's cut would fall inside it).
template <typename F> uint32_t each_input(const at::RecordFunction &fn, char *buf, uint32_t cap, F one)
{
	Out o{buf, cap, 0};
	try {
		auto in = fn.inputs();
		for (size_t i = 0; i < in.size(); i++) {
			uint32_t mark = o.n;
			bool ok = !i || o.put(";", 1);
			try {
				ok = ok && one(o, in[i]);
			} catch (...) {
				// A tensor without sizes (nested, symbolic):
				// none, as for an input that is not a tensor.
				o.n = mark + (i ? 1 : 0);
			}
			if (!ok) {
				o.n = mark;
				break;
			}
		}
	} catch (...) {
	}
	return o.n;
}

} // namespace

namespace ct_ops {

uint32_t input_dims(const at::RecordFunction &fn, char *buf, uint32_t cap)
{
	return each_input(fn, buf, cap, [](Out &o, const c10::IValue &v) {
		if (!v.isTensor())
			return true;
		const at::Tensor &t = v.toTensor();
		if (!t.defined())
			return true;
		auto sizes = t.sizes();
		for (size_t j = 0; j < sizes.size(); j++)
			if ((j && !o.put(",", 1)) || !o.put_u((uint64_t)sizes[j]))
				return false;
		return true;
	});
}

uint32_t input_types(const at::RecordFunction &fn, char *buf, uint32_t cap)
{
	return each_input(fn, buf, cap, [](Out &o, const c10::IValue &v) {
		if (v.isTensor()) {
			const at::Tensor &t = v.toTensor();
			if (!t.defined())
				return true;
			auto name = t.dtype().name();
			return o.put(name.data(), name.size());
		}
		if (v.isScalar())
			return o.put("Scalar", 6);
		if (v.isTensorList())
			return o.put("TensorList", 10);
#if CT_TORCH_VERSION_NUM >= 20200
		// torch 2.2 on: a short list of numbers (a size, dims)
		if (v.isList()) {
			auto l = v.toListRef();
			if (l.empty() || (l[0].isScalar() && l.size() <= 30))
				return o.put("ScalarList", 10);
		}
#endif
		return true;
	});
}

} // namespace ct_ops
