// SPDX-License-Identifier: MIT
/* Finding CUPTI at InitializeInjection time. Two CUPTI instances in one
 * process must never happen, so the CUPTI the process already holds wins:
 * first whatever the global scope resolves (a program linked with libcupti,
 * or a preloaded one), then any libcupti already loaded privately (Python
 * extensions such as PyTorch load theirs RTLD_LOCAL), and only then a new
 * dlopen, preferring the CUPTI of the CUDA runtime the process uses. */
#include "cupti_int.h"
#include "log.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ct_cupti_fns ct_cu;

struct scan {
	char cupti[4096]; /* path of a libcupti already mapped */
	int cudart_major; /* from a mapped libcudart.so.N */
};

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static int on_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct scan *sc = arg;
	const char *name = info->dlpi_name;
	if (!name || !name[0])
		return 0;
	const char *b = base(name);
	if (!sc->cupti[0] && !strncmp(b, "libcupti.so", 11))
		snprintf(sc->cupti, sizeof sc->cupti, "%s", name);
	if (!sc->cudart_major && !strncmp(b, "libcudart.so.", 13))
		sc->cudart_major = atoi(b + 13);
	return 0;
}

#define SYM(h, field, name, required)                                                              \
	do {                                                                                       \
		*(void **)&ct_cu.field = dlsym((h), (name));                                       \
		if ((required) && !ct_cu.field)                                                    \
			missing = (name);                                                          \
	} while (0)

/* Fills ct_cu from handle h; NULL when complete, else a missing name. */
static const char *fill(void *h)
{
	const char *missing = NULL;
	memset(&ct_cu, 0, sizeof ct_cu);
	SYM(h, subscribe, "cuptiSubscribe", 1);
	SYM(h, subscribe_v2, "cuptiSubscribe_v2", 0);
	SYM(h, unsubscribe, "cuptiUnsubscribe", 1);
	SYM(h, enable_callback, "cuptiEnableCallback", 1);
	SYM(h, register_callbacks, "cuptiActivityRegisterCallbacks", 1);
	SYM(h, register_timestamp, "cuptiActivityRegisterTimestampCallback", 0);
	SYM(h, get_timestamp, "cuptiGetTimestamp", 0);
	SYM(h, set_thread_id_type, "cuptiSetThreadIdType", 0);
	SYM(h, enable, "cuptiActivityEnable", 1);
	SYM(h, disable, "cuptiActivityDisable", 1);
	SYM(h, enable_runtime_api, "cuptiActivityEnableRuntimeApi", 0);
	SYM(h, enable_driver_api, "cuptiActivityEnableDriverApi", 0);
	SYM(h, flush_all, "cuptiActivityFlushAll", 1);
	SYM(h, next_record, "cuptiActivityGetNextRecord", 1);
	SYM(h, dropped, "cuptiActivityGetNumDroppedRecords", 1);
	SYM(h, result_string, "cuptiGetResultString", 1);
	SYM(h, callback_name, "cuptiGetCallbackName", 1);
	SYM(h, push_ext, "cuptiActivityPushExternalCorrelationId", 0);
	SYM(h, pop_ext, "cuptiActivityPopExternalCorrelationId", 0);
	/* Without our own clock in CUPTI we must be able to map its clock. */
	if (!ct_cu.register_timestamp && !ct_cu.get_timestamp)
		missing = "cuptiGetTimestamp";
	return missing;
}

static int try_open(const char *path, char *from, size_t n)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return -1;
	const char *missing = fill(h);
	if (missing) {
		ct_debug("%s lacks %s; not used", path, missing);
		dlclose(h);
		return -1;
	}
	snprintf(from, n, "%s", path);
	return 0;
}

int ct_cupti_resolve(char *from, size_t n)
{
	/* 1. The process's global scope (linked or preloaded CUPTI). */
	if (dlsym(RTLD_DEFAULT, "cuptiActivityRegisterCallbacks") && !fill(RTLD_DEFAULT)) {
		Dl_info info;
		if (dladdr(*(void **)&ct_cu.register_callbacks, &info) && info.dli_fname)
			snprintf(from, n, "%s (already loaded)", info.dli_fname);
		else
			snprintf(from, n, "the process");
		return 0;
	}
	/* 2. A libcupti mapped privately by some library of the process. */
	struct scan sc = {{0}, 0};
	dl_iterate_phdr(on_object, &sc);
	if (sc.cupti[0]) {
		void *h = dlopen(sc.cupti, RTLD_NOW | RTLD_NOLOAD);
		if (h && !fill(h)) {
			snprintf(from, n, "%s (already loaded)", sc.cupti);
			return 0;
		}
		if (h)
			dlclose(h);
	}
	/* 3. A new one: the soname of the runtime's major version first, then
	 * the usual names and toolkit places. */
	char name[64];
	if (sc.cudart_major > 0) {
		snprintf(name, sizeof name, "libcupti.so.%d", sc.cudart_major);
		if (!try_open(name, from, n))
			return 0;
	}
	static const char *const names[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (!try_open(names[i], from, n))
			return 0;
	const char *home = secure_getenv("CUDA_HOME");
	const char *homes[] = {home, "/usr/local/cuda"};
	static const char *const dirs[] = {"extras/CUPTI/lib64", "lib64",
	                                   "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"};
	for (size_t k = 0; k < 2; k++) {
		if (!homes[k] || !homes[k][0])
			continue;
		for (size_t d = 0; d < sizeof dirs / sizeof *dirs; d++) {
			char path[4096];
			snprintf(path, sizeof path, "%s/%s/libcupti.so", homes[k], dirs[d]);
			if (!try_open(path, from, n))
				return 0;
		}
	}
	memset(&ct_cu, 0, sizeof ct_cu);
	snprintf(from, n,
	         "no libcupti found (looked in the process, the library path, "
	         "$CUDA_HOME and /usr/local/cuda)");
	return -1;
}
