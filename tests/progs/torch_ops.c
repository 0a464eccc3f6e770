// SPDX-License-Identifier: MIT
/* Plays the Python package's RecordFunction observer (the torch source,
 * include/cuptrace/torch_abi.h) exactly as it calls the library: the
 * exports found with dlsym(RTLD_DEFAULT, ...), nothing at all when one is
 * missing or cuptrace_torch_config() says 0, and otherwise what a small
 * training loop makes torch report. usage:
 *   torch_ops [N] [steps] [long] [ignore-config] [flood]
 * N iterations (default 3), each:
 *   main thread (RecordFunction thread id 1):
 *     [ProfilerStep#i]                         with `steps`, as torch.profiler
 *       ## forward ##                          record_function scope
 *         aten::linear > aten::t, aten::addmm  addmm with a sequence number
 *         aten::relu                           with a sequence number
 *       ## async ##                            a scope begun here and ended
 *                                              on the autograd thread
 *   autograd thread (id 2), its ops' forward thread id 1:
 *     autograd::engine::evaluate_function: ReluBackward0 > ReluBackward0
 *       > aten::threshold_backward             sequence number of aten::relu's
 *     autograd::engine::evaluate_function: AddmmBackward0 > AddmmBackward0
 *       > aten::mm, aten::mm                   sequence number of aten::addmm's
 * Before the loop, one aten::to (where a CUDA program initialises CUDA).
 * Input sizes and types go with each aten op where the config has SHAPES,
 * Python frames with the forward ops where it has STACK; where it has
 * MEMORY, the ops allocate (device 0) and their outputs are freed at the
 * end of the iteration outside any op, and ## forward ## allocates and
 * frees on the CPU (device -1), with the allocator's running totals.
 * Around each op: cuptrace_torch_enter(id) and cuptrace_torch_exit(), as
 * the observer does, and the start and end from cuptrace_torch_now().
 * `long`: at the end, one op whose name is 5000 bytes (the library cuts
 * it at 4096). `ignore-config`: acts as if the config had every bit
 * (shapes, memory and stack everywhere, even where it says 0): what the
 * library records then is what it, not the program, let through.
 * `flood`: in place of the iterations, N ops back to back on the main
 * thread, each with a 4000-byte stack where the config has STACK, and no
 * truth line of their own (the counts at the end say them): faster than
 * the writer can take them from a small buffer.
 *
 * Built a second time with -DTORCH_SIM (build/tests/cupti_sim/torch_ops_sim,
 * linked with the CUPTI simulator): aten::to initialises CUDA, and the
 * ops with GPU work launch a kernel each (addmm, relu, threshold_backward,
 * each mm) on the simulated GPU, from the thread that runs them.
 *
 * Everything it hands the library goes to $CT_TEST_TRUTH (truth.h), one
 * JSON line per op (as recorded, with CLOCK_MONOTONIC readings a before
 * its start and b after its end), per memory event, per kernel (its
 * correlation id and the op that launched it), and a last "done" line
 * with the counts. */
#include "cuptrace/torch_abi.h"
#include "truth.h"

#ifdef TORCH_SIM
#include "../cupti_sim/cupti_sim.h"
#endif

#include <dlfcn.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <string.h>

static struct {
	unsigned (*config)(void);
	uint64_t (*now)(void);
	void (*enter)(uint64_t);
	void (*exit)(void);
	void (*op)(const struct cuptrace_torch_op *);
	void (*mem)(uint64_t, int64_t, int64_t, uint64_t, uint64_t, uint64_t);
} lib;

static unsigned cfg;
static int quiet; /* no truth line per op (flood) */

static int resolve(void)
{
	*(void **)&lib.config = dlsym(RTLD_DEFAULT, "cuptrace_torch_config");
	*(void **)&lib.now = dlsym(RTLD_DEFAULT, "cuptrace_torch_now");
	*(void **)&lib.enter = dlsym(RTLD_DEFAULT, "cuptrace_torch_enter");
	*(void **)&lib.exit = dlsym(RTLD_DEFAULT, "cuptrace_torch_exit");
	*(void **)&lib.op = dlsym(RTLD_DEFAULT, "cuptrace_torch_op");
	*(void **)&lib.mem = dlsym(RTLD_DEFAULT, "cuptrace_torch_mem");
	return lib.config && lib.now && lib.enter && lib.exit && lib.op && lib.mem ? 0 : -1;
}

/* ---- the observer's per-thread state: its open ops, innermost last */

