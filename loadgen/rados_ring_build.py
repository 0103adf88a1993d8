"""Build loadgen._rados_ring, the librados closed loop's C path (loadgen/rados_ring.c), with
cffi in API mode: `python -m loadgen.rados_ring_build` (make setup runs it).

It needs a C compiler and the headers of Python and librados (Debian: gcc, python3-dev,
librados-dev). A client host without them still loads a cluster: loadgen.rados_ring is then
unavailable and the closed loop runs through python-rados (loadgen.closedloop).
"""

from __future__ import annotations

import os
import subprocess
import sysconfig
from pathlib import Path

import cffi

HERE = Path(__file__).resolve().parent

# what Python calls: librados' connection calls, and the ring's (rados_ring.c)
CDEF = """
typedef void *rados_t;
typedef void *rados_ioctx_t;

int rados_create2(rados_t *pcluster, const char *const clustername,
                  const char *const name, uint64_t flags);
int rados_conf_read_file(rados_t cluster, const char *path);
int rados_conf_set(rados_t cluster, const char *option, const char *value);
int rados_connect(rados_t cluster);
void rados_shutdown(rados_t cluster);
int rados_pool_lookup(rados_t cluster, const char *pool_name);
int rados_ioctx_create(rados_t cluster, const char *pool_name, rados_ioctx_t *ioctx);
void rados_ioctx_set_namespace(rados_ioctx_t io, const char *nspace);
void rados_ioctx_destroy(rados_ioctx_t io);

typedef struct fl_op {
    int kind;
    int ioctx;
    const char *name;
    char *buf;
    size_t len;
    uint64_t tag;
} fl_op;

typedef struct fl_done {
    uint64_t tag;
    int64_t ret;
    double issued;
    double done;
} fl_done;

typedef struct fl_ring fl_ring;

fl_ring *fl_ring_new(rados_ioctx_t *ioctx, int n_ioctx, int n_slots, size_t plan_cap);
void fl_ring_start(fl_ring *r);
size_t fl_ring_plan(fl_ring *r, const fl_op *ops, size_t n);
size_t fl_ring_take(fl_ring *r, fl_done *out, size_t max, double timeout_s, int want_plans,
                    size_t *planned, int *in_flight);
void fl_ring_stop(fl_ring *r);
double fl_ring_starved_s(fl_ring *r);
uint64_t fl_ring_lost(fl_ring *r);
int fl_ring_free(fl_ring *r);
"""


def builder() -> cffi.FFI:
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    ffi.set_source("loadgen._rados_ring", (HERE / "rados_ring.c").read_text())
    return ffi


def build(work: Path) -> Path:
    """Write the module's C source into `work`, compile it with the C compiler, put the
    module beside this file. cffi writes the source; the compiler is called directly (the
    system's setuptools and the venv's do not agree on its vendored packages)."""
    work.mkdir(parents=True, exist_ok=True)
    source = work / "_rados_ring.c"
    builder().emit_c_code(str(source))
    target = HERE / f"_rados_ring{sysconfig.get_config_var('EXT_SUFFIX')}"
    partial = work / target.name
    subprocess.run([os.environ.get("CC", "gcc"), "-shared", "-fPIC", "-O2", "-Wall", "-Werror",
                    f"-I{sysconfig.get_paths()['include']}", str(source), "-lrados",
                    "-o", str(partial)], check=True)
    partial.replace(target)  # whole or not at all: a process importing it never sees half
    return target


if __name__ == "__main__":
    built = build(HERE.parent / "build" / "rados_ring")
    print(f"built {built.relative_to(HERE.parent)}")
