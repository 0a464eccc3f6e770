# SPDX-License-Identifier: MIT
"""What torch.profiler users do with a window, done by the package's own
`cuptrace` program on the window's file: TensorBoard's files
(tensorboard_trace_handler), the Chrome JSON (export_chrome_trace) and the
operator table (key_averages, `cuptrace stats --report torch_op_sum`).

    prof = cuptrace.profile(schedule=cuptrace.schedule(wait=1, warmup=1, active=3),
                            on_trace_ready=cuptrace.tensorboard_trace_handler("./log"))
"""
import json
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


# The torch_op_sum report's columns (`cuptrace stats --format json`), and
# the attribute each is in a row.
_COLUMNS = {
    "Name": "name", "Calls": "calls", "Self CPU (ns)": "self_cpu_ns",
    "CPU Total (ns)": "cpu_total_ns", "CPU Avg (ns)": "avg_ns", "Self GPU (ns)": "self_gpu_ns",
    "GPU Total (ns)": "gpu_ns", "GPU Avg (ns)": "gpu_avg_ns", "Input Dims": "input_shapes",
    "Self CPU (%)": "self_cpu_pct", "Self GPU (%)": "self_gpu_pct",
}
_FIELDS = ("name", "calls", "self_cpu_ns", "cpu_total_ns", "avg_ns", "self_gpu_ns", "gpu_ns",
           "gpu_avg_ns", "input_shapes", "self_cpu_pct", "self_gpu_pct")


class OpRow:
    """One operator (or record_function scope) of key_averages(): name,
    calls, self_cpu_ns, cpu_total_ns, avg_ns (CPU, per call), self_gpu_ns,
    gpu_ns, gpu_avg_ns (None without GPU work), input_shapes (by shape
    only); torch's names too, in microseconds: key, count,
    self_cpu_time_total, cpu_time_total, cpu_time, device_time_total."""

    __slots__ = _FIELDS

    def __init__(self, row):
        for f in _FIELDS:
            setattr(self, f, None)
        for col, value in row.items():
            field = _COLUMNS.get(col, col if col in _FIELDS else None)
            if field is not None:
                setattr(self, field, value)

    key = property(lambda self: self.name)
    count = property(lambda self: self.calls)
    self_cpu_time_total = property(lambda self: _us(self.self_cpu_ns))
    cpu_time_total = property(lambda self: _us(self.cpu_total_ns))
    cpu_time = property(lambda self: _us(self.avg_ns))
    device_time_total = property(lambda self: _us(self.gpu_ns))
    cuda_time_total = device_time_total

    def __repr__(self):
        return (f"OpRow(name={self.name!r}, calls={self.calls}, self_cpu_ns={self.self_cpu_ns}, "
                f"cpu_total_ns={self.cpu_total_ns}, gpu_ns={self.gpu_ns})")


def _us(ns):
    return None if ns is None else ns / 1000.0


# torch's sort keys (EventList.table) and ours: the field to sort on.
_SORT = {"self_cpu_time_total": "self_cpu_ns", "cpu_time_total": "cpu_total_ns",
         "cpu_time": "avg_ns", "cuda_time_total": "gpu_ns", "device_time_total": "gpu_ns",
         "self_cuda_time_total": "self_gpu_ns", "self_device_time_total": "self_gpu_ns",
         "count": "calls"}


class OpAverages(list):
    """key_averages()'s rows (OpRow), in the report's order (largest CPU
    total first), with
    torch's table(sort_by=..., row_limit=...)."""

    def table(self, sort_by=None, row_limit=100):
        """The rows as text, sorted by a field (descending: ours, such as
        "gpu_ns", or torch's, such as "cuda_time_total"), row_limit of them
        (<= 0: all)."""
        rows = list(self)
        if sort_by is not None:
            field = _SORT.get(sort_by, sort_by)
            if field not in _FIELDS:
                raise ValueError(f"table: sort_by={sort_by!r}: one of "
                                 f"{', '.join(_FIELDS[1:8])} or torch's {', '.join(_SORT)}")
            rows.sort(key=lambda r: -1 if getattr(r, field) is None else getattr(r, field),
                      reverse=True)
        if row_limit and row_limit > 0:
            rows = rows[:row_limit]
        cols = [("Name", "name"), ("Calls", "calls"), ("Self CPU", "self_cpu_ns"),
                ("CPU total", "cpu_total_ns"), ("CPU avg", "avg_ns"), ("GPU total", "gpu_ns")]
        if any(r.input_shapes is not None for r in rows):
            cols.insert(1, ("Input Dims", "input_shapes"))
        cells = [[h for h, _ in cols]]
        for r in rows:
            cells.append([_cell(getattr(r, f), f) for _, f in cols])
        widths = [max(len(c[i]) for c in cells) for i in range(len(cols))]
        lines = []
        for n, c in enumerate(cells):
            lines.append("  ".join(v.ljust(w) if i == 0 or cols[i][1] == "input_shapes"
                                   else v.rjust(w) for i, (v, w) in enumerate(zip(c, widths))))
            if n == 0:
                lines.append("  ".join("-" * w for w in widths))
        return "\n".join(lines)

    def __str__(self):
        return self.table()


def _cell(value, field):
    if value is None:
        return "-"
    if field.endswith("_ns"):
        for unit, div in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
            if value >= div:
                return f"{value / div:.3f} {unit}"
        return f"{value} ns"
    return str(value)


def op_rows(text):
    """OpAverages from `cuptrace stats --report torch_op_sum --format json`'s
    output (one object of tables by title)."""
    doc = json.loads(text)
    tables = [rows for title, rows in doc.items() if title.startswith("torch_op_sum")]
    if not tables:
        raise RuntimeError("cuptrace stats wrote no torch_op_sum table (its tables: "
                           f"{', '.join(doc) or 'none'})")
    return OpAverages(OpRow(r) for r in tables[0])


def key_averages(trace, group_by_input_shape=False):
    """The operators of the file `trace` (a window's), as torch.profiler's
    key_averages(): `cuptrace stats --report torch_op_sum` (with
    group_by_input_shape: `--by shape`), its rows as OpRow. Operators are
    recorded by the torch source (`cuptrace run -t ...,torch`,
    CUPTRACE_TRACE); without it the list is empty."""
    args = ["stats", "--report", "torch_op_sum", "--format", "json"]
    if group_by_input_shape:
        args += ["--by", "shape"]
    return op_rows(run_tool(*args, trace))