struct open_op {
	uint64_t id, seq, fwd_tid, start, a;
	uint32_t scope;
	const char *name, *dims, *types, *stack;
	struct rf_thread *th; /* the thread it began on */
};

struct rf_thread {
	uint64_t rf_tid;
	int os_tid;
	struct open_op open[16];
	int depth;
};

static __thread struct rf_thread *self;
static _Atomic uint64_t next_id = 1;
static _Atomic unsigned long n_ops, n_mems;
#ifdef TORCH_SIM
static uint32_t stream;
static _Atomic unsigned long n_kernels;
#endif

static void thread_begin(struct rf_thread *t, uint64_t rf_tid)
{
	memset(t, 0, sizeof *t);
	t->rf_tid = rf_tid;
	t->os_tid = gettid_();
	self = t;
}

static struct open_op *op_begin(const char *name, uint32_t scope, uint64_t seq, uint64_t fwd_tid,
                                const char *dims, const char *types, const char *stack)
{
	struct open_op *o = &self->open[self->depth++];
	*o = (struct open_op){.seq = seq,
	                      .fwd_tid = fwd_tid,
	                      .scope = scope,
	                      .name = name,
	                      .dims = cfg & CUPTRACE_TORCH_SHAPES ? dims : "",
	                      .types = cfg & CUPTRACE_TORCH_SHAPES ? types : "",
	                      .stack = cfg & CUPTRACE_TORCH_STACK ? stack : "",
	                      .th = self};
	o->id = atomic_fetch_add(&next_id, 1);
	o->a = mono_ns();
	o->start = lib.now();
	lib.enter(o->id);
	return o;
}

/* The op recorded on the calling thread, which may not be the one it
 * began on (then tid says which). */
static void record(const struct open_op *o, uint64_t end, uint64_t b)
{
	int elsewhere = o->th != self;
	struct cuptrace_torch_op r = {.start = o->start,
	                              .end = end,
	                              .id = o->id,
	                              .seq = o->seq,
	                              .rf_tid = o->th->rf_tid,
	                              .fwd_tid = o->fwd_tid,
	                              .tid = elsewhere ? (uint64_t)o->th->os_tid : 0,
	                              .scope = o->scope,
	                              .name = o->name,
	                              .dims = o->dims,
	                              .types = o->types,
	                              .stack = o->stack,
	                              .name_len = (uint32_t)strlen(o->name),
	                              .dims_len = (uint32_t)strlen(o->dims),
	                              .types_len = (uint32_t)strlen(o->types),
	                              .stack_len = (uint32_t)strlen(o->stack)};
	lib.op(&r);
	atomic_fetch_add(&n_ops, 1);
	if (!quiet)
		truth(
		    "{\"k\":\"op\",\"id\":%llu,\"name\":\"%.100s\",\"name_len\":%u,\"scope\":%u,"
		    "\"seq\":%llu,"
		    "\"rf_tid\":%llu,\"fwd_tid\":%llu,\"tid\":%llu,\"rec_tid\":%d,\"dims\":\"%s\","
		    "\"types\":\"%s\",\"stack\":\"%s\",\"a\":%llu,\"b\":%llu}",
		    (unsigned long long)r.id, r.name, r.name_len, r.scope,
		    (unsigned long long)r.seq, (unsigned long long)r.rf_tid,
		    (unsigned long long)r.fwd_tid, (unsigned long long)r.tid, self->os_tid, r.dims,
		    r.types, r.stack, (unsigned long long)o->a, (unsigned long long)b);
}

/* Ends the innermost open op of this thread. */
static void op_end(void)
{
	struct open_op o = self->open[--self->depth];
	uint64_t end = lib.now();
	lib.exit();
	record(&o, end, mono_ns());
}

/* The innermost open op leaves this thread unended (handed to another). */
static struct open_op op_leave(void)
{
	lib.exit();
	return self->open[--self->depth];
}

/* ---- memory: the caching allocator's totals per device (CPU: -1) */

static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t allocated[2], reserved[2], peak[2];
static uint64_t next_ptr = 0x7f1000000000ull;

#define MB2 (2ull << 20)

