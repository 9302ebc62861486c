# Python variants that misbehave, for test/cli/test_python.sh (host backend): each must fail alone,
# with its reason, while the others are measured.
# sagerun-variant: py-raises run=raises backend=host
# sagerun-variant: py-create-raises run=zeros create=bad_create backend=host
# sagerun-variant: py-unsupported run=zeros create=unsupported backend=host
# sagerun-variant: py-missing-function run=nowhere backend=host
# sagerun-variant: py-wrong-shape run=wrong_shape backend=host
# sagerun-variant: py-wrong-dtype run=wrong_dtype backend=host
# sagerun-variant: py-returns-int run=returns_int backend=host
# sagerun-variant: py-writes-q run=writes_q backend=host
# sagerun-variant: py-crash run=crash backend=host
# sagerun-variant: py-hang run=hang backend=host
# sagerun-variant: py-prints run=prints backend=host
import ctypes
import time

import numpy as np

import sagerun


def zeros(call):
    call.o[...] = 0


def raises(call):
    raise ValueError("bad thing in run")


def bad_create(call):
    raise RuntimeError("no GPU handle for %s" % call.name)


def unsupported(call):
    raise sagerun.Unsupported("head_dim %d is not done here" % call.problem.head_dim)


def wrong_shape(call):
    return np.zeros((1, 2, 3), dtype=np.float16)


def wrong_dtype(call):
    return np.zeros(call.o.shape, dtype=np.float32)


def returns_int(call):
    return 5


def writes_q(call):
    call.q[...] = 0  # q is read-only: numpy refuses


def crash(call):
    ctypes.string_at(0)  # reads address 0: SIGSEGV in the measuring process


def hang(call):
    time.sleep(600)


def prints(call):
    print("PRINTED-BY-PYTHON")
    call.o[...] = 0
