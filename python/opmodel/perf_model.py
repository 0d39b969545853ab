"""FLOPs and bytes from shapes, in the style of TraceLens's
``PerfModel.perf_model``: one class per op family with static
``flops_func`` / ``bytes_func`` (and ``flops_bwd_func`` / ``bytes_bwd_func``
where a backward pass exists).  Every count is the C library's
(``opm_op_count`` on the op the arguments describe), as an exact int.

``bpe`` arguments are bytes per element — 8, 4, 2, 1, 0.5 for fp64, fp32,
bf16, fp8_e4m3, fp4_e2m1 — or a dtype name / DType ("fp16", DType.FP16).
FLOPs do not depend on the dtype, so ``flops_func`` takes none.  Keyword
arguments beyond the documented ones are passed to the op as attributes
(see ``opmodel ops KIND``).

Bytes are what the op reads plus what it writes in device memory, each
tensor once (the roofline's traffic).
"""
from ._core import DType, LocalOp, Phase, TensorRole, TensorSpec, dtype_of, short_op

__all__ = ["GEMM", "SDPA", "CONV", "Softmax", "Normalization", "GroupedGemm", "MoEComm", "MambaSSD",
           "FusedRoPE", "CrossEntropy", "CausalConv1d", "Elementwise", "Reduction"]


def _counts(kind, dtype, bwd, **keys):
    return short_op(kind, dtype, phase=Phase.TRAIN_BWD if bwd else None, **keys).counts()


def _flops(kind, bwd, **keys):
    return _counts(kind, "bf16", bwd, **keys).flops


def _bytes(kind, bpe, bwd, **keys):
    return _counts(kind, dtype_of(bpe), bwd, **keys).bytes


class GEMM:
    """C[M, N] = A[M, K] · B[K, N] (+ bias[N])."""

    @staticmethod
    def _op(M, N, K, bias, bpe_a, bpe_b, bpe_bias, bpe_out, bwd):
        t = [TensorSpec(TensorRole.INPUT, (M, K), dtype_of(bpe_a)),
             TensorSpec(TensorRole.WEIGHT, (K, N), dtype_of(bpe_b))]
        if bias:
            t.append(TensorSpec(TensorRole.WEIGHT, (N,), dtype_of(bpe_bias)))
        t.append(TensorSpec(TensorRole.OUTPUT, (M, N), dtype_of(bpe_out)))
        return LocalOp("gemm", "gemm", Phase.TRAIN_BWD if bwd else Phase.INFERENCE, tuple(t))

    @staticmethod
    def flops_func(M, N, K, bias=False):
        """GEMM.flops_func(M, N, K, bias=False): 2·M·N·K (+ M·N with bias)."""
        return GEMM._op(M, N, K, bias, 2, 2, 2, 2, False).counts().flops

    @staticmethod
    def bytes_func(M, N, K, bias, bpe_a, bpe_b, bpe_bias, bpe_out):
        """GEMM.bytes_func(M, N, K, bias, bpe_a, bpe_b, bpe_bias, bpe_out):
        read A and B (and bias), write C."""
        return GEMM._op(M, N, K, bias, bpe_a, bpe_b, bpe_bias, bpe_out, False).counts().bytes

    @staticmethod
    def flops_bwd_func(M, N, K, bias=False):
        """GEMM.flops_bwd_func(M, N, K, bias=False): dA and dB (and dbias)."""
        return GEMM._op(M, N, K, bias, 2, 2, 2, 2, True).counts().flops

    @staticmethod
    def bytes_bwd_func(M, N, K, bias, bpe_a, bpe_b, bpe_bias, bpe_out):
        """GEMM.bytes_bwd_func(M, N, K, bias, bpe_a, bpe_b, bpe_bias, bpe_out)."""
        return GEMM._op(M, N, K, bias, bpe_a, bpe_b, bpe_bias, bpe_out, True).counts().bytes


def _sdpa(B, S_q, H_Q, S_kv, H_KV, d_h_qk, d_h_v, causal, extra):
    return dict(batch=B, seq_q=S_q, heads=H_Q, seq_kv=S_kv, kv_heads=H_KV, head_dim_qk=d_h_qk, head_dim_v=d_h_v,
                causal=bool(causal), **extra)