static void mem_event(uint64_t ptr, int64_t bytes, int64_t dev)
{
	if (!(cfg & CUPTRACE_TORCH_MEMORY))
		return;
	pthread_mutex_lock(&mem_lock);
	int d = dev < 0 ? 0 : 1;
	allocated[d] += (uint64_t)bytes;
	if (allocated[d] > peak[d])
		peak[d] = allocated[d];
	reserved[d] = dev < 0 ? 0 : (peak[d] + MB2 - 1) / MB2 * MB2;
	uint64_t op = self->depth ? self->open[self->depth - 1].id : 0;
	lib.mem(ptr, bytes, dev, allocated[d], reserved[d], op);
	atomic_fetch_add(&n_mems, 1);
	truth("{\"k\":\"mem\",\"ptr\":%llu,\"bytes\":%lld,\"device\":%lld,\"allocated\":%llu,"
	      "\"reserved\":%llu,\"op\":%llu,\"rec_tid\":%d}",
	      (unsigned long long)ptr, (long long)bytes, (long long)dev,
	      (unsigned long long)allocated[d], (unsigned long long)reserved[d],
	      (unsigned long long)op, self->os_tid);
	pthread_mutex_unlock(&mem_lock);
}

static uint64_t alloc(int64_t bytes, int64_t dev)
{
	pthread_mutex_lock(&mem_lock);
	uint64_t p = next_ptr;
	next_ptr += 4096;
	pthread_mutex_unlock(&mem_lock);
	mem_event(p, bytes, dev);
	return p;
}

/* ---- GPU work of an op (the simulated GPU only) */

static void kernel(const char *name)
{
#ifdef TORCH_SIM
	uint64_t op = self->depth ? self->open[self->depth - 1].id : 0;
	uint32_t corr = sim_launch(stream, name, (struct sim_dim){32, 1, 1},
	                           (struct sim_dim){256, 1, 1}, 32, 0, 0, 5000);
	atomic_fetch_add(&n_kernels, 1);
	truth("{\"k\":\"kernel\",\"name\":\"%s\",\"corr\":%u,\"op\":%llu}", name, corr,
	      (unsigned long long)op);
#else
	(void)name;
#endif
}

#define K_GEMM "_Z4gemmPKfS0_Pfi"
#define K_RELU "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13clamp_min_opEEvi"
#define K_THRB "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_18threshold_bwd_opEEvi"

/* ---- one iteration */

#define STACK_FWD "train.py(21): forward;train.py(40): <module>"
#define EVAL      "autograd::engine::evaluate_function: "

static struct rf_thread main_th;
static sem_t go, done;
static int stopping;
static uint64_t seq_addmm, seq_relu;
static struct open_op handed; /* the scope main began and the autograd thread ends */
static uint64_t grads[3];

static uint64_t seq_next = 100; /* torch's sequence numbers (+ 1), one per autograd node */

static void forward(uint64_t *outs)
{
	op_begin("## forward ##", CUPTRACE_TORCH_SCOPE_USER, 0, 0, "", "", STACK_FWD);
	uint64_t cpu = alloc(4096, -1);
	op_begin("aten::linear", CUPTRACE_TORCH_SCOPE_OP, 0, 0, "8,16;32,16;32",
	         "float;float;float", STACK_FWD);
	op_begin("aten::t", CUPTRACE_TORCH_SCOPE_OP, 0, 0, "32,16", "float", STACK_FWD);
	op_end();
	seq_addmm = ++seq_next;
	op_begin("aten::addmm", CUPTRACE_TORCH_SCOPE_OP, seq_addmm, 0, "32;8,16;16,32;;",
	         "float;float;float;Scalar;Scalar", STACK_FWD);
	outs[0] = alloc(1024, 0);
	kernel(K_GEMM);
	op_end();
	op_end(); /* aten::linear */
	seq_relu = ++seq_next;
	op_begin("aten::relu", CUPTRACE_TORCH_SCOPE_OP, seq_relu, 0, "8,32", "float", STACK_FWD);
	outs[1] = alloc(1024, 0);
	kernel(K_RELU);
	op_end();
	mem_event(cpu, -4096, -1);
	op_end(); /* ## forward ## */
}

