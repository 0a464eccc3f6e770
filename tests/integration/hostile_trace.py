# SPDX-License-Identifier: MIT
"""Traces whose strings are not valid UTF-8, for the tests that read each
output with the program its users open it with (Python's sqlite3, pandas,
the perfetto package's protobuf classes). Every byte that begins no valid
sequence must reach them as U+FFFD, as in the Chrome JSON.

hostile_files(d) gives three .ctr files:
- tests/progs/hostile: NVTX messages with invalid UTF-8 (and quotes,
  control characters, 64 KiB names);
- this file run as a program: NVTX through the real NVTX3 loader of
  libnvtx3interop (ctypes) with a domain, a category and a thread named
  with invalid bytes (so string args and track names carry them);
- the first one again as another process of the job whose host name and
  file name hold invalid bytes (CUPTRACE_RANKS.host and path, the process
  names "rank R (host:pid)")."""
import ctypes
import os
import sys
import threading
from pathlib import Path

NVTX3 = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "lib64" / "libnvtx3interop.so.1"
BAD_HOST = b"h\xffst\xc0\xaf"


class RawText(str):
    """A str whose encode() gives bytes that are not UTF-8 (for
    conftest.rewrite_header, which encodes the host it is given)."""

    def __new__(cls, raw):
        obj = super().__new__(cls, raw.decode("latin-1"))
        obj.raw = raw
        return obj

    def encode(self, *args, **kw):
        return self.raw


def hostile_files(d):
    from conftest import PROGS, ctr_files, rewrite_header, run, traced_env
    d = Path(d)
    p = run([PROGS / "hostile"], env=traced_env(d / "hostile"))
    assert p.returncode == 0, p.stderr
    [a] = ctr_files(d / "hostile")
    p = run([sys.executable, __file__, NVTX3], env=traced_env(d / "nvtx3"))
    assert p.returncode == 0 and p.stdout == "done\n", p.stderr
    [b] = ctr_files(d / "nvtx3")
    c = Path(os.fsdecode(bytes(d) + b"/bad\xff\xfename.ctr"))
    c.write_bytes(rewrite_header(a.read_bytes(), host=RawText(BAD_HOST), pid=999999))
    return [a, b, c]


class Attr(ctypes.Structure):
    """nvtxEventAttributes_t (version 3)."""
    _fields_ = [("version", ctypes.c_uint16), ("size", ctypes.c_uint16),
                ("category", ctypes.c_uint32), ("colorType", ctypes.c_int32),
                ("color", ctypes.c_uint32), ("payloadType", ctypes.c_int32),
                ("reserved0", ctypes.c_int32), ("payload", ctypes.c_uint64),
                ("messageType", ctypes.c_int32), ("message", ctypes.c_char_p)]


def main(lib_path):
    lib = ctypes.CDLL(lib_path)
    lib.nvtxDomainCreateA.restype = ctypes.c_void_p
    lib.nvtxDomainCreateA.argtypes = [ctypes.c_char_p]
    lib.nvtxDomainNameCategoryA.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_char_p]
    lib.nvtxNameOsThreadA.argtypes = [ctypes.c_uint32, ctypes.c_char_p]
    lib.nvtxDomainRangePushEx.argtypes = [ctypes.c_void_p, ctypes.POINTER(Attr)]
    lib.nvtxDomainRangePop.argtypes = [ctypes.c_void_p]
    dom = lib.nvtxDomainCreateA(b"dom \xff\xfe")
    lib.nvtxDomainNameCategoryA(dom, 7, b"cat \xc3\x28")
    lib.nvtxNameOsThreadA(threading.get_native_id(), b"thread \xed\xa0\x80")
    a = Attr(version=3, size=ctypes.sizeof(Attr), category=7, messageType=1,  # ASCII
             message=b"msg \xff end")
    lib.nvtxDomainRangePushEx(dom, ctypes.byref(a))
    lib.nvtxDomainRangePop(dom)
    print("done")


if __name__ == "__main__":
    main(sys.argv[1])