class SDPA:
    """Fused (flash) scaled dot-product attention; counts include the
    softmax's vector FLOPs (``opmodel ops attention``)."""

    @staticmethod
    def flops_func(B, S_q, H_Q, S_kv, H_KV, d_h_qk, d_h_v, causal, **attrs):
        """SDPA.flops_func(B, S_q, H_Q, S_kv, H_KV, d_h_qk, d_h_v, causal)."""
        return _flops("attention", False, **_sdpa(B, S_q, H_Q, S_kv, H_KV, d_h_qk, d_h_v, causal, attrs))

    @staticmethod
    def bytes_func(B, S_q, H_Q, S_kv, H_KV, d_h_qk, d_h_v, causal, bpe, **attrs):
        """SDPA.bytes_func(B, S_q, H_Q, S_kv, H_KV, d_h_qk, d_h_v, causal, bpe)."""
        return _bytes("attention", bpe, False, **_sdpa(B, S_q, H_Q, S_kv, H_KV, d_h_qk, d_h_v, causal, attrs))

    @staticmethod
    def flops_bwd_func(B, S_q, H_Q, S_kv, H_KV, d_h_qk, d_h_v, causal, flash_impl=True, **attrs):
        """SDPA.flops_bwd_func(B, S_q, H_Q, S_kv, H_KV, d_h_qk, d_h_v, causal, flash_impl=True):
        flash_impl recomputes QKᵀ in the backward instead of reading P."""
        k = _sdpa(B, S_q, H_Q, S_kv, H_KV, d_h_qk, d_h_v, causal, attrs)
        return _flops("attention", True, flash_recompute=bool(flash_impl), **k)

    @staticmethod
    def bytes_bwd_func(B, S_q, H_Q, S_kv, H_KV, d_h_qk, d_h_v, causal, bpe, flash_impl=True, **attrs):
        """SDPA.bytes_bwd_func(B, S_q, H_Q, S_kv, H_KV, d_h_qk, d_h_v, causal, bpe, flash_impl=True)."""
        k = _sdpa(B, S_q, H_Q, S_kv, H_KV, d_h_qk, d_h_v, causal, attrs)
        return _bytes("attention", bpe, True, flash_recompute=bool(flash_impl), **k)


def _family(name, kind, doc, args, bwd=True, fixed=None):
    """A class whose functions take ``args`` (short-form keys of ``kind``) in order."""

    def keys(a, kw):
        if len(a) > len(args):
            raise TypeError(f"{name}: expected at most {len(args)} positional arguments ({', '.join(args)})")
        k = dict(zip(args, a))
        k.update(fixed or {})
        k.update(kw)
        return k

    sig = ", ".join(args)

    def make(bwd_, with_bpe):
        def f(*a, bpe=2, **kw):
            if not with_bpe:
                return _flops(kind, bwd_, **keys(a, kw))
            if len(a) == len(args) + 1:
                a, bpe = a[:-1], a[-1]
            return _bytes(kind, bpe, bwd_, **keys(a, kw))
        return f

    flops_func, bytes_func, flops_bwd_func, bytes_bwd_func = (make(b, w) for b in (False, True) for w in (False, True))

    ns = {"__doc__": doc, "kind": kind, "args": tuple(args)}
    fns = [("flops_func", flops_func, f"{name}.flops_func({sig}, **attrs)"),
           ("bytes_func", bytes_func, f"{name}.bytes_func({sig}, bpe, **attrs)")]
    if bwd:
        fns += [("flops_bwd_func", flops_bwd_func, f"{name}.flops_bwd_func({sig}, **attrs)"),
                ("bytes_bwd_func", bytes_bwd_func, f"{name}.bytes_bwd_func({sig}, bpe, **attrs)")]
    for fname, f, d in fns:
        f.__name__, f.__qualname__, f.__doc__ = fname, f"{name}.{fname}", d
        ns[fname] = staticmethod(f)
    return type(name, (), ns)


CONV = _family("CONV", "conv", "Convolution; input [N, C_in, spatial...], weight [C_out, C_in/groups, kernel...]; "
               "stride, padding, dilation, groups, bias, transposed as keywords.", ["input", "weight"])
Softmax = _family("Softmax", "softmax", "Softmax along dim (keyword, default -1) of a tensor of `shape`.", ["shape"])
CrossEntropy = _family("CrossEntropy", "cross_entropy", "Softmax cross-entropy of [tokens, vocab] logits.",
                       ["tokens", "vocab"])