static void backward(void)
{
	op_begin(EVAL "ReluBackward0", CUPTRACE_TORCH_SCOPE_BACKWARD, seq_relu, 1, "", "", "");
	op_begin("ReluBackward0", CUPTRACE_TORCH_SCOPE_BACKWARD, seq_relu, 1, "", "", "");
	op_begin("aten::threshold_backward", CUPTRACE_TORCH_SCOPE_OP, 0, 0, "8,32;8,32;",
	         "float;float;Scalar", "");
	grads[0] = alloc(1024, 0);
	kernel(K_THRB);
	op_end();
	op_end();
	op_end();
	op_begin(EVAL "AddmmBackward0", CUPTRACE_TORCH_SCOPE_BACKWARD, seq_addmm, 1, "", "", "");
	op_begin("AddmmBackward0", CUPTRACE_TORCH_SCOPE_BACKWARD, seq_addmm, 1, "", "", "");
	for (int i = 0; i < 2; i++) {
		op_begin("aten::mm", CUPTRACE_TORCH_SCOPE_OP, 0, 0, i ? "32,8;8,16" : "8,32;32,16",
		         "float;float", "");
		grads[1 + i] = alloc(i ? 2048 : 512, 0);
		kernel(K_GEMM);
		op_end();
	}
	op_end();
	op_end();
	for (int i = 0; i < 3; i++)
		mem_event(grads[i], i == 0 ? -1024 : i == 1 ? -512 : -2048, 0);
}

static void *autograd_main(void *arg)
{
	struct rf_thread th;
	(void)arg;
	thread_begin(&th, 2);
	for (;;) {
		while (sem_wait(&go))
			;
		if (stopping)
			break;
		backward();
		/* The scope main began: ended, and recorded, here. */
		uint64_t end = lib.now();
		record(&handed, end, mono_ns());
		sem_post(&done);
	}
	return NULL;
}

static void iteration(int i, int steps)
{
	char step[32];
	snprintf(step, sizeof step, "ProfilerStep#%d", i);
	if (steps)
		op_begin(step, CUPTRACE_TORCH_SCOPE_USER, 0, 0, "", "", "");
	uint64_t outs[2];
	forward(outs);
	op_begin("## async ##", CUPTRACE_TORCH_SCOPE_USER, 0, 0, "", "", STACK_FWD);
	handed = op_leave();
	sem_post(&go);
	while (sem_wait(&done))
		;
	mem_event(outs[0], -1024, 0);
	mem_event(outs[1], -1024, 0);
	if (steps)
		op_end();
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 3, steps = 0, long_name = 0, ignore = 0, flood = 0;
	for (int i = 2; i < argc; i++) {
		steps |= !strcmp(argv[i], "steps");
		long_name |= !strcmp(argv[i], "long");
		ignore |= !strcmp(argv[i], "ignore-config");
		flood |= !strcmp(argv[i], "flood");
	}
	truth_open();
	if (resolve()) {
		truth("{\"k\":\"no_library\"}");
		return 0;
	}
	cfg = lib.config();
	truth("{\"k\":\"config\",\"bits\":%u}", cfg);
	if (ignore)
		cfg = CUPTRACE_TORCH_ON | CUPTRACE_TORCH_SHAPES | CUPTRACE_TORCH_MEMORY |
		      CUPTRACE_TORCH_STACK;
	if (!cfg)
		return 0; /* the observer installs nothing */
	thread_begin(&main_th, 1);
	sem_init(&go, 0, 0);
	sem_init(&done, 0, 0);
	pthread_t autograd;
	pthread_create(&autograd, NULL, autograd_main, NULL);
	op_begin("aten::to", CUPTRACE_TORCH_SCOPE_OP, 0, 0, "8,16;;;;",
	         "float;Device;ScalarType;bool;bool", "train.py(35): <module>");
#ifdef TORCH_SIM
	sim_init(1); /* as torch initialises CUDA on its first CUDA tensor */
	stream = sim_stream_create(0);
#endif
	op_end();
	if (flood) {
		static char stack[4001];
		memset(stack, 'f', 4000);
		quiet = 1;
		for (int i = 0; i < iters; i++) {
			op_begin("aten::add", CUPTRACE_TORCH_SCOPE_OP, 0, 0, "8,16;8,16;",
			         "float;float;Scalar", stack);
			op_end();
		}
		quiet = 0;
	}
	for (int i = 0; i < iters && !flood; i++)
		iteration(i, steps);
	if (long_name) {
		static char name[5001];
		memset(name, 'x', 5000);
		memcpy(name, "custom::", 8);
		op_begin(name, CUPTRACE_TORCH_SCOPE_OP, 0, 0, "", "", "");
		op_end();
	}
	stopping = 1;
	sem_post(&go);
	pthread_join(autograd, NULL);
	truth("{\"k\":\"done\",\"ops\":%lu,\"mems\":%lu,\"kernels\":%lu}", atomic_load(&n_ops),
	      atomic_load(&n_mems),
#ifdef TORCH_SIM
	      atomic_load(&n_kernels)
#else
	      0ul
#endif
	);
	return 0;
}
