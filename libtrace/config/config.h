// SPDX-License-Identifier: MIT
/* CUPTRACE_* settings: parsing and validation, shared by the injected
 * library (which reads the environment) and the launcher (which rejects a
 * bad value before it starts anything). */
#ifndef CT_CONFIG_H
#define CT_CONFIG_H

#include <stddef.h>

enum ct_source {
	CT_SRC_KERNEL = 1u << 0,
	CT_SRC_MEMCPY = 1u << 1,
	CT_SRC_API = 1u << 2,
	CT_SRC_SYNC = 1u << 3,
	CT_SRC_MEMORY = 1u << 4,
	CT_SRC_NVTX = 1u << 5,
	CT_SRC_NCCL = 1u << 6,
	CT_SRC_TORCH = 1u << 7, /* PyTorch operators, through the Python package's observer */
	CT_SRC_MPI = 1u << 8, /* not in the default set (docs/recording.md, "MPI") */
};
#define CT_SRC_CUDA (CT_SRC_KERNEL | CT_SRC_MEMCPY | CT_SRC_API | CT_SRC_SYNC)

/* CUPTRACE_TORCH: what the torch source adds to each operator. The values
 * are cuptrace_torch_config()'s bits (include/cuptrace/torch_abi.h). */
enum ct_torch_detail {
	CT_TORCH_SHAPES = 1u << 1, /* input sizes and types */
	CT_TORCH_MEMORY = 1u << 2, /* allocations and frees */
	CT_TORCH_STACK = 1u << 3,  /* Python frames */
};

enum ct_capture_mode { CT_CAPTURE_ALWAYS, CT_CAPTURE_API, CT_CAPTURE_NVTX };
/* CUPTRACE_CLOCK: what the rings' records are stamped with (libtrace/clock.c). */
enum ct_clock_mode { CT_CLOCK_AUTO, CT_CLOCK_TSC, CT_CLOCK_MONOTONIC };
enum ct_log_level { CT_LOG_QUIET, CT_LOG_WARN, CT_LOG_INFO, CT_LOG_DEBUG };

#define CT_MAX_RANGES 64
#define CT_NAME_MAX 256

struct ct_rankset {
	int all;   /* every rank traces */
	int local; /* the ranges name node-local ranks ("local:0") */
	int n;
	long lo[CT_MAX_RANGES], hi[CT_MAX_RANGES];
	/* With local: a cut-off on the global rank as well ("local:0@0-7",
	 * local rank 0 among ranks 0-7); gn 0: none. */
	int gn;
	long glo[CT_MAX_RANGES], ghi[CT_MAX_RANGES];
};

struct ct_steps {
	int on;
	unsigned long skip_first, wait, warmup, active, repeat;
};

struct ct_config {
	char output[4096];
	unsigned sources;
	struct ct_rankset ranks;
	double delay, duration; /* seconds; duration 0 = unlimited */
	enum ct_capture_mode capture;
	char capture_name[CT_NAME_MAX], capture_domain[CT_NAME_MAX];
	unsigned long capture_repeat; /* 0 = unlimited */
	struct ct_steps steps;
	char step_range[CT_NAME_MAX];
	unsigned long buffer_mb;
	enum ct_log_level log;
	double hang_timeout; /* seconds; 0 = off (CUPTRACE_HANG_TIMEOUT) */
	enum ct_clock_mode clock; /* the library puts the mode it chose here */
	unsigned torch;		  /* enum ct_torch_detail bits (CUPTRACE_TORCH) */
	/* The flight recorder (docs/flight-recorder.md): the window in
	 * seconds, 0 = off (CUPTRACE_FLIGHT); its memory (CUPTRACE_FLIGHT_MB);
	 * the signal that dumps, 0 = none; the slow-step factor, 0 = off;
	 * whether a clean exit dumps (CUPTRACE_FLIGHT_EXIT=always). */
	double flight;
	unsigned long flight_mb;
	int flight_signal;
	double flight_slow;
	int flight_exit;
	int hang_default; /* hang_timeout is flight mode's default, not set */
};

/* Flight mode's defaults: its memory, and the hang watchdog's timeout
 * when CUPTRACE_HANG_TIMEOUT is not set. */
#define CT_FLIGHT_MB_DEFAULT 64
#define CT_FLIGHT_HANG_DEFAULT 300.0

/* "USR2" for CUPTRACE_FLIGHT_SIGNAL's signal numbers. */
const char *ct_signal_name(int sig);

#define CT_DEFAULT_OUTPUT "cuptrace/%h-%p.ctr"

/* The variables, in the order `cuptrace run --help` lists them. */
extern const char *const ct_config_vars[];

typedef const char *(*ct_getenv_fn)(const char *name);

/* Fills *c from the variables `get` returns (NULL = unset). On a bad value
 * returns -1 and writes "CUPTRACE_X=value: why" into err. */
int ct_config_parse(struct ct_config *c, ct_getenv_fn get, char *err, size_t errlen);

/* Parses one variable into *c (used by both the above and the launcher). */
int ct_config_set(struct ct_config *c, const char *name, const char *value, char *err, size_t errlen);

void ct_config_defaults(struct ct_config *c);

/* For each CUPTRACE_* entry of env that is not a known variable, calls warn
 * with the unknown name and the closest known one; names listed (comma-
 * separated) in CT_WARNED_VAR are skipped: `cuptrace run` warns before it
 * launches and sets it, so that the library does not warn a second time. */
#define CT_WARNED_VAR "_CUPTRACE_WARNED"
void ct_config_check_names(char *const *env, void (*warn)(const char *name, const char *closest));

/* For each setting that is valid but does nothing in this configuration
 * (CUPTRACE_HANG_TIMEOUT without the nccl or mpi source, CUPTRACE_TORCH
 * without the torch source), calls warn with its name
 * and why; names listed in CT_WARNED_VAR are skipped as above. */
void ct_config_check_unused(const struct ct_config *c, char *const *env,
			    void (*warn)(const char *name, const char *why));

/* The shortest CUPTRACE_HANG_TIMEOUT, in seconds. */
#define CT_HANG_TIMEOUT_MIN 0.1
#define CT_HANG_TIMEOUT_MIN_STR "0.1"

/* "kernel,memcpy,nvtx"-style text of a source mask. */
void ct_sources_str(unsigned mask, char *buf, size_t len);
/* "shapes,memory"-style text of CUPTRACE_TORCH's bits ("none" for 0). */
void ct_torch_str(unsigned bits, char *buf, size_t len);

/* A rank set as CUPTRACE_RANKS takes it (all, 0,2,8-15, local:N,
 * local:N@0-7) into *s; -1 with why it is not one. The tools' --ranks
 * reads it too. */
int ct_rankset_parse(const char *v, struct ct_rankset *s, char *why, size_t wlen);

/* Whether a process of this rank and local rank traces. -1: unknown, which
 * no range holds (the caller decides what an unknown value means). */
int ct_rankset_has(const struct ct_rankset *s, long rank, long local_rank);

/* Writes "KEY=value\n" lines of the effective configuration. */
size_t ct_config_dump(const struct ct_config *c, char *buf, size_t len);

#endif
