"""torch.nn.attention of the stand-in torch: the backend enum and sdpa_kernel, recorded."""
import contextlib
import enum

ENABLED = []


class SDPBackend(enum.Enum):
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    MATH = 4


@contextlib.contextmanager
def sdpa_kernel(backends):
    ENABLED.append(backends)
    try:
        yield
    finally:
        ENABLED.pop()
