# SPDX-License-Identifier: MIT
"""PyTorch operators, scopes, memory and external ids in the outputs other
than the JSON (test_torch_json.py): the SQLite tables, read with Python's
sqlite3, and their joins. The trace is tests/unit/tool_test_torch.c's,
written with the real encoder, every value known."""
import sqlite3
import subprocess

import pytest

from conftest import BUILD, tool

WRITER = BUILD / "tests" / "unit" / "tool_test_torch"
HOSTILE = b'evil "q" \\ \x01\xff\xfe'.decode("utf-8", "replace")


@pytest.fixture(scope="module")
def ctr(tmp_path_factory):
    assert WRITER.exists(), f"{WRITER} is built by make test-unit"
    d = tmp_path_factory.mktemp("torch_out")
    subprocess.run([str(WRITER), str(d / "torch.ctr")], check=True)
    return d / "torch.ctr"


@pytest.fixture(scope="module")
def db(ctr):
    out = ctr.with_suffix(".sqlite")
    p = tool("export", "-o", out, ctr)
    assert p.returncode == 0, p.stderr
    return sqlite3.connect(out)


def test_sqlite_operators(db):
    rows = db.execute(
        "SELECT s.value, o.scope, o.sequenceNumber, o.threadNumber, o.fwdThreadNumber, "
        "o.inputDims, o.inputTypes, o.stack, o.end - o.start, o.globalTid & 0xffffff, "
        "o.endGlobalTid & 0xffffff, o.externalId & 0xffffffff "
        "FROM CUPTRACE_TORCH_OPS o JOIN StringIds s ON s.id = o.nameId").fetchall()
    by = {r[0]: r[1:] for r in rows}
    assert by["aten::mm"] == ("op", 5, 1, None, "2,3;3,4", "float;float",
                              "train.py(12): forward;train.py(30): <module>", 500, 100, None, 2)
    assert by["MmBackward0"] == ("backward", 5, 2, 1, None, None, None, 500, 200, None, 7)
    assert by["handoff"][0] == "user" and by["handoff"][8:] == (100, 200, 5)
    # text as recorded, made valid UTF-8
    assert by[HOSTILE][:1] == ("other",) and by[HOSTILE][4:7] == ("0,1;07", 'fl"oat;\ufffd',
                                                                   "f\n\x7f\\")


def test_sqlite_kernels_join_their_operator(db):
    """kernel -> CUPTRACE_TORCH_CORRELATION -> CUPTRACE_TORCH_OPS, as
    docs/SQLITE.md shows."""
    rows = db.execute(
        "SELECT k.correlationId & 0xffffffff, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN CUPTRACE_TORCH_CORRELATION c USING (correlationId) "
        "JOIN CUPTRACE_TORCH_OPS o USING (externalId) "
        "JOIN StringIds s ON s.id = o.nameId ORDER BY 1").fetchall()
    assert rows == [(10, "aten::mm"), (11, "aten::add"), (20, "handoff")]


def test_sqlite_memory(db):
    rows = db.execute("SELECT m.deviceId, m.address, m.bytes, m.totalAllocated, m.totalReserved, "
                      "s.value FROM CUPTRACE_TORCH_MEMORY m JOIN CUPTRACE_TORCH_OPS o "
                      "USING (externalId) JOIN StringIds s ON s.id = o.nameId").fetchall()
    assert rows == [(0, 0x7f00, 512, 4608, 1 << 20, "aten::mm")]
