# SageAttention's own sm89 kernel as a sagerun variant: given a build of SageAttention's
# _qattn_sm89 extension (thu-ml/SageAttention; sagerun neither ships nor installs it), calls its
# fp32+fp32 kernel qk_int8_sv_f8_accum_f32_fuse_v_scale_attn_inst_buf on sagerun's sage2 tensors
# (input=sage2: the same quantized q, k, v that `baseline` gets), so on the same inputs its output
# must be byte-exact with baseline's. Two builds, two variants: the seed's A/B of two builds.
#
#   SAGE_EXT=/path/to/build-a/sageattention/_qattn_sm89.cpython-312-x86_64-linux-gnu.so \
#   SAGE_EXT_B=/path/to/build-b/sageattention/_qattn_sm89.cpython-312-x86_64-linux-gnu.so \
#   SAGERUN_PYTHON=/opt/torch/.venv/bin/python3 \
#   sagerun compare --plugin examples/python/sageattention_ext.py \
#       --baseline sageattention-ext --variant sageattention-ext-b
#
# Each build's file is hashed into the reports (extension_module); a variant whose variable is not
# set is listed as rejected, saying so. How the call maps (csrc/qattn/pybind_sm89.cpp,
# attn_cuda_sm89.h, and sageattn_qk_int8_pv_fp8_cuda in sageattention/core.py at d1a57a5):
#   query, key    sage2 q_int8 / k_int8, int8, in the problem's layout (tensor_layout 0 = NHD)
#   value         sage2 v_fp8 as float8_e4m3fn, [B, D, Hkv, L] (NHD) / [B, Hkv, D, L] (HND), L a
#                 multiple of 64 (CTA_K): SageAttention's per_channel_fp8 layout
#   output        sagerun's o, fp16 or bf16
#   query_scale   [B, Hq, ceil(N/128)*4] float32: one scale per 32-row warp of each 128-row CTA
#   key_scale     [B, Hkv, ceil(N/64)] float32: one per 64-row block (qk_quant_gran 2, per_warp)
#   value_scale   [B, Hkv, D] float32 (V range 448: the fp32+fp32 path)
#   is_causal     the problem's; sm_scale the problem's (D^-0.5 by default; rounded to float32
#                 by the binding, as SageAttention's own call rounds head_dim**-0.5); return_lse 0
# The wrapper launches its kernel on the legacy default stream, not the current one (no stream
# argument at d1a57a5), and sagerun's stream does not synchronise with that stream; so run orders
# it explicitly: an event on sagerun's stream that the default stream waits for, the kernel, and an
# event on the default stream that sagerun's stream waits for. The timing then holds the kernel,
# and the variant cannot be captured into a CUDA graph (no graph=yes).
#
# sagerun-variant: sageattention-ext run=run create=create prepare=prepare input=sage2 backend=cuda min_cc=89 extension=$SAGE_EXT description="SageAttention's own _qattn_sm89 fp32+fp32 kernel ($SAGE_EXT) on sagerun's sage2 tensors"
# sagerun-variant: sageattention-ext-b run=run create=create prepare=prepare input=sage2 backend=cuda min_cc=89 extension=$SAGE_EXT_B description="the same from a second build ($SAGE_EXT_B): the A/B of two builds"
import importlib.machinery
import importlib.util
import os

import torch  # first: the extension links against the libraries torch loads

import sagerun

KERNEL = "qk_int8_sv_f8_accum_f32_fuse_v_scale_attn_inst_buf"
PER_WARP = 2  # qk_quant_gran: QuantGranularity::kPerWarp
_builds = {}  # path -> module: each build is its own module object


def _load(path):
    module = _builds.get(path)
    if module is None:
        name = os.path.basename(path).split(".")[0]  # _qattn_sm89: its PyInit__qattn_sm89
        loader = importlib.machinery.ExtensionFileLoader(name, path)
        spec = importlib.util.spec_from_file_location(name, path, loader=loader)
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
        _builds[path] = module
    return module


def create(call):
    p = call.problem
    if p.head_dim not in (64, 128):
        raise sagerun.Unsupported("head_dim %d: the sm89 kernel has 64 and 128" % p.head_dim)
    kernel = getattr(_load(call.extension), KERNEL, None)
    if kernel is None:
        raise AttributeError("%s has no %s(): not SageAttention's _qattn_sm89" %
                             (call.extension, KERNEL))
    return {"kernel": kernel, "default": torch.cuda.default_stream(call.o.device),
            "before": torch.cuda.Event(), "after": torch.cuda.Event(),
            "args": (0 if p.layout == "NHD" else 1, int(p.causal), PER_WARP, p.sm_scale, 0)}


def prepare(call):
    t = call.sage2
    if t.q_group_rows != 32 or t.q_block_rows != 128 or t.k_block_rows != 64 or t.v_range != 448:
        raise ValueError("sage2 tensors of other granularities than the sm89 kernel's")


def run(call):
    s, t = call.state, call.sage2
    s["before"].record(call.stream)
    s["default"].wait_event(s["before"])
    s["kernel"](t.q_int8, t.k_int8, t.v_fp8, call.o, t.q_scale, t.k_scale, t.v_scale, *s["args"])
    s["after"].record(s["default"])
    call.stream.wait_event(s["after"])
