"""A stand-in for torch, for test/python/test_cuda_paths.py only (no torch on the CI machine): the
few calls that sagerun's Python side (python/sagerun/_bridge.py) and the CUDA examples make, each
recorded in LOG, behaving as torch documents where that code relies on it: as_tensor of an object
with __cuda_array_interface__ views its memory (and refuses a read-only flag), view(dtype) keeps
the pointer, transpose swaps shape and strides, Event.record / Stream.wait_event order streams."""
import contextlib

LOG = []


class dtype:
    def __init__(self, name, itemsize):
        self.name, self.itemsize = name, itemsize

    def __repr__(self):
        return "torch." + self.name


float16, bfloat16, int16 = dtype("float16", 2), dtype("bfloat16", 2), dtype("int16", 2)
int8, uint8, float32 = dtype("int8", 1), dtype("uint8", 1), dtype("float32", 4)
float8_e4m3fn, int32 = dtype("float8_e4m3fn", 1), dtype("int32", 4)
_TYPESTR = {"<f2": float16, "<i2": int16, "|i1": int8, "|u1": uint8, "<f4": float32,
            "<i4": int32}


class device:
    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return isinstance(other, device) and other.name == self.name

    def __repr__(self):
        return "device(%r)" % self.name


class Tensor:
    def __init__(self, ptr, shape, dt, strides=None, dev="cuda:0"):
        self.ptr, self.shape, self.dtype, self.device = ptr, tuple(shape), dt, device(dev)
        if strides is None:
            strides, step = [], 1
            for n in reversed(self.shape):
                strides.insert(0, step)
                step *= n
        self.strides = tuple(strides)

    def data_ptr(self):
        return self.ptr

    def stride(self, i):
        return self.strides[i]

    def view(self, dt):
        assert dt.itemsize == self.dtype.itemsize, (dt, self.dtype)
        return Tensor(self.ptr, self.shape, dt, self.strides)

    def transpose(self, a, b):
        shape, strides = list(self.shape), list(self.strides)
        shape[a], shape[b] = shape[b], shape[a]
        strides[a], strides[b] = strides[b], strides[a]
        return Tensor(self.ptr, shape, self.dtype, strides)

    def copy_(self, src):
        assert src.shape == self.shape and src.dtype == self.dtype, (src.shape, self.shape)
        LOG.append(("copy_", self, src))
        return self


    def masked_fill(self, mask, value):
        LOG.append(("masked_fill", self, mask, value))
        return self


class _Array:
    """A small host array (numpy inside) standing in for the index and mask tensors a variant
    builds at create (arange, comparisons, &, ~, any, all, view)."""

    def __init__(self, a):
        self.a = a

    shape = property(lambda self: self.a.shape)

    def view(self, *shape):
        return _Array(self.a.reshape(shape))

    def any(self, dim=None):
        return _Array(self.a.any(axis=dim))

    def all(self):
        return _Array(self.a.all())

    def __bool__(self):
        return bool(self.a)

    def __invert__(self):
        return _Array(~self.a)


def _binary(name):
    def op(self, other):
        return _Array(getattr(self.a, name)(other.a if isinstance(other, _Array) else other))
    return op


for _name in ("__le__", "__ge__", "__lt__", "__gt__", "__eq__", "__and__", "__or__", "__add__",
              "__radd__", "__sub__"):
    setattr(_Array, _name, _binary(_name))


def arange(n, device=None):
    import numpy
    return _Array(numpy.arange(n))


def as_tensor(obj):
    cai = obj.__cuda_array_interface__
    assert cai["version"] >= 2 and cai.get("strides") is None, cai
    ptr, readonly = cai["data"]
    if readonly:
        raise TypeError("the read only flag is not supported, should always be False")
    return Tensor(ptr, cai["shape"], _TYPESTR[cai["typestr"]])


class Stream:
    def __init__(self, ptr, device=None):
        self.cuda_stream, self.device = ptr, device

    def wait_event(self, event):
        LOG.append(("wait_event", self, event))

    def __repr__(self):
        return "Stream(%#x)" % self.cuda_stream


class Event:
    def record(self, stream=None):
        LOG.append(("record", self, stream if stream is not None else cuda.current_stream()))


class _Cuda:
    """torch.cuda"""
    Event = Event
    _current = [Stream(0)]

    class ExternalStream(Stream):
        pass

    @staticmethod
    def set_device(d):
        LOG.append(("set_device", d))

    @staticmethod
    def default_stream(device=None):
        return _Cuda._current[0]

    @staticmethod
    def current_stream():
        return _Cuda._current[-1]

    @staticmethod
    @contextlib.contextmanager
    def stream(s):
        _Cuda._current.append(s)
        try:
            yield
        finally:
            _Cuda._current.pop()


cuda = _Cuda
