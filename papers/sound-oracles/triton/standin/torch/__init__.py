"""Stand-in torch (tests of the campaign driver only): NumPy arrays behind the calls that
campaign.py and standin/adapters.py make. Not PyTorch."""
import numpy as np

__version__ = "0.0-standin"


class _V:
    cuda = "none"


version = _V()


class dtype:
    def __init__(self, name, np_dt):
        self.name, self.np = name, np_dt

    def __repr__(self):
        return "torch." + self.name


bfloat16 = dtype("bfloat16", np.uint16)
int16 = dtype("int16", np.int16)
float32 = dtype("float32", np.float32)


class device:
    def __init__(self, name):
        self.name = name


class Tensor:
    def __init__(self, a, dt=None):
        self.a = a
        self.dtype = dt or {np.dtype(np.float32): float32, np.dtype(np.int16): int16}.get(a.dtype, float32)

    def view(self, dt):
        return Tensor(self.a.view(dt.np), dt)

    def to(self, _dev):
        return self

    def detach(self):
        return self

    def contiguous(self):
        return self

    def cpu(self):
        return self

    def clone(self):
        return Tensor(self.a.copy(), self.dtype)

    def numpy(self):
        return self.a

    def float32(self):
        """The values as float32 (bf16 bits widened)."""
        if self.dtype is bfloat16:
            return (self.a.astype(np.uint32) << 16).view(np.float32)
        return self.a.astype(np.float32)


def from_numpy(a):
    return Tensor(a)


def from_f32(v, like):
    """A result in like's dtype (bf16: round to nearest even)."""
    v = np.asarray(v, dtype=np.float32)
    if like.dtype is bfloat16:
        u = v.view(np.uint32).astype(np.uint64)
        u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
        return Tensor(u.astype(np.uint16), bfloat16)
    return Tensor(v)


class cuda:
    @staticmethod
    def synchronize():
        pass

    @staticmethod
    def is_available():
        return False

    @staticmethod
    def get_device_name(_i=0):
        return "standin-cpu"