GroupedGemm = _family("GroupedGemm", "grouped_gemm", "G products of row groups (group_m: rows per group) with "
                      "their own [K, N] weights.", ["group_m", "n", "k"])
MambaSSD = _family("MambaSSD", "mamba_ssd", "Mamba-2 chunked SSD scan.",
                   ["batch", "seqlen", "heads", "head_dim", "state_dim", "groups"])
FusedRoPE = _family("FusedRoPE", "rope", "Rotary embedding of q and k.", ["batch", "seq", "heads", "kv_heads", "head_dim"])
CausalConv1d = _family("CausalConv1d", "causal_conv1d", "Depthwise causal 1-D convolution.",
                       ["batch", "dim", "seqlen", "width"])
Elementwise = _family("Elementwise", "elementwise", "Pointwise function `op` (keyword: add, mul, gelu, silu_mul, "
                      "...) of a tensor of `shape`.", ["shape"])
Reduction = _family("Reduction", "reduction", "Reduction `op` (keyword: sum, mean, max, ..., cumsum) over `dim`.",
                    ["shape"])


_NORMS = {"layernorm": "layernorm", "layer_norm": "layernorm", "rmsnorm": "rmsnorm", "rms_norm": "rmsnorm",
          "batchnorm": "batchnorm", "batch_norm": "batchnorm", "groupnorm": "groupnorm", "group_norm": "groupnorm",
          "instancenorm": "instancenorm", "instance_norm": "instancenorm"}


def _norm_kind(norm):
    from ._lib import OpmodelError
    k = _NORMS.get(str(norm))
    if not k:
        raise OpmodelError(f"norm: expected one of {', '.join(sorted(set(_NORMS.values())))}, got {norm!r}")
    return k


def _norm_funcs():
    """Normalization's four functions: (name, backward?, takes bpe?)."""
    ns = {"__doc__": "Layer, RMS, batch, group and instance norms: ``norm`` picks one."}
    for fname, bwd, with_bpe in (("flops_func", False, False), ("bytes_func", False, True),
                                 ("flops_bwd_func", True, False), ("bytes_bwd_func", True, True)):
        if with_bpe:
            def f(shape, bpe, norm="layernorm", _bwd=bwd, **attrs):
                return _bytes(_norm_kind(norm), bpe, _bwd, shape=shape, **attrs)
        else:
            def f(shape, norm="layernorm", _bwd=bwd, **attrs):
                return _flops(_norm_kind(norm), _bwd, shape=shape, **attrs)
        sig = "shape" + (", bpe" if with_bpe else "") + ', norm="layernorm", **attrs'
        f.__name__, f.__qualname__, f.__doc__ = fname, "Normalization." + fname, f"Normalization.{fname}({sig})"
        ns[fname] = staticmethod(f)
    return ns


Normalization = type("Normalization", (), _norm_funcs())


def _moe(tokens, hidden, top_k, experts, combine, bwd, bpe, attrs):
    k = dict(tokens=tokens, hidden=hidden, top_k=top_k, **attrs)
    if not combine:
        k["experts"] = experts
    return _counts("moe_combine" if combine else "moe_dispatch", dtype_of(bpe), bwd, **k)


def _moe_funcs():
    """MoEComm's four functions: (name, backward?, takes bpe?)."""
    ns = {"__doc__": "MoE token permutation: dispatch (combine=False) or combine."}
    for fname, bwd, with_bpe in (("flops_func", False, False), ("bytes_func", False, True),
                                 ("flops_bwd_func", True, False), ("bytes_bwd_func", True, True)):
        def f(tokens, hidden, top_k, experts, *bpe, combine=False, _bwd=bwd, _b=with_bpe, **attrs):
            c = _moe(tokens, hidden, top_k, experts, combine, _bwd, bpe[0] if _b and bpe else 2, attrs)
            return c.bytes if _b else c.flops
        sig = "tokens, hidden, top_k, experts" + (", bpe" if with_bpe else "") + ", combine=False"
        f.__name__, f.__qualname__, f.__doc__ = fname, "MoEComm." + fname, f"MoEComm.{fname}({sig})"
        ns[fname] = staticmethod(f)
    return ns


MoEComm = type("MoEComm", (), _moe_funcs())
