# NVML query latency on the device (ctypes; no pynvml needed). Prints microseconds per call.
import ctypes, time
n = ctypes.CDLL("libnvidia-ml.so.1")
print("init", n.nvmlInit_v2())
h = ctypes.c_void_p(); print("handle", n.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(h)))
mj = ctypes.c_ulonglong()
class V(ctypes.Structure): _fields_ = [("ref", ctypes.c_ulonglong), ("vt", ctypes.c_ulonglong)]
v = V()
def cost(name, f, k=200):
    t = time.perf_counter()
    for _ in range(k): r = f()
    print("%-22s %8.1f us per call (rc %d)" % (name, (time.perf_counter() - t) / k * 1e6, r))
cost("energy", lambda: n.nvmlDeviceGetTotalEnergyConsumption(h, ctypes.byref(mj)))
cost("violation power", lambda: n.nvmlDeviceGetViolationStatus(h, 0, ctypes.byref(v)))
cost("violation thermal", lambda: n.nvmlDeviceGetViolationStatus(h, 1, ctypes.byref(v)))
clk = ctypes.c_uint()
cost("clock", lambda: n.nvmlDeviceGetClockInfo(h, 1, ctypes.byref(clk)))
