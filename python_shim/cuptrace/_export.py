# SPDX-License-Identifier: MIT
"""What torch.profiler users do with a window, done by the package's own
`cuptrace` program on the window's file: TensorBoard's files
(tensorboard_trace_handler) and the Chrome JSON (export_chrome_trace).

    prof = cuptrace.profile(schedule=cuptrace.schedule(wait=1, warmup=1, active=3),
                            on_trace_ready=cuptrace.tensorboard_trace_handler("./log"))
"""
import os
import socket
import subprocess
import time


def _untraced_env():
    """This process's environment without the library: the program run
    from here is not traced (it would write a file of its own)."""
    env = dict(os.environ)
    pre = [p for p in env.get("LD_PRELOAD", "").replace(" ", ":").split(":")
           if p and not p.endswith("libcuptrace.so")]
    if pre:
        env["LD_PRELOAD"] = ":".join(pre)
    else:
        env.pop("LD_PRELOAD", None)
    for var in ("NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH", "NCCL_PROFILER_PLUGIN"):
        if env.get(var, "").endswith("libcuptrace.so"):
            del env[var]
    return env


def run_tool(*args):
    """Runs the package's `cuptrace` program (program_path()); its stdout,
    or RuntimeError with what it said."""
    from . import program_path
    prog = program_path()
    if prog is None:
        raise RuntimeError("cuptrace: the cuptrace program is not in this package (reinstall it: "
                           "pip install ./python_shim)")
    p = subprocess.run([prog, *map(os.fspath, args)], env=_untraced_env(), capture_output=True,
                       text=True, errors="replace")
    if p.returncode != 0:
        raise RuntimeError(f"cuptrace {args[0]} failed (exit {p.returncode}): "
                           f"{p.stderr.strip() or p.stdout.strip()}")
    return p.stdout


def export_chrome_trace(trace, out):
    """The window's file `trace` as Chrome JSON in `out` (`.json.gz`:
    compressed), Kineto's layout (`cuptrace convert`). Returns out."""
    run_tool("convert", "-o", out, trace)
    return out


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """on_trace_ready for cuptrace.profile, as torch.profiler's of the same
    name: each saved window's file converted (`cuptrace convert`) into
    dir_name/WORKER.TIME.pt.trace.json (.gz with use_gzip), the names
    torch's handler gives and TensorBoard's profiler plugin
    (torch-tb-profiler) opens; WORKER is worker_name or "HOST_PID", as
    torch's, so each rank of a job writes its own. The handler returns the
    file's path (None for a window that recorded nothing)."""
    def handler(path):
        if path is None:
            return None
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        return export_chrome_trace(path, os.path.join(dir_name, name))
    return handler
