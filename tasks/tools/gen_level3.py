#!/usr/bin/env python3
"""Generates the Level-3 tasks of EdgeKernelBench: whole compact models as one L0 graph each.

Usage: python3 tasks/tools/gen_level3.py [NAME...]      (standard library only)

Writes tasks/level3/NAME.ekir (the graph with its header) and tasks/level3/NAME.py (its PyTorch
twin) for every model below, or for the named ones. The `.ekir` files are the canonical tasks:
after generating, run `ekb tasks fmt` (canonical text) and `ekb tasks validate --level 3`.

One builder writes both files from one description of the model, so the graph's parameters and
the twin's state_dict are the same list in the same order: the twin declares its modules flat
(`self.features_3_conv_0_0 = nn.Conv2d(...)`, the source model's module path with `_` for `.`),
because the static twin reader follows only flat declarations; parameters the reader has no
module for (Conv1d, ConvTranspose2d, embeddings, layer scales, class tokens) are the twin's own
`nn.Parameter`s, which PyTorch puts first in the state_dict, so the graph lists them first too.

Values stay in range through the depth of a randomly initialised model: the builder tracks an
estimate of the mean square of every tensor (exact in expectation over the seeded weights for
convolutions and linear layers, by numerical integration for activations), and each batch norm's
running statistics are drawn around the variance its input actually has (mean in +-0.5 s, variance
in [0.5, 2] s^2 for an input of mean square s^2), as a trained network's are. Each layer then sees
unit-scale activations, so every layer shapes the output and none of it vanishes below the
comparison tolerance.
"""

import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "level3")


def fmt_num(v):
    """A short decimal for an initialiser bound (3 significant digits)."""
    s = f"{v:.3g}"
    if "e" not in s and "." not in s:
        s += ".0"
    return s


def shape_text(s):
    return "[" + ",".join(str(d) for d in s) + "]"


def prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


def gauss_m2(f, m2):
    """E[f(x)^2] for x ~ N(0, m2), by Simpson's rule."""
    s = math.sqrt(max(m2, 1e-30))
    n = 400
    a, b = -8 * s, 8 * s
    h = (b - a) / n
    tot = 0.0
    for i in range(n + 1):
        x = a + i * h
        w = 1 if i in (0, n) else (4 if i % 2 else 2)
        tot += w * f(x) ** 2 * math.exp(-x * x / (2 * s * s))
    return tot * h / 3 / (s * math.sqrt(2 * math.pi))


def _sig(x):
    return 1 / (1 + math.exp(-x)) if x > -700 else 0.0


ACT = {
    "relu": (lambda x: max(x, 0.0), "F.relu({})"),
    "relu6": (lambda x: min(max(x, 0.0), 6.0), "F.relu6({})"),
    "hardswish": (lambda x: x * min(max(x + 3, 0.0), 6.0) / 6, "F.hardswish({})"),
    "hardsigmoid": (lambda x: min(max(x + 3, 0.0), 6.0) / 6, "F.hardsigmoid({})"),
    "silu": (lambda x: x * _sig(x), "F.silu({})"),
    "sigmoid": (_sig, "torch.sigmoid({})"),
    "tanh": (math.tanh, "torch.tanh({})"),
    "gelu": (lambda x: 0.5 * x * (1 + math.erf(x / math.sqrt(2))), "F.gelu({})"),
    "gelu_tanh": (lambda x: 0.5 * x * (1 + math.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))),
                  'F.gelu({}, approximate="tanh")'),
    "leaky_relu": (lambda x: x if x >= 0 else 0.1 * x, "F.leaky_relu({}, 0.1)"),
}
L0_ACT = {"gelu": "gelu(%s, approximate=none)", "gelu_tanh": "gelu(%s, approximate=tanh)",
          "leaky_relu": "leaky_relu(%s, alpha=0.1)"}


def init_m2(init):
    """Mean square of values drawn by an L0 initialiser (kaiming handled by the caller)."""
    kind, args = init
    if kind == "uniform":
        a, b = args
        return (a * a + a * b + b * b) / 3
    if kind == "normal":
        m, s = args
        return m * m + s * s
    if kind == "const":
        return args[0] ** 2
    raise ValueError(kind)


def init_text(init):
    kind, args = init
    if kind in ("uniform", "normal", "randint"):
        return f"{kind}({', '.join(fmt_num(a) if kind != 'randint' else str(a) for a in args)})"
    if kind == "const":
        return "zeros" if args[0] == 0 else ("ones" if args[0] == 1 else f"const({fmt_num(args[0])})")
    if kind == "kaiming":
        return "kaiming_uniform"
    raise ValueError(kind)


def py_init(init, shape):
    kind, args = init
    dims = ", ".join(str(d) for d in shape)
    if kind == "uniform":
        return f"torch.empty({dims}).uniform_({fmt_num(args[0])}, {fmt_num(args[1])})"
    if kind == "normal":
        return f"torch.empty({dims}).normal_({fmt_num(args[0])}, {fmt_num(args[1])})"
    if kind == "randint":
        return f"torch.randint({args[0]}, {args[1]}, ({dims},))"
    raise ValueError(kind)


def U(a, b):
    return ("uniform", (a, b))


def He(fan_in):
    """PyTorch's kaiming_uniform_ with its default gain for ReLU (a=0): bound sqrt(6 / fan_in)."""
    b = math.sqrt(6.0 / fan_in)
    return U(-b, b)


class V:
    """A value: graph name, shape, dtype, Python expression, and its mean-square estimate."""

    def __init__(self, g, shape, py, m2, dtype="f32", expr=False):
        self.g, self.shape, self.py, self.m2, self.dtype, self.expr = g, list(shape), py, m2, dtype, expr
        self.used = False


class B:
    """Builds one task: graph text and twin text together."""

    def __init__(self, name):
        self.name = name
        self.inputs = []  # (name, shape, dtype, init)
        self.own = []  # (name, shape, init, twin declaration)
        self.mods = []  # (attr, declaration, [(pname, shape, init)])
        self.nodes = []
        self.fwd = []
        self.names = set()  # graph names (inputs, parameters, nodes) and Python variables
        self.attrs = set()  # the twin's module attributes
        self.consts = []  # twin attributes that are plain constants
        self.helpers = []  # module-level Python helpers of the twin

    # ---- naming and emission -------------------------------------------------------------
    def uniq(self, base):
        base = base.replace(".", "_").replace("-", "_")
        n, k = base, 1
        while n in self.names:
            n = f"{base}_{k}"
            k += 1
        self.names.add(n)
        return n

    def use(self, v):
        if v.expr:
            if v.used:
                raise RuntimeError(f"{self.name}: expression {v.py} used twice; let() it first")
            v.used = True
        return v.py

    def node(self, op, name, shape, dtype="f32"):
        n = self.uniq(name)
        self.nodes.append(f"  %{n}: {dtype}{shape_text(shape)} = {op}")
        return n

    def let(self, v, name=None):
        """Makes `v` a Python variable (one statement) so it can be used more than once."""
        if not v.expr:
            return v
        var = name or v.g.lstrip("%")
        expr = self.use(v)
        if expr.startswith("(") and expr.endswith(")") and balanced(expr[1:-1]):
            expr = expr[1:-1]
        self.fwd.append(f"{var} = {expr}")
        return V(v.g, v.shape, var, v.m2, v.dtype)

    def stmt(self, line):
        self.fwd.append(line)

    def out(self, g, shape, py, m2, dtype="f32", expr=True):
        v = V("%" + g if not g.startswith("%") else g, shape, py, m2, dtype, expr)
        if expr and len(py) > 72:
            return self.let(v)
        return v

    # ---- inputs and parameters -----------------------------------------------------------
    def input(self, name, shape, init=("uniform", (-1.0, 1.0)), dtype="f32"):
        self.names.add(name)
        self.inputs.append((name, shape, dtype, init))
        m2 = init_m2(init) if dtype == "f32" else 0.0
        return V(name, shape, name, m2, dtype)

    def param(self, attr, shape, init, twin=None):
        """An own parameter of the twin (nn.Parameter); returns its graph value."""
        name = self.uniq(attr)
        decl = twin or f"nn.Parameter(torch.empty({', '.join(str(d) for d in shape)}))"
        self.own.append((name, shape, init, decl))
        return V(name, shape, f"self.{name}", init_m2(init) if init[0] != "kaiming" else 0.0)

    def module(self, path, decl, params):
        attr = path.replace(".", "_").replace("-", "_")
        if attr in self.attrs:
            raise RuntimeError(f"{self.name}: module {attr} declared twice")
        self.attrs.add(attr)
        ps = [(f"{attr}_{p}", s, i) for p, s, i in params]
        for p, _, _ in ps:
            self.names.add(p)
        self.mods.append((attr, decl, ps))
        return attr

    def const(self, attr, value):
        self.consts.append((attr, value))

    # ---- layers ----------------------------------------------------------------------------
    def conv(self, x, path, cout, k, s=1, p=None, d=1, g=1, bias=False, w_init=None, b_init=None,
             pad4=None, twin_pad=None):
        """nn.Conv2d; `pad4` = (top, left, bottom, right) written as an explicit F.pad before a
        padding-free convolution (TensorFlow SAME, ZeroPad2d), `twin_pad` its F.pad argument."""
        cin, h, w = x.shape[1], x.shape[2], x.shape[3]
        kh, kw = (k, k) if isinstance(k, int) else k
        sh, sw = (s, s) if isinstance(s, int) else s
        dh, dw = (d, d) if isinstance(d, int) else d
        if p is None:
            p = ((kh - 1) // 2 * dh, (kw - 1) // 2 * dw)
        ph, pw = (p, p) if isinstance(p, int) else p
        pads = (ph, pw, ph, pw) if pad4 is None else pad4
        oh = (h + pads[0] + pads[2] - dh * (kh - 1) - 1) // sh + 1
        ow = (w + pads[1] + pads[3] - dw * (kw - 1) - 1) // sw + 1
        fan_in = cin // g * kh * kw
        w_init = w_init or ("kaiming", ())
        wm2 = 1.0 / (3 * fan_in) if w_init[0] == "kaiming" else init_m2(w_init)
        if bias:
            b_init = b_init or U(-1 / math.sqrt(fan_in), 1 / math.sqrt(fan_in))
        args = [str(cin), str(cout), str(kh) if kh == kw else f"({kh}, {kw})"]
        if (sh, sw) != (1, 1):
            args.append(f"stride={sh}" if sh == sw else f"stride=({sh}, {sw})")
        if pad4 is None and (ph, pw) != (0, 0):
            args.append(f"padding={ph}" if ph == pw else f"padding=({ph}, {pw})")
        if (dh, dw) != (1, 1):
            args.append(f"dilation={dh}" if dh == dw else f"dilation=({dh}, {dw})")
        if g != 1:
            args.append(f"groups={g}")
        if not bias:
            args.append("bias=False")
        params = [("weight", [cout, cin // g, kh, kw], w_init)] + ([("bias", [cout], b_init)] if bias else [])
        attr = self.module(path, f"nn.Conv2d({', '.join(args)})", params)
        gargs = [x.g, f"{attr}_weight"] + ([f"{attr}_bias"] if bias else [])
        op = (f"conv2d({', '.join(gargs)}, stride=[{sh},{sw}], pad=[{pads[0]},{pads[1]},{pads[2]},{pads[3]}], "
              f"dilation=[{dh},{dw}], groups={g})")
        n = self.node(op, attr, [x.shape[0], cout, oh, ow])
        frac = valid_frac(h, kh, sh, pads[0], dh, oh) * valid_frac(w, kw, sw, pads[1], dw, ow)
        m2 = fan_in * wm2 * frac * x.m2 + (init_m2(b_init) if bias else 0.0)
        xin = self.use(x)
        if pad4 is not None and any(pads):
            xin = f"F.pad({xin}, {twin_pad or (pads[1], pads[3], pads[0], pads[2])})"
        return self.out(n, [x.shape[0], cout, oh, ow], f"self.{attr}({xin})", m2)

    def bn(self, x, path, eps=1e-5, momentum=None, dims=2, gamma=U(0.5, 1.5), beta=U(-0.5, 0.5)):
        c = x.shape[1]
        s2 = max(x.m2, 1e-12)
        s = math.sqrt(s2)
        mean, var = U(-0.5 * s, 0.5 * s), U(0.5 * s2, 2.0 * s2)
        extra = f", eps={eps}" if eps != 1e-5 else ""
        if momentum is not None:
            extra += f", momentum={momentum}"
        attr = self.module(path, f"nn.BatchNorm{dims}d({c}{extra})",
                           [("weight", [c], gamma), ("bias", [c], beta), ("running_mean", [c], mean),
                            ("running_var", [c], var)])
        op = (f"batch_norm({x.g}, {attr}_weight, {attr}_bias, {attr}_running_mean, {attr}_running_var, "
              f"eps={eps})")
        n = self.node(op, attr, x.shape)
        e_inv_v = math.log(4.0) / (1.5 * s2)
        m2 = init_m2(gamma) * (s2 + s2 / 12) * e_inv_v + init_m2(beta)
        return self.out(n, x.shape, f"self.{attr}({self.use(x)})", m2)

    def act(self, x, kind, name=None):
        f, pyf = ACT[kind]
        op = L0_ACT.get(kind, kind + "(%s)") % x.g
        n = self.node(op, name or f"{x.g.lstrip('%')}_{kind}", x.shape)
        return self.out(n, x.shape, pyf.format(self.use(x)), gauss_m2(f, x.m2))

    def cba(self, x, conv_path, bn_path, cout, k, s=1, act="relu", eps=1e-5, momentum=None, act_name=None,
            **kw):
        y = self.conv(x, conv_path, cout, k, s, **kw)
        y = self.bn(y, bn_path, eps, momentum)
        if act:
            y = self.act(y, act, act_name or bn_path.replace(".", "_") + "_act")
        return y

    def linear(self, x, path, cout, bias=True, w_init=None, b_init=None):
        cin = x.shape[-1]
        w_init = w_init or ("kaiming", ())
        wm2 = 1.0 / (3 * cin) if w_init[0] == "kaiming" else init_m2(w_init)
        if bias:
            b_init = b_init or U(-1 / math.sqrt(cin), 1 / math.sqrt(cin))
        params = [("weight", [cout, cin], w_init)] + ([("bias", [cout], b_init)] if bias else [])
        attr = self.module(path, f"nn.Linear({cin}, {cout}{'' if bias else ', bias=False'})", params)
        gargs = [x.g, f"{attr}_weight"] + ([f"{attr}_bias"] if bias else [])
        shape = x.shape[:-1] + [cout]
        n = self.node(f"linear({', '.join(gargs)})", attr, shape)
        m2 = cin * wm2 * x.m2 + (init_m2(b_init) if bias else 0.0)
        return self.out(n, shape, f"self.{attr}({self.use(x)})", m2)

    def layer_norm(self, x, path, eps=1e-5, w=U(0.5, 1.5), b=U(-0.5, 0.5), py=None):
        c = x.shape[-1]
        extra = f", eps={eps}" if eps != 1e-5 else ""
        attr = self.module(path, f"nn.LayerNorm({c}{extra})", [("weight", [c], w), ("bias", [c], b)])
        n = self.node(f"layer_norm({x.g}, {attr}_weight, {attr}_bias, eps={eps})", attr, x.shape)
        pyx = self.use(x)
        return self.out(n, x.shape, py.format(attr=attr, x=pyx) if py else f"self.{attr}({pyx})",
                        init_m2(w) + init_m2(b))

    def layer_norm2d(self, x, path, eps=1e-6):
        """timm LayerNorm2d: LayerNorm over channels of an NCHW map, via permutes."""
        t = self.transpose(x, [0, 2, 3, 1], f"{path}_nhwc", py_fn=None)
        y = self.layer_norm(t, path, eps)
        return self.transpose(y, [0, 3, 1, 2], f"{path}_nchw", py_fn=None)

    def rms_norm(self, x, path, eps, w=U(0.5, 1.5), cls="RMSNorm"):
        c = x.shape[-1]
        attr = self.module(path, f"nn.RMSNorm({c}, eps={eps})", [("weight", [c], w)])
        n = self.node(f"rms_norm({x.g}, {attr}_weight, eps={eps})", attr, x.shape)
        return self.out(n, x.shape, f"self.{attr}({self.use(x)})", init_m2(w))

    # ---- elementwise and movement --------------------------------------------------------
    def binop(self, op, a, b, name, pyop=None, shape=None):
        shape = shape or bcast(a.shape, b.shape)
        n = self.node(f"{op}({a.g}, {b.g})", name, shape, a.dtype)
        pa, pb = self.use(a), self.use(b)
        sym = {"add": "+", "sub": "-", "mul": "*", "div": "/"}[op]
        py = "(" + (pyop.format(a=pa, b=pb) if pyop else f"{pa} {sym} {pb}") + ")"
        m2 = {"add": a.m2 + b.m2, "sub": a.m2 + b.m2, "mul": a.m2 * b.m2, "div": a.m2}[op]
        return self.out(n, shape, py, m2, a.dtype)

    def add(self, a, b, name, pyop=None):
        return self.binop("add", a, b, name, pyop)

    def mul(self, a, b, name, pyop=None):
        return self.binop("mul", a, b, name, pyop)

    def unary(self, op, x, name, py, m2=None, attrs=""):
        n = self.node(f"{op}({x.g}{attrs})", name, x.shape, x.dtype)
        return self.out(n, x.shape, py.format(self.use(x)), x.m2 if m2 is None else m2, x.dtype)

    def reshape(self, x, shape, name, py=None):
        assert prod(shape) == prod(x.shape), (self.name, name, shape, x.shape)
        n = self.node(f"reshape({x.g}, shape={shape_text(shape)})", name, shape, x.dtype)
        pyx = self.use(x)
        return self.out(n, shape, py.format(pyx) if py else f"{pyx}.reshape({', '.join(map(str, shape))})",
                        x.m2, x.dtype)

    def transpose(self, x, perm, name, py_fn=None):
        shape = [x.shape[p] for p in perm]
        n = self.node(f"transpose({x.g}, perm={shape_text(perm)})", name, shape, x.dtype)
        pyx = self.use(x)
        py = py_fn.format(pyx) if py_fn else f"{pyx}.permute({', '.join(map(str, perm))})"
        return self.out(n, shape, py, x.m2, x.dtype)

    def concat(self, xs, axis, name, py=None):
        shape = list(xs[0].shape)
        shape[axis] = sum(x.shape[axis] for x in xs)
        n = self.node(f"concat({', '.join(x.g for x in xs)}, axis={axis})", name, shape, xs[0].dtype)
        parts = [self.use(x) for x in xs]
        m2 = sum(x.m2 * x.shape[axis] for x in xs) / shape[axis]
        pyx = py.format(*parts) if py else f"torch.cat(({', '.join(parts)}), dim={axis})"
        return self.out(n, shape, pyx, m2, xs[0].dtype)

    def slice(self, x, axis, start, end, name, py=None, step=1):
        shape = list(x.shape)
        shape[axis] = len(range(start, end, step))
        n = self.node(f"slice({x.g}, axes=[{axis}], starts=[{start}], ends=[{end}], steps=[{step}])", name,
                      shape, x.dtype)
        pyx = self.use(x)
        if py is None:
            idx = [":"] * len(x.shape)
            idx[axis] = f"{start}:{end}" + (f":{step}" if step != 1 else "")
            py = pyx + "[" + ", ".join(idx) + "]"
        else:
            py = py.format(pyx)
        return self.out(n, shape, py, x.m2, x.dtype)

    def full(self, value, name, shape=(), dtype="f32"):
        n = self.node(f"full(shape={shape_text(shape)}, value={value}, dtype={dtype})", name, list(shape), dtype)
        return V("%" + n, list(shape), repr(value), float(value) ** 2 if dtype == "f32" else 0.0, dtype)

    def iota(self, shape, axis, name, dtype="i32"):
        n = self.node(f"iota(shape={shape_text(shape)}, axis={axis}, dtype={dtype})", name, list(shape), dtype)
        return V("%" + n, list(shape), "", 1.0, dtype)

    def gap(self, x, name, py=None):
        shape = x.shape[:2] + [1, 1]
        n = self.node(f"global_avg_pool2d({x.g})", name, shape)
        pyx = self.use(x)
        return self.out(n, shape, py.format(pyx) if py else f"F.adaptive_avg_pool2d({pyx}, 1)", x.m2 * 0.5)

    def pool(self, x, kind, k, s, p, name, py=None, count_include_pad=True):
        kh, kw = (k, k) if isinstance(k, int) else k
        sh, sw = (s, s) if isinstance(s, int) else s
        pads = (p, p, p, p) if isinstance(p, int) else p
        oh = (x.shape[2] + pads[0] + pads[2] - kh) // sh + 1
        ow = (x.shape[3] + pads[1] + pads[3] - kw) // sw + 1
        shape = [x.shape[0], x.shape[1], oh, ow]
        attrs = f"kernel=[{kh},{kw}], stride=[{sh},{sw}], pad=[{pads[0]},{pads[1]},{pads[2]},{pads[3]}]"
        if kind == "avg_pool2d":
            attrs += f", count_include_pad={'true' if count_include_pad else 'false'}"
        n = self.node(f"{kind}({x.g}, {attrs})", name, shape)
        m2 = x.m2 * (min(2.0, 1 + 0.15 * kh * kw) if kind == "max_pool2d" else 0.6)
        return self.out(n, shape, py.format(self.use(x)), m2)

    def resize(self, x, size, mode, name, py, align_corners=False):
        shape = x.shape[:2] + list(size)
        ac = "true" if align_corners else "false"
        n = self.node(f"resize({x.g}, size={shape_text(size)}, mode={mode}, align_corners={ac})", name, shape)
        return self.out(n, shape, py.format(self.use(x)), x.m2)

    def mean(self, x, axes, name, py, keepdims=False):
        shape = [d for i, d in enumerate(x.shape) if i not in axes] if not keepdims else \
            [1 if i in axes else d for i, d in enumerate(x.shape)]
        n = self.node(f"mean({x.g}, axes={shape_text(axes)}, keepdims={'true' if keepdims else 'false'})", name,
                      shape)
        return self.out(n, shape, py.format(self.use(x)), x.m2 * 0.5)

    def softmax(self, x, axis, name, py, log=False):
        op = "log_softmax" if log else "softmax"
        n = self.node(f"{op}({x.g}, axis={axis})", name, x.shape)
        return self.out(n, x.shape, py.format(self.use(x)), 0.1)

    def matmul(self, a, b, name, ta=False, tb=False, py=None, m2=None):
        m_ = a.shape[-1] if ta else a.shape[-2]
        k_ = a.shape[-2] if ta else a.shape[-1]
        n_ = b.shape[-2] if tb else b.shape[-1]
        batch = bcast(a.shape[:-2], b.shape[:-2])
        shape = batch + [m_, n_]
        n = self.node(f"matmul({a.g}, {b.g}, transpose_a={'true' if ta else 'false'}, "
                      f"transpose_b={'true' if tb else 'false'})", name, shape)
        pa, pb = self.use(a), self.use(b)
        return self.out(n, shape, py.format(pa, pb) if py else f"torch.matmul({pa}, {pb})",
                        k_ * a.m2 * b.m2 if m2 is None else m2)

    # ---- output ------------------------------------------------------------------------------
    def write(self, meta, outputs, out_names):
        """Writes NAME.ekir and NAME.py; `outputs` are values, `out_names` their names."""
        outputs = [self.let(o) if o.expr else o for o in outputs]
        ins = []
        for n, s, dt, init in self.inputs:
            t = f"{n}: {dt}{shape_text(s)}"
            default = ("uniform", (-1.0, 1.0)) if dt == "f32" else ("randint", (0, 16))
            if init != default:
                t += f" = {init_text(init)}"
            ins.append(t)
        outs = [f"{n}: {o.dtype}{shape_text(o.shape)}" for n, o in zip(out_names, outputs)]
        lines = [f"graph {self.name}({', '.join(ins)}) -> ({', '.join(outs)}) {{"]
        for n, s, init, _ in self.own:
            lines.append(f"  param {n}: f32{shape_text(s)} = {init_text(init)}")
        for _, _, ps in self.mods:
            for n, s, init in ps:
                lines.append(f"  param {n}: f32{shape_text(s)} = {init_text(init)}")
        lines += self.nodes
        lines.append(f"  return {', '.join(o.g for o in outputs)}")
        lines.append("}")
        header = header_lines(meta)
        with open(os.path.join(OUT, f"{self.name}.ekir"), "w") as f:
            f.write("\n".join(header + lines) + "\n")
        with open(os.path.join(OUT, f"{self.name}.py"), "w") as f:
            f.write(self.twin(meta, outputs))

    def twin(self, meta, outputs):
        doc = [f'"""PyTorch twin of the task `{self.name}`.', ""]
        doc += wrap(f"{meta['model']}, {meta['layer']}: {meta['module']} ({meta['source']}).", 96)
        doc += wrap(" ".join(meta["notes"]), 96)
        doc.append('"""')
        uses_math = any("math." in t for t in self.helpers + self.fwd)
        body = doc + [""] + (["import math", ""] if uses_math else []) + [
            "import torch", "import torch.nn as nn", "import torch.nn.functional as F", ""]
        for h in self.helpers:
            body += ["", h.strip("\n"), ""]
        body += ["", "class Model(nn.Module):", "    def __init__(self):", "        super().__init__()"]
        for attr, value in self.consts:
            body.append(f"        self.{attr} = {value!r}")
        for n, _, _, decl in self.own:
            body.append(f"        self.{n} = {decl}")
        for attr, decl, _ in self.mods:
            body.append(f"        self.{attr} = {decl}")
        args = ", ".join(n for n, _, _, _ in self.inputs)
        body += ["", f"    def forward(self, {args}):"]
        body += ["        " + line if line else "" for line in self.fwd]
        rets = [o.py for o in outputs]
        body.append(f"        return {rets[0]}" if len(rets) == 1 else f"        return {', '.join(rets)}")
        body += ["", "", "def get_inputs():", "    return ["]
        for n, s, dt, init in self.inputs:
            body.append(f"        {py_init(init, s)},")
        body += ["    ]", "", "", "def get_init_inputs():", "    return []", ""]
        return "\n".join(body)


def balanced(s):
    """Whether the parentheses of `s` balance without going negative."""
    depth = 0
    for ch in s:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def bcast(a, b):
    a, b = list(a), list(b)
    n = max(len(a), len(b))
    a = [1] * (n - len(a)) + a
    b = [1] * (n - len(b)) + b
    out = []
    for x, y in zip(a, b):
        assert x == y or x == 1 or y == 1, (a, b)
        out.append(max(x, y))
    return out


def valid_frac(n, k, s, p0, d, on):
    """Average share of a kernel's taps that fall inside the input along one axis."""
    tot = 0
    for o in range(on):
        for t in range(k):
            i = o * s - p0 + t * d
            tot += 0 <= i < n
    return tot / (on * k)


def wrap(text, width):
    out, line = [], ""
    for w in text.split():
        if line and len(line) + 1 + len(w) > width:
            out.append(line)
            line = w
        else:
            line = f"{line} {w}" if line else w
    if line:
        out.append(line)
    return out


def quote(v):
    if v and " " not in v and not v.startswith(('"', "[")) and "=" not in v:
        return v
    return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'


def header_lines(meta):
    lines = [f"# task: level=3 family={meta['family']} domains=[{', '.join(meta['domains'])}]",
             f"# provenance: model={quote(meta['model'])} layer={quote(meta['layer'])} "
             f"module={quote(meta['module'])} source={quote(meta['source'])}"]
    if meta.get("tolerance"):
        a, r, why = meta["tolerance"]
        lines.append(f"# tolerance: atol={a} rtol={r} reason={quote(why)}")
    lines += ["# notes: " + ln for ln in wrap(" ".join(meta["notes"]), 92)]
    return lines


def tf_same(n, k, s):
    """TensorFlow SAME padding (before, after) along one axis."""
    o = -(-n // s)
    p = max((o - 1) * s + k - n, 0)
    return p // 2, p - p // 2


MODELS = {}


def model(fn):
    MODELS[fn.__name__] = fn
    return fn


# ---------------------------------------------------------------------------------------------
# Shared blocks
# ---------------------------------------------------------------------------------------------

def make_div(v, divisor=8, min_value=None, round_limit=0.9):
    """torchvision's _make_divisible and timm's make_divisible."""
    min_value = min_value or divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < round_limit * v:
        new_v += divisor
    return new_v


def flatten(b, x, name):
    return b.reshape(x, [x.shape[0], prod(x.shape[1:])], name, py="torch.flatten({}, 1)")


def classifier_head(b, x, fc_path, ncls, name="pool"):
    p = b.gap(x, name)
    p = flatten(b, p, "flatten")
    return b.linear(p, fc_path, ncls)


def se_block(b, x, path, c, sq, act, gate, fc1="fc1", fc2="fc2", name=None):
    """Squeeze-excitation: global pool, 1x1 conv, act, 1x1 conv, gate, scale."""
    xv = b.let(x)
    s = b.gap(xv, f"{path}_pool".replace(".", "_"))
    s = b.conv(s, f"{path}.{fc1}", sq, 1, bias=True)
    s = b.act(s, act, f"{path}_act".replace(".", "_"))
    s = b.conv(s, f"{path}.{fc2}", c, 1, bias=True)
    s = b.act(s, gate, f"{path}_gate".replace(".", "_"))
    return b.mul(s, xv, name or f"{path}_scale".replace(".", "_"))


def chunk2(b, x, axis, names):
    """`a, b = x.chunk(2, dim=axis)` as two slices."""
    xv = b.let(x)
    half = x.shape[axis] // 2
    ga = b.slice(xv, axis, 0, half, names[0])
    gb = b.slice(xv, axis, half, x.shape[axis], names[1])
    b.fwd.append(f"{ga.g[1:]}, {gb.g[1:]} = {xv.py}.chunk(2, dim={axis})")
    return V(ga.g, ga.shape, ga.g[1:], x.m2), V(gb.g, gb.shape, gb.g[1:], x.m2)


def maxpool(b, x, k, s, p, name, ceil=False):
    """nn.MaxPool2d; ceil_mode as extra bottom/right padding that never wins."""
    h, w = x.shape[2], x.shape[3]
    extra = [0, 0]
    if ceil:
        for i, n in enumerate((h, w)):
            fl = (n + 2 * p - k) // s + 1
            ce = -(-(n + 2 * p - k) // s) + 1
            if (ce - 1) * s >= n + p:
                ce -= 1
            extra[i] = (ce - fl) * s
    py = f"F.max_pool2d({{}}, {k}, {s}" + (f", {p}" if p else "") + (", ceil_mode=True" if ceil else "") + ")"
    return b.pool(x, "max_pool2d", k, s, (p, p, p + extra[0], p + extra[1]), name, py)


def prelu(b, x, path):
    """nn.PReLU(C): relu(x) + a * (x - relu(x))."""
    c = x.shape[1]
    attr = b.module(path, f"nn.PReLU({c})", [("weight", [c], U(0.1, 0.4))])
    xv = b.let(x)
    pos = b.node(f"relu({xv.g})", f"{attr}_pos", x.shape)
    neg = b.node(f"sub({xv.g}, %{pos})", f"{attr}_neg", x.shape)
    a4 = b.node(f"reshape({attr}_weight, shape=[1,{c}{',1' * (len(x.shape) - 2)}])", f"{attr}_slope", [1, c] +
                [1] * (len(x.shape) - 2))
    sc = b.node(f"mul(%{neg}, %{a4})", f"{attr}_scaled", x.shape)
    n = b.node(f"add(%{pos}, %{sc})", attr, x.shape)
    return b.out(n, x.shape, f"self.{attr}({xv.py})", x.m2 * (1 + 0.0625) / 2)


# ---------------------------------------------------------------------------------------------
# CNN classifiers
# ---------------------------------------------------------------------------------------------

def mnv2_block(b, x, path, cin, cout, s, t):
    hidden = int(round(cin * t))
    use_res = s == 1 and cin == cout
    inp = b.let(x) if use_res else x
    h, i = inp, 0
    if t != 1:
        h = b.cba(h, f"{path}.conv.0.0", f"{path}.conv.0.1", hidden, 1, act="relu6", act_name=f"{path}.conv.0.2")
        i = 1
    h = b.cba(h, f"{path}.conv.{i}.0", f"{path}.conv.{i}.1", hidden, 3, s, g=hidden, act="relu6",
              act_name=f"{path}.conv.{i}.2")
    h = b.conv(h, f"{path}.conv.{i + 1}", cout, 1)
    h = b.bn(h, f"{path}.conv.{i + 2}")
    if use_res:
        return b.let(b.add(inp, h, path, "{a} + {b}"))
    return b.let(h, path.replace(".", "_"))


@model
def mobilenet_v2_224(b):
    x = b.input("x", [1, 3, 224, 224])
    h = b.cba(x, "features.0.0", "features.0.1", 32, 3, 2, act="relu6", act_name="features.0.2")
    cin, idx = 32, 1
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
                       (6, 320, 1, 1)]:
        for j in range(n):
            h = mnv2_block(b, h, f"features.{idx}", cin, c, s if j == 0 else 1, t)
            cin, idx = c, idx + 1
    h = b.cba(h, "features.18.0", "features.18.1", 1280, 1, act="relu6", act_name="features.18.2")
    y = classifier_head(b, h, "classifier.1", 1000)
    return dict(family="cnn_classifier", domains=["mobile", "robotics", "aiot"], model="MobileNetV2", layer="full model",
                module="torchvision MobileNetV2(width_mult=1.0): features.0-18, adaptive average pool, classifier "
                       "(Dropout, Linear(1280, 1000))",
                source="torchvision.models.mobilenet_v2",
                notes=["The whole MobileNetV2 at its ImageNet input, 224x224, batch 1, in inference form: 17",
                       "inverted residual blocks with ReLU6, batch norm with running statistics, dropout as identity;",
                       "the output is the 1000 class logits."]), [y], ["logits"]


def mnv3_block(b, x, path, cin, k, exp, cout, se, act, s, d=1):
    use_res = s == 1 and cin == cout
    inp = b.let(x) if use_res else x
    a = "hardswish" if act == "HS" else "relu"
    h, i = inp, 0
    if exp != cin:
        h = b.cba(h, f"{path}.block.0.0", f"{path}.block.0.1", exp, 1, act=a, eps=0.001, momentum=0.01,
                  act_name=f"{path}.block.0.2")
        i = 1
    h = b.cba(h, f"{path}.block.{i}.0", f"{path}.block.{i}.1", exp, k, 1 if d > 1 else s, act=a, eps=0.001,
              momentum=0.01, act_name=f"{path}.block.{i}.2", d=d, g=exp)
    i += 1
    if se:
        h = se_block(b, h, f"{path}.block.{i}", exp, make_div(exp // 4, 8), "relu", "hardsigmoid")
        i += 1
    h = b.cba(h, f"{path}.block.{i}.0", f"{path}.block.{i}.1", cout, 1, act=None, eps=0.001, momentum=0.01)
    if use_res:
        return b.let(b.add(h, inp, path, "{a} + {b}"))
    return b.let(h, path.replace(".", "_"))


MNV3_LARGE = [(16, 3, 16, 16, False, "RE", 1), (16, 3, 64, 24, False, "RE", 2), (24, 3, 72, 24, False, "RE", 1),
              (24, 5, 72, 40, True, "RE", 2), (40, 5, 120, 40, True, "RE", 1), (40, 5, 120, 40, True, "RE", 1),
              (40, 3, 240, 80, False, "HS", 2), (80, 3, 200, 80, False, "HS", 1), (80, 3, 184, 80, False, "HS", 1),
              (80, 3, 184, 80, False, "HS", 1), (80, 3, 480, 112, True, "HS", 1), (112, 3, 672, 112, True, "HS", 1),
              (112, 5, 672, 160, True, "HS", 2), (160, 5, 960, 160, True, "HS", 1), (160, 5, 960, 160, True, "HS", 1)]
MNV3_SMALL = [(16, 3, 16, 16, True, "RE", 2), (16, 3, 72, 24, False, "RE", 2), (24, 3, 88, 24, False, "RE", 1),
              (24, 5, 96, 40, True, "HS", 2), (40, 5, 240, 40, True, "HS", 1), (40, 5, 240, 40, True, "HS", 1),
              (40, 5, 120, 48, True, "HS", 1), (48, 5, 144, 48, True, "HS", 1), (48, 5, 288, 96, True, "HS", 2),
              (96, 5, 576, 96, True, "HS", 1), (96, 5, 576, 96, True, "HS", 1)]


def mnv3_features(b, x, cfg, prefix="features", dilated=False):
    h = b.cba(x, f"{prefix}.0.0", f"{prefix}.0.1", 16, 3, 2, act="hardswish", eps=0.001, momentum=0.01,
              act_name=f"{prefix}.0.2")
    outs = [h]
    for i, (cin, k, exp, cout, se, act, s) in enumerate(cfg):
        d = 2 if dilated and i >= len(cfg) - 3 else 1
        h = mnv3_block(b, h, f"{prefix}.{i + 1}", cin, k, exp, cout, se, act, s, d)
        outs.append(h)
    last = cfg[-1][3]
    n = len(cfg) + 1
    h = b.cba(h, f"{prefix}.{n}.0", f"{prefix}.{n}.1", 6 * last, 1, act="hardswish", eps=0.001, momentum=0.01,
              act_name=f"{prefix}.{n}.2")
    outs.append(h)
    return outs


def mnv3_classifier(b, h, hidden):
    p = b.gap(h, "pool")
    p = flatten(b, p, "flatten")
    p = b.linear(p, "classifier.0", hidden)
    p = b.act(p, "hardswish", "classifier_1")
    return b.linear(p, "classifier.3", 1000)


@model
def mobilenet_v3_large_224(b):
    x = b.input("x", [1, 3, 224, 224])
    h = mnv3_features(b, x, MNV3_LARGE)[-1]
    y = mnv3_classifier(b, h, 1280)
    return dict(family="cnn_classifier", domains=["mobile", "aiot"], model="MobileNetV3-Large", layer="full model",
                module="torchvision MobileNetV3 (large): features.0-16, adaptive average pool, classifier (Linear(960, "
                       "1280), Hardswish, Dropout, Linear(1280, 1000))",
                source="torchvision.models.mobilenet_v3_large",
                notes=["The whole MobileNetV3-Large at 224x224, batch 1, inference form: 15 inverted residual",
                       "blocks with ReLU or hardswish and hard-sigmoid squeeze-excitation, batch norm (eps 1e-3) with",
                       "running statistics, dropout as identity; the output is the 1000 class logits."]), [y], ["logits"]


@model
def mobilenet_v3_small_224(b):
    x = b.input("x", [1, 3, 224, 224])
    h = mnv3_features(b, x, MNV3_SMALL)[-1]
    y = mnv3_classifier(b, h, 1024)
    return dict(family="cnn_classifier", domains=["mobile", "aiot"], model="MobileNetV3-Small", layer="full model",
                module="torchvision MobileNetV3 (small): features.0-12, adaptive average pool, classifier (Linear(576, "
                       "1024), Hardswish, Dropout, Linear(1024, 1000))",
                source="torchvision.models.mobilenet_v3_small",
                notes=["The whole MobileNetV3-Small at 224x224, batch 1, inference form: 11 inverted residual",
                       "blocks with ReLU or hardswish and hard-sigmoid squeeze-excitation, batch norm (eps 1e-3) with",
                       "running statistics, dropout as identity; the output is the 1000 class logits."]), [y], ["logits"]


def basic_block(b, x, path, cin, cout, s):
    xv = b.let(x)
    h = b.cba(xv, f"{path}.conv1", f"{path}.bn1", cout, 3, s, act="relu", act_name=f"{path}.relu")
    h = b.bn(b.conv(h, f"{path}.conv2", cout, 3), f"{path}.bn2")
    if s != 1 or cin != cout:
        idn = b.bn(b.conv(xv, f"{path}.downsample.0", cout, 1, s, p=0), f"{path}.downsample.1")
    else:
        idn = xv
    y = b.add(h, idn, f"{path}.add", "{a} + {b}")
    return b.let(b.act(y, "relu", path))


@model
def resnet18_112(b):
    x = b.input("x", [1, 3, 112, 112])
    h = b.cba(x, "conv1", "bn1", 64, 7, 2, act="relu", act_name="relu")
    h = maxpool(b, h, 3, 2, 1, "maxpool")
    cin = 64
    for li, c in enumerate([64, 128, 256, 512]):
        for j in range(2):
            h = basic_block(b, h, f"layer{li + 1}.{j}", cin, c, 2 if (j == 0 and li > 0) else 1)
            cin = c
    y = classifier_head(b, h, "fc", 1000, "avgpool")
    return dict(family="cnn_classifier", domains=["mobile", "robotics"], model="ResNet-18", layer="full model",
                module="torchvision ResNet(BasicBlock, [2, 2, 2, 2]): conv1, bn1, relu, maxpool, layer1-4, avgpool, fc",
                source="torchvision.models.resnet18",
                notes=["The whole ResNet-18, batch 1, in inference form (batch norm with running statistics). The",
                       "input is reduced from 224x224 to 112x112 (a quarter of the work: 0.9 instead of 3.6 GFLOP) so",
                       "that the f64 reference stays fast; channels are the model's, and the feature maps run 56, 28,",
                       "14, 7 and 4 pixels wide. The output is the 1000 class logits."]), [y], ["logits"]


def fire(b, x, path, sq, e1, e3):
    cin = x.shape[1]
    s = b.act(b.conv(x, f"{path}.squeeze", sq, 1, bias=True, w_init=He(cin)), "relu", f"{path}.squeeze_activation")
    s = b.let(s)
    a = b.act(b.conv(s, f"{path}.expand1x1", e1, 1, bias=True, w_init=He(sq)), "relu",
              f"{path}.expand1x1_activation")
    c = b.act(b.conv(s, f"{path}.expand3x3", e3, 3, bias=True, w_init=He(sq * 9)), "relu",
              f"{path}.expand3x3_activation")
    return b.let(b.concat([a, c], 1, path.replace(".", "_"), "torch.cat([{}, {}], 1)"))


@model
def squeezenet1_1_224(b):
    x = b.input("x", [1, 3, 224, 224])
    h = b.act(b.conv(x, "features.0", 64, 3, 2, p=0, bias=True, w_init=He(27)), "relu", "features_1")
    h = maxpool(b, h, 3, 2, 0, "features_2", ceil=True)
    h = fire(b, h, "features.3", 16, 64, 64)
    h = fire(b, h, "features.4", 16, 64, 64)
    h = maxpool(b, h, 3, 2, 0, "features_5", ceil=True)
    h = fire(b, h, "features.6", 32, 128, 128)
    h = fire(b, h, "features.7", 32, 128, 128)
    h = maxpool(b, h, 3, 2, 0, "features_8", ceil=True)
    h = fire(b, h, "features.9", 48, 192, 192)
    h = fire(b, h, "features.10", 48, 192, 192)
    h = fire(b, h, "features.11", 64, 256, 256)
    h = fire(b, h, "features.12", 64, 256, 256)
    h = b.act(b.conv(h, "classifier.1", 1000, 1, bias=True, w_init=He(512)), "relu", "classifier_2")
    h = b.gap(h, "classifier_3")
    y = flatten(b, h, "flatten")
    return dict(family="cnn_classifier", domains=["mobile", "aiot"], model="SqueezeNet 1.1", layer="full model",
                module="torchvision SqueezeNet(version=\"1_1\"): features (conv, 3 max pools with ceil_mode, 8 Fire "
                       "modules), classifier (Dropout, final_conv, ReLU, AdaptiveAvgPool2d), flatten",
                source="torchvision.models.squeezenet1_1",
                notes=["The whole SqueezeNet 1.1 at 224x224, batch 1, inference form. The model has no batch norm:",
                       "convolution weights are drawn as torchvision initialises them (kaiming_uniform_ with the ReLU",
                       "gain, bound sqrt(6/fan_in), the final convolution too) so activations keep their scale",
                       "through the depth. The output is the 1000 class scores after ReLU and average pooling."]), \
        [y], ["scores"]


def shuffle_unit(b, x, path, cin, cout, s, act="relu"):
    bf = cout // 2
    _, _, hh, ww = x.shape
    if s == 1:
        x1, x2 = chunk2(b, x, 1, [f"{path}_x1", f"{path}_x2"])
        src = x2
    else:
        xv = b.let(x)
        br1 = b.bn(b.conv(xv, f"{path}.branch1.0", cin, 3, s, g=cin), f"{path}.branch1.1")
        br1 = b.cba(br1, f"{path}.branch1.2", f"{path}.branch1.3", bf, 1, act=act, act_name=f"{path}.branch1.4")
        x1 = b.let(br1)
        src = xv
    h = b.cba(src, f"{path}.branch2.0", f"{path}.branch2.1", bf, 1, act=act, act_name=f"{path}.branch2.2")
    h = b.bn(b.conv(h, f"{path}.branch2.3", bf, 3, s, g=bf), f"{path}.branch2.4")
    h = b.cba(h, f"{path}.branch2.5", f"{path}.branch2.6", bf, 1, act=act, act_name=f"{path}.branch2.7")
    out = b.concat([x1, h], 1, f"{path}_cat", "torch.cat(({}, {}), dim=1)")
    oh, ow = out.shape[2], out.shape[3]
    out = b.reshape(out, [1, 2, cout // 2, oh, ow], f"{path}_view", py="{}.view(1, 2, %d, %d, %d)" % (cout // 2, oh, ow))
    out = b.transpose(out, [0, 2, 1, 3, 4], f"{path}_shuffle", py_fn="torch.transpose({}, 1, 2).contiguous()")
    return b.let(b.reshape(out, [1, cout, oh, ow], path.replace(".", "_"), py="{}.view(1, -1, %d, %d)" % (oh, ow)))


def shufflenet_stages(b, h, chans, repeats, stages=(2, 3, 4), prefix="", act="relu"):
    cin = chans[0]
    outs = []
    for st, c, n in zip(stages, chans[1:], repeats):
        for j in range(n):
            h = shuffle_unit(b, h, f"{prefix}stage{st}.{j}", cin, c, 2 if j == 0 else 1, act)
            cin = c
        outs.append(h)
    return outs


@model
def shufflenet_v2_x1_0_224(b):
    x = b.input("x", [1, 3, 224, 224])
    h = b.cba(x, "conv1.0", "conv1.1", 24, 3, 2, act="relu", act_name="conv1.2")
    h = maxpool(b, h, 3, 2, 1, "maxpool")
    h = shufflenet_stages(b, h, [24, 116, 232, 464], [4, 8, 4])[-1]
    h = b.cba(h, "conv5.0", "conv5.1", 1024, 1, act="relu", act_name="conv5.2")
    h = b.mean(h, [2, 3], "global_pool", "{}.mean([2, 3])")
    y = b.linear(h, "fc", 1000)
    return dict(family="cnn_classifier", domains=["mobile", "aiot"], model="ShuffleNetV2 x1.0", layer="full model",
                module="torchvision ShuffleNetV2([4, 8, 4], [24, 116, 232, 464, 1024]): conv1, maxpool, stage2-4, "
                       "conv5, mean over H and W, fc",
                source="torchvision.models.shufflenet_v2_x1_0",
                notes=["The whole ShuffleNetV2 x1.0 at 224x224, batch 1, inference form: 16 units with channel",
                       "split (chunk), depthwise branches, concatenation and channel shuffle (view, transpose, view);",
                       "the output is the 1000 class logits."]), [y], ["logits"]



def mbconv(b, x, path, cin, cout, k, s, t):
    """torchvision MBConv with squeeze-excitation (EfficientNet-B0)."""
    exp = make_div(cin * t, 8)
    use_res = s == 1 and cin == cout
    inp = b.let(x) if use_res else x
    h, i = inp, 0
    if exp != cin:
        h = b.cba(h, f"{path}.block.0.0", f"{path}.block.0.1", exp, 1, act="silu", act_name=f"{path}.block.0.2")
        i = 1
    h = b.cba(h, f"{path}.block.{i}.0", f"{path}.block.{i}.1", exp, k, s, g=exp, act="silu",
              act_name=f"{path}.block.{i}.2")
    h = se_block(b, h, f"{path}.block.{i + 1}", exp, max(1, cin // 4), "silu", "sigmoid")
    h = b.cba(h, f"{path}.block.{i + 2}.0", f"{path}.block.{i + 2}.1", cout, 1, act=None)
    if use_res:
        return b.let(b.add(h, inp, path, "{a} + {b}"))
    return b.let(h, path.replace(".", "_"))


B0_STAGES = [(1, 3, 1, 32, 16, 1), (6, 3, 2, 16, 24, 2), (6, 5, 2, 24, 40, 2), (6, 3, 2, 40, 80, 3),
             (6, 5, 1, 80, 112, 3), (6, 5, 2, 112, 192, 4), (6, 3, 1, 192, 320, 1)]


@model
def efficientnet_b0_224(b):
    x = b.input("x", [1, 3, 224, 224])
    h = b.cba(x, "features.0.0", "features.0.1", 32, 3, 2, act="silu", act_name="features.0.2")
    for si, (t, k, s, cin, cout, n) in enumerate(B0_STAGES):
        for j in range(n):
            h = mbconv(b, h, f"features.{si + 1}.{j}", cin if j == 0 else cout, cout, k, s if j == 0 else 1, t)
    h = b.cba(h, "features.8.0", "features.8.1", 1280, 1, act="silu", act_name="features.8.2")
    y = classifier_head(b, h, "classifier.1", 1000, "avgpool")
    return dict(family="cnn_classifier", domains=["mobile", "aiot"], model="EfficientNet-B0", layer="full model",
                module="torchvision EfficientNet (B0): features.0-8 (16 MBConv blocks with SiLU and "
                       "squeeze-excitation), avgpool, classifier (Dropout, Linear(1280, 1000))",
                source="torchvision.models.efficientnet_b0",
                notes=["The whole EfficientNet-B0 at 224x224, batch 1, inference form: batch norm with running",
                       "statistics, dropout and stochastic depth as identities; the output is the 1000 class logits."]), \
        [y], ["logits"]


@model
def efficientnet_lite0_224(b):
    x = b.input("x", [1, 3, 224, 224])
    h = b.cba(x, "conv_stem", "bn1", 32, 3, 2, act="relu6", act_name="bn1_act")
    # blocks.0: DepthwiseSeparableConv 32 -> 16 (no skip: channels change)
    h = b.cba(h, "blocks.0.0.conv_dw", "blocks.0.0.bn1", 32, 3, 1, g=32, act="relu6")
    h = b.let(b.cba(h, "blocks.0.0.conv_pw", "blocks.0.0.bn2", 16, 1, act=None), "blocks_0_0")
    cin = 16
    for si, (k, s, cout, n) in enumerate([(3, 2, 24, 2), (5, 2, 40, 2), (3, 2, 80, 3), (5, 1, 112, 3), (5, 2, 192, 4),
                                          (3, 1, 320, 1)]):
        for j in range(n):
            p = f"blocks.{si + 1}.{j}"
            st = s if j == 0 else 1
            use_res = st == 1 and cin == cout
            inp = b.let(h) if use_res else h
            e = b.cba(inp, f"{p}.conv_pw", f"{p}.bn1", cin * 6, 1, act="relu6")
            e = b.cba(e, f"{p}.conv_dw", f"{p}.bn2", cin * 6, k, st, g=cin * 6, act="relu6")
            e = b.cba(e, f"{p}.conv_pwl", f"{p}.bn3", cout, 1, act=None)
            h = b.let(b.add(e, inp, p, "{a} + {b}")) if use_res else b.let(e, p.replace(".", "_"))
            cin = cout
    h = b.cba(h, "conv_head", "bn2", 1280, 1, act="relu6", act_name="bn2_act")
    y = classifier_head(b, h, "classifier", 1000, "global_pool")
    return dict(family="cnn_classifier", domains=["mobile", "aiot"], model="EfficientNet-Lite0", layer="full model",
                module="timm EfficientNet (efficientnet_lite0): conv_stem, bn1 (ReLU6), blocks.0-6 (depthwise "
                       "separable and inverted residual blocks, ReLU6, no squeeze-excitation), conv_head, bn2, "
                       "global pool, classifier",
                source="timm efficientnet_lite0",
                notes=["The whole EfficientNet-Lite0 (the EfficientNet variant for mobile and edge accelerators:",
                       "ReLU6, no squeeze-excitation, fixed stem and head) at 224x224, batch 1, inference form; the",
                       "output is the 1000 class logits."]), [y], ["logits"]


@model
def convnext_atto_160(b):
    x = b.input("x", [1, 3, 160, 160])
    h = b.conv(x, "stem.0", 40, 4, 4, p=0, bias=True)
    h = b.let(b.layer_norm2d(h, "stem.1"), "stem")
    dims, depths = [40, 80, 160, 320], [2, 2, 6, 2]
    for si in range(4):
        if si > 0:
            h = b.layer_norm2d(h, f"stages.{si}.downsample.0")
            h = b.let(b.conv(h, f"stages.{si}.downsample.1", dims[si], 2, 2, p=0, bias=True),
                      f"stages_{si}_downsample")
        c = dims[si]
        for j in range(depths[si]):
            p = f"stages.{si}.blocks.{j}"
            gamma = b.param(f"{p}.gamma".replace(".", "_"), [c], U(0.1, 1.0))
            sc = b.let(h)
            t = b.conv(sc, f"{p}.conv_dw", c, 7, g=c, bias=True)
            t = b.layer_norm2d(t, f"{p}.norm")
            t = b.conv(t, f"{p}.mlp.fc1", 4 * c, 1, bias=True)
            t = b.act(t, "gelu", f"{p}_mlp_act".replace(".", "_"))
            t = b.conv(t, f"{p}.mlp.fc2", c, 1, bias=True)
            g4 = b.reshape(gamma, [1, c, 1, 1], f"{p}_gamma_4d".replace(".", "_"), py="{}.reshape(1, -1, 1, 1)")
            t = b.mul(t, g4, f"{p}_layer_scale".replace(".", "_"), "{a}.mul({b})")
            h = b.let(b.add(t, sc, p.replace(".", "_"), "{a} + {b}"))
    p = b.gap(h, "head_global_pool")
    p = b.layer_norm2d(p, "head.norm")
    p = flatten(b, p, "head_flatten")
    y = b.linear(p, "head.fc", 1000)
    return dict(family="cnn_classifier", domains=["mobile", "aiot"], model="ConvNeXt-Atto", layer="full model",
                module="timm ConvNeXt (convnext_atto: depths (2, 2, 6, 2), dims (40, 80, 160, 320), conv_mlp=True): "
                       "stem (4x4 patchify conv, LayerNorm2d), 4 stages, head (global pool, LayerNorm2d, fc)",
                source="timm convnext_atto",
                notes=["The whole ConvNeXt-Atto, batch 1, inference form (drop path as identity). The input is",
                       "reduced from 224x224 to 160x160 (1.1 to 0.56 GFLOP) for the f64 reference; channels are the",
                       "model's and the stages run at 40, 20, 10 and 5 pixels. LayerNorm2d (eps 1e-6) normalises",
                       "over channels via permutes; the trained layer scales are drawn from [0.1, 1]. The output is",
                       "the 1000 class logits."]), [y], ["logits"]


def ghost_module(b, x, path, cout, relu):
    init = -(-cout // 2)
    p = b.cba(x, f"{path}.primary_conv.0", f"{path}.primary_conv.1", init, 1, act="relu" if relu else None,
              act_name=f"{path}.primary_conv.2")
    p = b.let(p)
    c = b.cba(p, f"{path}.cheap_operation.0", f"{path}.cheap_operation.1", init, 3, g=init,
              act="relu" if relu else None, act_name=f"{path}.cheap_operation.2")
    out = b.concat([p, c], 1, f"{path}_cat".replace(".", "_"), "torch.cat([{}, {}], dim=1)")
    if 2 * init != cout:
        out = b.slice(out, 1, 0, cout, path.replace(".", "_"), py=f"{{}}[:, :{cout}]")
    return out


def ghost_bottleneck(b, x, path, cin, mid, cout, k, s, se):
    xv = b.let(x)
    h = ghost_module(b, xv, f"{path}.ghost1", mid, True)
    if s > 1:
        h = b.bn(b.conv(h, f"{path}.conv_dw", mid, k, s, g=mid), f"{path}.bn_dw")
    if se:
        h = se_block(b, h, f"{path}.se", mid, make_div(mid * se, 4), "relu", "hardsigmoid", "conv_reduce",
                     "conv_expand")
    h = ghost_module(b, h, f"{path}.ghost2", cout, False)
    if cin == cout and s == 1:
        sc = xv
    else:
        sc = b.bn(b.conv(xv, f"{path}.shortcut.0", cin, k, s, g=cin), f"{path}.shortcut.1")
        sc = b.bn(b.conv(sc, f"{path}.shortcut.2", cout, 1), f"{path}.shortcut.3")
    return b.let(b.add(h, sc, path.replace(".", "_"), "{a} + {b}"))


GHOST_CFG = [[(3, 16, 16, 0, 1)], [(3, 48, 24, 0, 2)], [(3, 72, 24, 0, 1)], [(5, 72, 40, 0.25, 2)],
             [(5, 120, 40, 0.25, 1)], [(3, 240, 80, 0, 2)],
             [(3, 200, 80, 0, 1), (3, 184, 80, 0, 1), (3, 184, 80, 0, 1), (3, 480, 112, 0.25, 1),
              (3, 672, 112, 0.25, 1)],
             [(5, 672, 160, 0.25, 2)],
             [(5, 960, 160, 0, 1), (5, 960, 160, 0.25, 1), (5, 960, 160, 0, 1), (5, 960, 160, 0.25, 1)]]


@model
def ghostnet_100_224(b):
    x = b.input("x", [1, 3, 224, 224])
    h = b.cba(x, "conv_stem", "bn1", 16, 3, 2, act="relu", act_name="act1")
    cin = 16
    for si, stage in enumerate(GHOST_CFG):
        for j, (k, e, c, se, s) in enumerate(stage):
            out, mid = make_div(c, 4), make_div(e, 4)
            h = ghost_bottleneck(b, h, f"blocks.{si}.{j}", cin, mid, out, k, s, se)
            cin = out
    h = b.cba(h, "blocks.9.0.conv", "blocks.9.0.bn1", 960, 1, act="relu", act_name="blocks_9")
    h = b.gap(h, "global_pool")
    h = b.act(b.conv(h, "conv_head", 1280, 1, bias=True), "relu", "act2")
    h = flatten(b, h, "flatten")
    y = b.linear(h, "classifier", 1000)
    return dict(family="cnn_classifier", domains=["mobile", "aiot"], model="GhostNet 1.0", layer="full model",
                module="timm GhostNet (ghostnet_100): conv_stem, bn1, blocks.0-8 (16 GhostBottlenecks, hard-sigmoid "
                       "squeeze-excitation), blocks.9 (ConvBnAct 160 -> 960), global pool, conv_head, act2, "
                       "classifier",
                source="timm ghostnet_100",
                notes=["The whole GhostNet 1.0 at 224x224, batch 1, inference form: ghost modules (primary 1x1",
                       "convolution, cheap 3x3 depthwise convolution, concatenation cut to the output channels), strided",
                       "depthwise convolutions and shortcuts; dropout as identity. The output is the 1000 class",
                       "logits."]), [y], ["logits"]


@model
def regnet_x_400mf_160(b):
    x = b.input("x", [1, 3, 160, 160])
    h = b.cba(x, "stem.0", "stem.1", 32, 3, 2, act="relu", act_name="stem.2")
    cin = 32
    for si, (w, d) in enumerate(zip([32, 64, 160, 400], [1, 2, 7, 12])):
        for j in range(d):
            p = f"trunk_output.block{si + 1}.block{si + 1}-{j}"
            s = 2 if j == 0 else 1
            xv = b.let(h)
            if cin != w or s != 1:
                sc = b.cba(xv, f"{p}.proj.0", f"{p}.proj.1", w, 1, s, act=None, p=0)
            else:
                sc = xv
            f = b.cba(xv, f"{p}.f.a.0", f"{p}.f.a.1", w, 1, act="relu", act_name=f"{p}.f.a.2")
            f = b.cba(f, f"{p}.f.b.0", f"{p}.f.b.1", w, 3, s, g=w // 16, act="relu", act_name=f"{p}.f.b.2")
            f = b.cba(f, f"{p}.f.c.0", f"{p}.f.c.1", w, 1, act=None)
            h = b.add(sc, f, f"{p}_add", "{a} + {b}")
            h = b.let(b.act(h, "relu", p))
            cin = w
    y = classifier_head(b, h, "fc", 1000, "avgpool")
    return dict(family="cnn_classifier", domains=["mobile", "aiot"], model="RegNetX-400MF", layer="full model",
                module="torchvision RegNet (regnet_x_400mf: widths 32, 64, 160, 400, depths 1, 2, 7, 12, group width "
                       "16): stem, trunk_output.block1-4 (ResBottleneckBlock with grouped 3x3), avgpool, fc",
                source="torchvision.models.regnet_x_400mf",
                notes=["The whole RegNetX-400MF, batch 1, inference form: 22 residual bottleneck blocks whose 3x3",
                       "convolutions are grouped (16 channels a group), with projection shortcuts where the width or",
                       "stride changes. The input is reduced from 224x224 to 160x160 (0.8 to 0.42 GFLOP) for the f64",
                       "reference; channels are the model's. The output is the 1000 class logits."]), [y], ["logits"]


def face_conv_block(b, x, path, cout, k, s, p, g=1, act=True):
    h = b.bn(b.conv(x, f"{path}.conv", cout, k, s, p=p, g=g), f"{path}.bn")
    return prelu(b, h, f"{path}.prelu") if act else h


def face_depth_wise(b, x, path, cin, cout, s, groups, residual):
    xv = b.let(x) if residual else x
    h = face_conv_block(b, xv, f"{path}.conv", groups, 1, 1, 0)
    h = face_conv_block(b, h, f"{path}.conv_dw", groups, 3, s, 1, g=groups)
    h = face_conv_block(b, h, f"{path}.project", cout, 1, 1, 0, act=False)
    if residual:
        return b.let(b.add(xv, h, path.replace(".", "_"), "{a} + {b}"))
    return b.let(h, path.replace(".", "_"))


@model
def mobilefacenet_112(b):
    x = b.input("x", [1, 3, 112, 112])
    h = face_conv_block(b, x, "conv1", 64, 3, 2, 1)
    h = face_conv_block(b, h, "conv2_dw", 64, 3, 1, 1, g=64)
    h = face_depth_wise(b, h, "conv_23", 64, 64, 2, 128, False)
    for i in range(4):
        h = face_depth_wise(b, h, f"conv_3.model.{i}", 64, 64, 1, 128, True)
    h = face_depth_wise(b, h, "conv_34", 64, 128, 2, 256, False)
    for i in range(6):
        h = face_depth_wise(b, h, f"conv_4.model.{i}", 128, 128, 1, 256, True)
    h = face_depth_wise(b, h, "conv_45", 128, 128, 2, 512, False)
    for i in range(2):
        h = face_depth_wise(b, h, f"conv_5.model.{i}", 128, 128, 1, 256, True)
    h = face_conv_block(b, h, "conv_6_sep", 512, 1, 1, 0)
    h = face_conv_block(b, h, "conv_6_dw", 512, 7, 1, 0, g=512, act=False)
    h = flatten(b, h, "conv_6_flatten")
    h = b.linear(h, "linear", 512, bias=False)
    h = b.let(b.bn(h, "bn", dims=1))
    sq = b.node(f"mul({h.g}, {h.g})", "sq", h.shape)
    ss = b.node(f"sum(%{sq}, axes=[1], keepdims=true)", "sum_sq", [1, 1])
    nrm = b.node(f"sqrt(%{ss})", "norm", [1, 1])
    n = b.node(f"div({h.g}, %{nrm})", "embedding_l2", h.shape)
    y = b.out(n, h.shape, f"l2_norm({h.py})", 1.0 / 512)
    b.helpers.append('''
def l2_norm(input, axis=1):
    norm = torch.norm(input, 2, axis, True)
    return torch.div(input, norm)
''')
    return dict(family="face_recognition", domains=["mobile", "aiot"], model="MobileFaceNet", layer="full model",
                module="MobileFaceNet(embedding_size=512): Conv_block / Depth_Wise / Residual stacks with PReLU, "
                       "7x7 global depthwise Linear_block, Linear(512, 512, bias=False), BatchNorm1d, l2_norm",
                source="TreB1eN/InsightFace_Pytorch model.py",
                notes=["The whole MobileFaceNet face-embedding network at its native 112x112 aligned-face input,",
                       "batch 1, inference form: PReLU activations (relu(x) + a * (x - relu(x)), slopes drawn from",
                       "[0.1, 0.4]), bottleneck blocks with residuals, the global depthwise 7x7 convolution, the",
                       "embedding layer with batch norm, and the L2 normalisation. The output is the unit-length",
                       "512-d embedding."]), [y], ["embedding"]


def tf_conv(b, x, path, cout, k, s=1, g=1, bias=True, **kw):
    """A Keras/TensorFlow convolution with SAME padding (asymmetric when the stride needs it)."""
    kh, kw_ = (k, k) if isinstance(k, int) else k
    sh, sw = (s, s) if isinstance(s, int) else s
    ph, pw = tf_same(x.shape[2], kh, sh), tf_same(x.shape[3], kw_, sw)
    if ph[0] == ph[1] and pw[0] == pw[1]:
        return b.conv(x, path, cout, k, s, p=(ph[0], pw[0]), g=g, bias=bias, **kw)
    return b.conv(x, path, cout, k, s, g=g, bias=bias, pad4=(ph[0], pw[0], ph[1], pw[1]), **kw)


def pad_op(b, x, pads, name, py):
    shape = [d + pads[i] + pads[len(x.shape) + i] for i, d in enumerate(x.shape)]
    n = b.node(f"pad({x.g}, pads={shape_text(pads)}, mode=constant, value=0.0)", name, shape)
    return b.out(n, shape, py.format(b.use(x)), x.m2 * prod(x.shape) / prod(shape))


@model
def ds_cnn_l_kws(b):
    x = b.input("x", [1, 1, 49, 10])
    h = tf_conv(b, x, "conv_1", 276, (10, 4), (2, 1))
    h = b.act(b.bn(h, "conv_1.batch_norm", eps=0.001), "relu", "conv_1_relu")
    for i, s in enumerate([2, 1, 1, 1, 1]):
        p = f"conv_ds_{i + 1}"
        h = tf_conv(b, h, f"{p}.depthwise_conv", 276, 3, s, g=276)
        h = b.act(b.bn(h, f"{p}.dw_batch_norm", eps=0.001), "relu", f"{p}_dw_relu")
        h = b.conv(h, f"{p}.pointwise_conv", 276, 1, bias=True)
        h = b.let(b.act(b.bn(h, f"{p}.pw_batch_norm", eps=0.001), "relu", p))
    h = b.gap(h, "avg_pool")
    h = flatten(b, h, "squeeze")
    y = b.linear(h, "fc1", 12)
    return dict(family="tinyml", domains=["mobile", "aiot"], model="DS-CNN-L (keyword spotting)", layer="full model",
                module="create_ds_cnn_model with model_size_info 6 276 10 4 2 1 276 3 3 2 2 276 3 3 1 1 (x4): "
                       "conv_1 (10x4, stride (2, 1), SAME) + batch norm + ReLU, 5 depthwise-separable layers, average "
                       "pool, fc1",
                source="ARM-software/ML-KWS-for-MCU models.py",
                notes=["The large DS-CNN keyword spotter (Hello Edge) on one 49x10 MFCC window (1 s of audio, 40",
                       "ms frames every 20 ms), batch 1, inference form: TensorFlow SAME padding written as explicit",
                       "asymmetric pads where the stride needs them, batch norm eps 1e-3, 276 channels at 25x10 then",
                       "13x5. The output is the 12 keyword logits. MLPerf Tiny's DS-CNN-S (64 channels, 5 MFLOP) is",
                       "below the suite's timing floor, so the large variant stands for keyword spotting."]), \
        [y], ["logits"]


@model
def vww_mobilenet_v1_025_96(b):
    x = b.input("x", [1, 3, 96, 96])
    h = tf_conv(b, x, "conv_0", 8, 3, 2)
    h = b.act(b.bn(h, "bn_0", eps=0.001), "relu", "relu_0")
    cin = 8
    for i, (s, c) in enumerate([(1, 16), (2, 32), (1, 32), (2, 64), (1, 64), (2, 128)] + [(1, 128)] * 5 +
                               [(2, 256), (1, 256)]):
        p = f"{i + 1}"
        h = tf_conv(b, h, f"dw_{p}", cin, 3, s, g=cin)
        h = b.act(b.bn(h, f"dw_bn_{p}", eps=0.001), "relu", f"dw_relu_{p}")
        h = b.conv(h, f"pw_{p}", c, 1, bias=True)
        h = b.let(b.act(b.bn(h, f"pw_bn_{p}", eps=0.001), "relu", f"block_{p}"))
        cin = c
    h = b.pool(h, "avg_pool2d", 3, 3, 0, "avg_pool", "F.avg_pool2d({}, 3)")
    h = flatten(b, h, "flatten")
    h = b.linear(h, "dense", 2)
    y = b.softmax(h, -1, "softmax", "F.softmax({}, dim=-1)")
    return dict(family="tinyml", domains=["aiot"], model="MobileNetV1 0.25 (MLPerf Tiny visual wake words)",
                layer="full model",
                module="mobilenet_v1(): Conv2D(8, 3, strides=2, SAME) + BN + ReLU, 13 depthwise-separable layers "
                       "(alpha 0.25), AveragePooling2D, Dense(2, softmax)",
                source="mlcommons/tiny benchmark/training/visual_wake_words vww_model.py",
                notes=["The MLPerf Tiny visual wake words reference model (person / no person) on its 96x96 RGB",
                       "input, batch 1, inference form: Keras convolutions with biases and SAME padding (asymmetric",
                       "pads at stride 2), batch norm eps 1e-3, ReLU. The output is the two class probabilities."]), \
        [y], ["probs"]


@model
def resnet8_cifar10(b):
    x = b.input("x", [1, 3, 32, 32])
    h = tf_conv(b, x, "conv1", 16, 3)
    h = b.let(b.act(b.bn(h, "bn1", eps=0.001), "relu", "relu1"))
    cin = 16
    for si, c in enumerate([16, 32, 64]):
        p = f"stack{si + 1}"
        s = 1 if si == 0 else 2
        y = tf_conv(b, h, f"{p}.conv1", c, 3, s)
        y = b.act(b.bn(y, f"{p}.bn1", eps=0.001), "relu", f"{p}_relu1")
        y = b.bn(tf_conv(b, y, f"{p}.conv2", c, 3), f"{p}.bn2", eps=0.001)
        sc = h if s == 1 else tf_conv(b, h, f"{p}.shortcut", c, 1, s)
        h = b.let(b.act(b.add(sc, y, f"{p}_add", "{a} + {b}"), "relu", p))
        cin = c
    h = b.pool(h, "avg_pool2d", 8, 8, 0, "avg_pool", "F.avg_pool2d({}, 8)")
    h = flatten(b, h, "flatten")
    h = b.linear(h, "dense", 10)
    y = b.softmax(h, -1, "softmax", "F.softmax({}, dim=-1)")
    return dict(family="tinyml", domains=["aiot"], model="ResNet-8 (MLPerf Tiny image classification)",
                layer="full model",
                module="resnet_v1_eembc(): Conv2D(16, 3) + BN + ReLU, three residual stacks (16, 32, 64 filters; "
                       "strided stacks with a 1x1 convolution shortcut), AveragePooling2D(8), Dense(10, softmax)",
                source="mlcommons/tiny benchmark/training/image_classification keras_model.py",
                notes=["The MLPerf Tiny CIFAR-10 reference ResNet on its 32x32 RGB input, batch 1, inference form:",
                       "Keras convolutions with biases and SAME padding (a bottom/right pad at stride 2), batch norm",
                       "eps 1e-3. The output is the ten class probabilities."]), [y], ["probs"]


@model
def autoencoder_toyadmos(b):
    n = 309
    x = b.input("x", [n, 640], ("normal", (0.0, 1.0)))
    h = x
    for i, c in enumerate([128, 128, 128, 128, 8, 128, 128, 128, 128]):
        h = b.linear(h, f"dense_{i}", c)
        h = b.let(b.act(b.bn(h, f"bn_{i}", eps=0.001, dims=1), "relu", f"relu_{i}"))
    y = b.linear(h, "dense_9", 640)
    return dict(family="autoencoder", domains=["aiot"], model="Deep autoencoder (MLPerf Tiny anomaly detection)",
                layer="full model",
                module="get_model(640): 4x (Dense(128), BatchNormalization, ReLU), Dense(8) bottleneck, 4x (Dense(128), "
                       "BatchNormalization, ReLU), Dense(640)",
                source="mlcommons/tiny benchmark/training/anomaly_detection keras_model.py",
                notes=["The MLPerf Tiny anomaly-detection autoencoder (ToyADMOS machine sounds) in inference form,",
                       "batched as the application scores a clip: 309 vectors of 5 stacked 128-band log-mel frames",
                       "(640 values each; a 10 s clip at 16 kHz, hop 512, gives 313 frames and 309 windows), inputs",
                       "standardised to normal(0, 1); batch norm eps 1e-3. The output is the reconstruction, whose",
                       "mean squared error is the anomaly score."]), [y], ["reconstruction"]


@model
def yamnet_96x64(b):
    x = b.input("x", [1, 1, 96, 64], ("uniform", (-4.0, 1.0)))
    ones = ("const", (1.0,))
    h = tf_conv(b, x, "layer1.conv", 32, 3, 2, bias=False)
    h = b.act(b.bn(h, "layer1.conv_bn", eps=0.0001, gamma=ones), "relu", "layer1_relu")
    cin = 32
    for i, (s, c) in enumerate([(1, 64), (2, 128), (1, 128), (2, 256), (1, 256), (2, 512)] + [(1, 512)] * 5 +
                               [(2, 1024), (1, 1024)]):
        p = f"layer{i + 2}"
        h = tf_conv(b, h, f"{p}.depthwise_conv", cin, 3, s, g=cin, bias=False)
        h = b.act(b.bn(h, f"{p}.depthwise_conv_bn", eps=0.0001, gamma=ones), "relu", f"{p}_dw_relu")
        h = b.conv(h, f"{p}.pointwise_conv", c, 1)
        h = b.let(b.act(b.bn(h, f"{p}.pointwise_conv_bn", eps=0.0001, gamma=ones), "relu", p))
        cin = c
    h = b.gap(h, "global_average_pooling")
    h = flatten(b, h, "embeddings")
    h = b.linear(h, "logits", 521)
    y = b.act(h, "sigmoid", "predictions")
    return dict(family="audio_classifier", domains=["mobile", "aiot"], model="YAMNet", layer="full model",
                module="yamnet(): _conv(3x3, stride 2, 32) and 13 _separable_conv layers (MobileNetV1 body, ReLU, batch "
                       "norm eps 1e-4 with center and no scale), global average pooling, Dense(521), sigmoid",
                source="tensorflow/models research/audioset/yamnet yamnet.py",
                notes=["The YAMNet sound-event classifier (AudioSet, 521 classes) on one 0.96 s patch of 96 log-mel",
                       "frames x 64 bands (values drawn from [-4, 1], the log-mel range), batch 1, inference form:",
                       "TensorFlow SAME padding (bottom/right pads at stride 2), batch norm without scale (gamma is",
                       "ones). The output is the 521 class scores."]), [y], ["scores"]


def blaze_block(b, x, path, cin, cout, s):
    xv = b.let(x)
    if s == 2:
        h = b.conv(xv, f"{path}.convs.0", cin, 3, 2, g=cin, bias=True, pad4=(0, 0, 2, 2))
        sc = maxpool(b, xv, 2, 2, 0, f"{path}_max_pool")
    else:
        h = b.conv(xv, f"{path}.convs.0", cin, 3, 1, g=cin, bias=True)
        sc = xv
    h = b.conv(h, f"{path}.convs.1", cout, 1, bias=True)
    if cout > cin:
        sc = pad_op(b, sc, [0, 0, 0, 0, 0, cout - cin, 0, 0], f"{path}_channel_pad",
                    f'F.pad({{}}, (0, 0, 0, 0, 0, {cout - cin}), "constant", 0)')
    return b.let(b.act(b.add(h, sc, f"{path}_add", "{a} + {b}"), "relu", path))


@model
def blazeface_128(b):
    x = b.input("x", [1, 3, 128, 128])
    h = b.conv(x, "backbone1.0", 24, 5, 2, bias=True, pad4=(1, 1, 2, 2))
    h = b.act(h, "relu", "backbone1_1")
    cin = 24
    for i, (c, s) in enumerate([(24, 1), (28, 1), (32, 2), (36, 1), (42, 1), (48, 2), (56, 1), (64, 1), (72, 1),
                                (80, 1), (88, 1)]):
        h = blaze_block(b, h, f"backbone1.{i + 2}", cin, c, s)
        cin = c
    x8 = h
    for i, (c, s) in enumerate([(96, 2), (96, 1), (96, 1), (96, 1), (96, 1)]):
        h = blaze_block(b, h, f"backbone2.{i}", cin, c, s)
        cin = c
    x16 = h
    outs = {}
    for nm, src, c, per in [("classifier_8", x8, 2, 1), ("classifier_16", x16, 6, 1), ("regressor_8", x8, 32, 16),
                            ("regressor_16", x16, 96, 16)]:
        t = b.conv(src, nm, c, 1, bias=True)
        hw = src.shape[2]
        t = b.transpose(t, [0, 2, 3, 1], f"{nm}_nhwc")
        outs[nm] = b.reshape(t, [1, hw * hw * c // per, per], f"{nm}_flat", py=f"{{}}.reshape(1, -1, {per})")
    c = b.concat([outs["classifier_8"], outs["classifier_16"]], 1, "c", "torch.cat(({}, {}), dim=1)")
    r = b.concat([outs["regressor_8"], outs["regressor_16"]], 1, "r", "torch.cat(({}, {}), dim=1)")
    return dict(family="detector", domains=["mobile", "robotics", "aiot"], model="BlazeFace (front camera)", layer="full model",
                module="BlazeFace(back_model=False): F.pad + 5x5 stride-2 conv, backbone1 (11 BlazeBlocks), backbone2 "
                       "(5 BlazeBlocks), classifier_8/16 and regressor_8/16 permuted and concatenated",
                source="hollance/BlazeFace-PyTorch blazeface.py",
                notes=["MediaPipe's BlazeFace face detector (front-camera model) on its 128x128 input in [-1, 1],",
                       "batch 1: BlazeBlocks with depthwise 3x3 and pointwise convolutions, TFLite-style padding at",
                       "stride 2 (pad right and bottom by 2, max-pooled shortcut), channel padding of the shortcut,",
                       "ReLU after the residual add. Outputs: the 896 anchors' 16 box and keypoint regressions and",
                       "their scores (before the sigmoid and box decoding)."]), [r, c], ["r", "c"]


# ---------------------------------------------------------------------------------------------
# Transformers
# ---------------------------------------------------------------------------------------------

def alias(v, py):
    """The same graph value under a Python variable the caller writes itself."""
    return V(v.g, v.shape, py, v.m2, v.dtype)


def gnode(b, op, name, shape, m2=1.0, dtype="f32", py=None):
    """A graph node whose Python the caller writes itself (`py` names its variable)."""
    n = b.node(op, name, shape, dtype)
    return V("%" + n, shape, py or n, m2, dtype)


def causal_mask_nodes(b, s):
    row = b.iota([s, s], 0, "mask_row")
    col = b.iota([s, s], 1, "mask_col")
    future = gnode(b, f"greater({col.g}, {row.g})", "mask_future", [s, s], dtype="i32")
    ninf = b.full("-inf", "mask_value")
    return future, ninf


def mha_core(b, q, k, v, p, nh, hd, s, scale, mask=None, nkv=None):
    """softmax(q k^T * scale [+ causal mask]) v for q [1, nh, S, hd], k/v [1, nkv, S, hd];
    returns [1, S, nh*hd]. Graph only."""
    nkv = nkv or nh
    if nkv != nh:
        grp = nh // nkv
        reps = []
        for t, nm in ((k, "key"), (v, "value")):
            t5 = gnode(b, f"reshape({t.g}, shape=[1,{nkv},1,{s},{hd}])", f"{p}_{nm}_5d", [1, nkv, 1, s, hd])
            te = gnode(b, f"expand({t5.g}, shape=[1,{nkv},{grp},{s},{hd}])", f"{p}_{nm}_expand",
                       [1, nkv, grp, s, hd])
            reps.append(gnode(b, f"reshape({te.g}, shape=[1,{nh},{s},{hd}])", f"{p}_{nm}_repeat", [1, nh, s, hd]))
        k, v = reps
    sc = gnode(b, f"matmul({q.g}, {k.g}, transpose_a=false, transpose_b=true)", f"{p}_scores", [1, nh, s, s])
    f = b.full(repr(scale), f"{p}_scaling")
    sc = gnode(b, f"mul({sc.g}, {f.g})", f"{p}_scores_scaled", [1, nh, s, s])
    if mask is not None:
        sc = gnode(b, f"where({mask[0].g}, {mask[1].g}, {sc.g})", f"{p}_scores_masked", [1, nh, s, s])
    pr = gnode(b, f"softmax({sc.g}, axis=-1)", f"{p}_probs", [1, nh, s, s])
    o = gnode(b, f"matmul({pr.g}, {v.g}, transpose_a=false, transpose_b=false)", f"{p}_context", [1, nh, s, hd])
    o = gnode(b, f"transpose({o.g}, perm=[0,2,1,3])", f"{p}_context_t", [1, s, nh, hd])
    return gnode(b, f"reshape({o.g}, shape=[1,{s},{nh * hd}])", f"{p}_context_merge", [1, s, nh * hd])


def heads(b, x, p, nh, hd, s):
    t = gnode(b, f"reshape({x.g}, shape=[1,{s},{nh},{hd}])", f"{p}_view", [1, s, nh, hd])
    return gnode(b, f"transpose({t.g}, perm=[0,2,1,3])", f"{p}_heads", [1, nh, s, hd])


def rope_nodes(b, s, hd, theta):
    pos = b.iota([s, 1], 0, "rope_positions", "f32")
    j = b.iota([1, hd // 2], 1, "rope_index", "f32")
    two = b.full(repr(2.0 / hd), "rope_two_over_dim")
    e = gnode(b, f"mul({j.g}, {two.g})", "rope_exponent", [1, hd // 2])
    base = b.full(repr(float(theta)), "rope_theta")
    pw = gnode(b, f"pow({base.g}, {e.g})", "rope_base_pow", [1, hd // 2])
    one = b.full("1.0", "rope_one")
    inv = gnode(b, f"div({one.g}, {pw.g})", "inv_freq", [1, hd // 2])
    fr = gnode(b, f"mul({pos.g}, {inv.g})", "rope_freqs", [s, hd // 2])
    emb = gnode(b, f"concat({fr.g}, {fr.g}, axis=1)", "rope_emb", [s, hd])
    cos = gnode(b, f"cos({emb.g})", "cos", [s, hd])
    sin = gnode(b, f"sin({emb.g})", "sin", [s, hd])
    return cos, sin


ROPE_PY = '''
def rotary_tables(seq_len, head_dim, theta, dtype):
    """The model's rotary embedding (default rope type) for positions 0 .. seq_len - 1."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=dtype) / head_dim))
    freqs = torch.arange(seq_len, dtype=dtype)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x):
    """Rotates half the hidden dims of the input."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def repeat_kv(hidden_states, n_rep):
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)
'''


def apply_rope(b, x, cos, sin, p, nh, s, hd):
    x1 = gnode(b, f"slice({x.g}, axes=[3], starts=[0], ends=[{hd // 2}], steps=[1])", f"{p}_x1", [1, nh, s, hd // 2])
    x2 = gnode(b, f"slice({x.g}, axes=[3], starts=[{hd // 2}], ends=[{hd}], steps=[1])", f"{p}_x2",
               [1, nh, s, hd // 2])
    n2 = gnode(b, f"neg({x2.g})", f"{p}_neg_x2", [1, nh, s, hd // 2])
    rot = gnode(b, f"concat({n2.g}, {x1.g}, axis=3)", f"{p}_rot", [1, nh, s, hd])
    a = gnode(b, f"mul({x.g}, {cos.g})", f"{p}_cos", [1, nh, s, hd])
    c = gnode(b, f"mul({rot.g}, {sin.g})", f"{p}_sin", [1, nh, s, hd])
    return gnode(b, f"add({a.g}, {c.g})", f"{p}_embed", [1, nh, s, hd])


def llama_layer(b, h, p, cfg, cos, sin, mask):
    """One Llama-architecture decoder layer (Llama, Qwen2, Mistral, Phi-3 variants)."""
    H, nh, nkv, hd, inter, eps = cfg["hidden"], cfg["heads"], cfg["kv_heads"], cfg["head_dim"], cfg["inter"], cfg["eps"]
    s = h.shape[1]
    pa = f"{p}.self_attn"
    P = p.replace(".", "_")
    x = b.rms_norm(h, f"{p}.input_layernorm", eps)
    xn = alias(x, "hidden_states")
    b.stmt(f"residual = {h.py}")
    b.stmt(f"hidden_states = {b.use(x)}")
    if cfg.get("fused"):
        op = nh * hd + 2 * nkv * hd
        qkv = b.linear(xn, f"{pa}.qkv_proj", op, bias=False)
        b.stmt(f"qkv = {b.use(qkv)}")
        q = gnode(b, f"slice({qkv.g}, axes=[2], starts=[0], ends=[{nh * hd}], steps=[1])", f"{P}_query", [1, s, nh * hd])
        k = gnode(b, f"slice({qkv.g}, axes=[2], starts=[{nh * hd}], ends=[{nh * hd + nkv * hd}], steps=[1])",
                  f"{P}_key", [1, s, nkv * hd])
        v = gnode(b, f"slice({qkv.g}, axes=[2], starts=[{nh * hd + nkv * hd}], ends=[{op}], steps=[1])",
                  f"{P}_value", [1, s, nkv * hd])
        b.stmt(f"query_states = qkv[..., :{nh * hd}].view(1, {s}, -1, {hd}).transpose(1, 2)")
        b.stmt(f"key_states = qkv[..., {nh * hd}:{nh * hd + nkv * hd}].view(1, {s}, -1, {hd}).transpose(1, 2)")
        b.stmt(f"value_states = qkv[..., {nh * hd + nkv * hd}:].view(1, {s}, -1, {hd}).transpose(1, 2)")
    else:
        bias = cfg.get("qkv_bias", False)
        q = b.linear(xn, f"{pa}.q_proj", nh * hd, bias=bias)
        k = b.linear(xn, f"{pa}.k_proj", nkv * hd, bias=bias)
        v = b.linear(xn, f"{pa}.v_proj", nkv * hd, bias=bias)
        for t, nm in ((q, "query"), (k, "key"), (v, "value")):
            b.stmt(f"{nm}_states = {b.use(t)}.view(1, {s}, -1, {hd}).transpose(1, 2)")
    qh, kh, vh = heads(b, q, f"{P}_q", nh, hd, s), heads(b, k, f"{P}_k", nkv, hd, s), heads(b, v, f"{P}_v", nkv, hd, s)
    qe = apply_rope(b, qh, cos, sin, f"{P}_q", nh, s, hd)
    ke = apply_rope(b, kh, cos, sin, f"{P}_k", nkv, s, hd)
    b.stmt("query_states = (query_states * cos) + (rotate_half(query_states) * sin)")
    b.stmt("key_states = (key_states * cos) + (rotate_half(key_states) * sin)")
    ctx = mha_core(b, qe, ke, vh, f"{P}_attn", nh, hd, s, hd ** -0.5, mask, nkv)
    b.stmt(f"key_states = repeat_kv(key_states, {nh // nkv})")
    b.stmt(f"value_states = repeat_kv(value_states, {nh // nkv})")
    b.stmt(f"attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) * {hd ** -0.5!r}")
    b.stmt("attn_weights = attn_weights + causal_mask")
    b.stmt("attn_weights = F.softmax(attn_weights, dim=-1)")
    b.stmt(f"attn_output = torch.matmul(attn_weights, value_states).transpose(1, 2).reshape(1, {s}, -1)")
    ctx = alias(ctx, "attn_output")
    ctx.m2 = 0.1
    o = b.linear(ctx, f"{pa}.o_proj", H, bias=False)
    h1 = gnode(b, f"add({h.g}, {o.g})", f"{P}_attn_residual", [1, s, H], h.m2 + o.m2, py="hidden_states")
    b.stmt(f"hidden_states = residual + {b.use(o)}")
    b.stmt("residual = hidden_states")
    x = b.rms_norm(h1, f"{p}.post_attention_layernorm", eps)
    b.stmt(f"hidden_states = {b.use(x)}")
    xn = alias(x, "hidden_states")
    pm = f"{p}.mlp"
    if cfg.get("fused"):
        gu = b.linear(xn, f"{pm}.gate_up_proj", 2 * inter, bias=False)
        b.stmt(f"up_states = {b.use(gu)}")
        b.stmt("gate, up_states = up_states.chunk(2, dim=-1)")
        g = gnode(b, f"slice({gu.g}, axes=[2], starts=[0], ends=[{inter}], steps=[1])", f"{P}_gate", [1, s, inter],
                  gu.m2)
        u = gnode(b, f"slice({gu.g}, axes=[2], starts=[{inter}], ends=[{2 * inter}], steps=[1])", f"{P}_up",
                  [1, s, inter], gu.m2)
        ga = gnode(b, f"silu({g.g})", f"{P}_act", [1, s, inter], gauss_m2(ACT["silu"][0], gu.m2))
        m = gnode(b, f"mul({u.g}, {ga.g})", f"{P}_gated", [1, s, inter], ga.m2 * gu.m2, py="up_states")
        b.stmt("up_states = up_states * F.silu(gate)")
    else:
        g = b.linear(xn, f"{pm}.gate_proj", inter, bias=False)
        u = b.linear(xn, f"{pm}.up_proj", inter, bias=False)
        ga = gnode(b, f"silu({g.g})", f"{P}_act", [1, s, inter], gauss_m2(ACT["silu"][0], g.m2))
        m = gnode(b, f"mul({ga.g}, {u.g})", f"{P}_gated", [1, s, inter], ga.m2 * u.m2, py="gated")
        b.stmt(f"gated = F.silu({b.use(g)}) * {b.use(u)}")
    d = b.linear(m, f"{pm}.down_proj", H, bias=False)
    out = gnode(b, f"add({h1.g}, {d.g})", P, [1, s, H], h1.m2 + d.m2, py="hidden_states")
    b.stmt(f"hidden_states = residual + {b.use(d)}")
    return out


def llama_model(b, cfg, layers, s, prefix="model.layers"):
    b.helpers.append(ROPE_PY)
    h = b.input("hidden_states", [1, s, cfg["hidden"]], ("normal", (0.0, 1.0)))
    cos, sin = rope_nodes(b, s, cfg["head_dim"], cfg["theta"])
    mask = causal_mask_nodes(b, s)
    b.stmt(f"cos, sin = rotary_tables({s}, {cfg['head_dim']}, {float(cfg['theta'])!r}, hidden_states.dtype)")
    b.stmt(f"causal_mask = torch.full(({s}, {s}), torch.finfo(hidden_states.dtype).min, "
           "dtype=hidden_states.dtype).triu(1)")
    for i in range(layers):
        b.stmt(f"# {prefix}.{i}")
        h = llama_layer(b, h, f"{prefix}.{i}", cfg, cos, sin, mask)
    return h


def llm_meta(model, source, cfg, layers, s, extra, domains=("mobile", "robotics")):
    return dict(family="transformer_block", domains=list(domains), model=model,
                layer=f"model.layers.0-{layers - 1}" if layers > 1 else "model.layers.0",
                module=f"{layers} decoder layer{'s' if layers > 1 else ''} (RMSNorm, {cfg['heads']} query heads and "
                       f"{cfg['kv_heads']} key/value heads of {cfg['head_dim']}, rotary embedding, causal softmax "
                       f"attention, SiLU-gated MLP of {cfg['inter']}) with the model's rotary tables and causal mask",
                source=source,
                notes=[f"A prefill of {s} tokens through {'the first ' + str(layers) if layers > 1 else 'one'} decoder "
                       f"layer{'s' if layers > 1 else ''}, batch 1, eager attention: the rotary cos/sin tables are",
                       f"computed in the graph from positions (iota), inverse frequencies (theta {cfg['theta']:g}",
                       "to the power -2i/d) and cos/sin, and the causal mask from two iotas, greater and where.",
                       "The input is the hidden states after the token embedding (normal(0, 1))."] + extra)


@model
def llama_smollm2_135m_2layers_s64(b):
    cfg = dict(hidden=576, heads=9, kv_heads=3, head_dim=64, inter=1536, eps=1e-5, theta=100000.0)
    h = llama_model(b, cfg, 2, 64)
    return llm_meta("SmolLM2-135M", "transformers LlamaDecoderLayer (HuggingFaceTB/SmolLM2-135M)", cfg, 2, 64,
                    ["RMSNorm eps 1e-5; the real model has 30 such layers."]), [h], ["hidden_out"]


@model
def qwen2_05b_layer_s32(b):
    cfg = dict(hidden=896, heads=14, kv_heads=2, head_dim=64, inter=4864, eps=1e-6, theta=1000000.0, qkv_bias=True)
    h = llama_model(b, cfg, 1, 32)
    return llm_meta("Qwen2-0.5B", "transformers Qwen2DecoderLayer (Qwen/Qwen2-0.5B)", cfg, 1, 32,
                    ["Qwen2 adds biases to the q/k/v projections; RMSNorm eps 1e-6; the real model has 24 layers."],
                    ("mobile", "robotics")), [h], ["hidden_out"]


@model
def mistral_layer_reduced_s32(b):
    cfg = dict(hidden=1024, heads=8, kv_heads=2, head_dim=128, inter=3584, eps=1e-5, theta=1000000.0)
    h = llama_model(b, cfg, 1, 32)
    return llm_meta("Mistral-7B (width-reduced)", "transformers MistralDecoderLayer (mistralai/Mistral-7B-v0.3 "
                    "architecture)", cfg, 1, 32,
                    ["The layer is Mistral's (grouped-query attention 4:1 with head_dim 128, SiLU-gated MLP,",
                     "RMSNorm eps 1e-5, rope theta 1e6) with the width reduced for an edge-sized layer and the",
                     "f64 reference: hidden 4096 -> 1024, 32/8 heads -> 8/2, intermediate 14336 -> 3584 (the same",
                     "ratios). The sliding window (4096) is longer than the sequence, so the mask is plain causal."]), \
        [h], ["hidden_out"]


@model
def phi3_layer_reduced_s32(b):
    cfg = dict(hidden=768, heads=8, kv_heads=8, head_dim=96, inter=2048, eps=1e-5, theta=10000.0, fused=True)
    h = llama_model(b, cfg, 1, 32)
    return llm_meta("Phi-3-mini (width-reduced)", "transformers Phi3DecoderLayer (microsoft/Phi-3-mini-4k-instruct "
                    "architecture)", cfg, 1, 32,
                    ["The layer is Phi-3's (fused qkv_proj sliced into q, k, v; fused gate_up_proj chunked into",
                     "gate and up; RMSNorm eps 1e-5; rope theta 1e4; head_dim 96) with the width reduced for an",
                     "edge-sized layer and the f64 reference: hidden 3072 -> 768, 32 heads -> 8, intermediate",
                     "8192 -> 2048."]), [h], ["hidden_out"]


def conv1d_linear(b, x, path, cin, cout, w_init=("normal", (0.0, 0.02))):
    """transformers' GPT-2 Conv1D: weight [in, out] (an own parameter), x @ W + b."""
    w = b.param(f"{path}.weight".replace(".", "_"), [cin, cout], w_init)
    bias = b.param(f"{path}.bias".replace(".", "_"), [cout], U(-0.02, 0.02))
    s = x.shape[:-1] + [cout]
    mm = gnode(b, f"matmul({x.g}, {w.g}, transpose_a=false, transpose_b=false)", f"{path}_mm".replace(".", "_"),
               s, cin * init_m2(w_init) * x.m2)
    return gnode(b, f"add({mm.g}, {bias.g})", path.replace(".", "_"), s, mm.m2 + 0.0001), w, bias


@model
def gpt2_block_s64(b):
    S, H, nh, hd = 64, 768, 12, 64
    h = b.input("hidden_states", [1, S, H], ("normal", (0.0, 1.0)))
    mask = causal_mask_nodes(b, S)
    b.stmt(f"causal_mask = torch.tril(torch.ones({S}, {S}, dtype=torch.bool))")
    b.stmt("residual = hidden_states")
    x = b.layer_norm(h, "ln_1")
    b.stmt(f"hidden_states = {b.use(x)}")
    x = alias(x, "hidden_states")
    qkv, w, bb = conv1d_linear(b, x, "attn.c_attn", H, 3 * H)
    b.stmt(f"qkv = torch.addmm({bb.py}, hidden_states.view(-1, {H}), {w.py}).view(1, {S}, {3 * H})")
    b.stmt(f"query, key, value = qkv.split({H}, dim=2)")
    parts = []
    for i, nm in enumerate(["query", "key", "value"]):
        t = gnode(b, f"slice({qkv.g}, axes=[2], starts=[{i * H}], ends=[{(i + 1) * H}], steps=[1])", f"attn_{nm}",
                  [1, S, H])
        parts.append(heads(b, t, f"attn_{nm}", nh, hd, S))
        b.stmt(f"{nm} = {nm}.view(1, {S}, {nh}, {hd}).permute(0, 2, 1, 3)")
    ctx = mha_core(b, parts[0], parts[1], parts[2], "attn", nh, hd, S, 1.0 / math.sqrt(hd), mask)
    b.stmt(f"attn_weights = torch.matmul(query, key.transpose(-1, -2)) / {float(hd) ** 0.5!r}")
    b.stmt("attn_weights = torch.where(causal_mask, attn_weights, torch.finfo(attn_weights.dtype).min)")
    b.stmt("attn_weights = F.softmax(attn_weights, dim=-1)")
    b.stmt(f"attn_output = torch.matmul(attn_weights, value).permute(0, 2, 1, 3).contiguous().view(1, {S}, {H})")
    ctx.m2 = 0.05
    o, w, bb = conv1d_linear(b, alias(ctx, "attn_output"), "attn.c_proj", H, H, ("normal", (0.0, 0.02 / math.sqrt(24))))
    b.stmt(f"attn_output = torch.addmm({bb.py}, attn_output.view(-1, {H}), {w.py}).view(1, {S}, {H})")
    h1 = gnode(b, f"add({o.g}, {h.g})", "attn_residual", [1, S, H], h.m2 + o.m2, py="hidden_states")
    b.stmt("hidden_states = attn_output + residual")
    b.stmt("residual = hidden_states")
    x = b.layer_norm(h1, "ln_2")
    b.stmt(f"hidden_states = {b.use(x)}")
    f1, w, bb = conv1d_linear(b, alias(x, "hidden_states"), "mlp.c_fc", H, 4 * H)
    b.stmt(f"hidden_states = torch.addmm({bb.py}, hidden_states.view(-1, {H}), {w.py}).view(1, {S}, {4 * H})")
    a = gnode(b, f"gelu({f1.g}, approximate=tanh)", "mlp_act", f1.shape, gauss_m2(ACT["gelu_tanh"][0], f1.m2))
    b.stmt('hidden_states = F.gelu(hidden_states, approximate="tanh")')
    f2, w, bb = conv1d_linear(b, a, "mlp.c_proj", 4 * H, H, ("normal", (0.0, 0.02 / math.sqrt(24))))
    b.stmt(f"hidden_states = torch.addmm({bb.py}, hidden_states.view(-1, {4 * H}), {w.py}).view(1, {S}, {H})")
    y = gnode(b, f"add({h1.g}, {f2.g})", "block_out", [1, S, H], py="hidden_states")
    b.stmt("hidden_states = residual + hidden_states")
    return dict(family="transformer_block", domains=["mobile"], model="GPT-2 (124M)", layer="transformer.h.0",
                module="transformers GPT2Block: ln_1, GPT2Attention (c_attn Conv1D(2304, 768), 12 heads, causal "
                       "mask from the tril buffer via torch.where, c_proj), residual, ln_2, GPT2MLP (c_fc, gelu_new, "
                       "c_proj), residual",
                source="transformers GPT2Block (openai-community/gpt2)",
                notes=["One GPT-2 block over a 64-token prompt, batch 1, eager attention, dropout as identity.",
                       "Conv1D keeps its weight as [in, out] (x @ W + b); weights are drawn normal(0, 0.02) as GPT-2",
                       "initialises them (c_proj scaled by 1/sqrt(2 n_layer)); LayerNorm eps 1e-5. The causal mask",
                       "is built from two iotas and greater, and applied with where."]), [y], ["hidden_out"]


@model
def tinybert_4l_312d_s64(b):
    S, H, nh, hd, I = 64, 312, 12, 26, 1200
    ids = b.input("input_ids", [1, S], ("randint", (0, 30522)), "i32")
    tt = b.input("token_type_ids", [1, S], ("randint", (0, 2)), "i32")
    we = b.param("embeddings_word_embeddings_weight", [30522, H], ("normal", (0.0, 0.02)))
    pe = b.param("embeddings_position_embeddings_weight", [512, H], ("normal", (0.0, 0.02)))
    te = b.param("embeddings_token_type_embeddings_weight", [2, H], ("normal", (0.0, 0.02)))
    e1 = gnode(b, f"gather({we.g}, {ids.g}, axis=0)", "inputs_embeds", [1, S, H])
    e2 = gnode(b, f"gather({te.g}, {tt.g}, axis=0)", "token_type_embeddings", [1, S, H])
    pid = b.iota([1, S], 1, "position_ids")
    e3 = gnode(b, f"gather({pe.g}, {pid.g}, axis=0)", "position_embeddings", [1, S, H])
    e = gnode(b, f"add({e1.g}, {e2.g})", "embeddings_sum", [1, S, H])
    e = gnode(b, f"add({e.g}, {e3.g})", "embeddings_pos", [1, S, H], 0.0012, py="embeddings")
    b.stmt(f"position_ids = torch.arange({S})[None, :]")
    b.stmt(f"embeddings = F.embedding(input_ids, {we.py}) + F.embedding(token_type_ids, {te.py})")
    b.stmt(f"embeddings = embeddings + F.embedding(position_ids, {pe.py})")
    h = b.layer_norm(e, "embeddings.LayerNorm", eps=1e-12)
    b.stmt(f"hidden_states = {b.use(h)}")
    h = alias(h, "hidden_states")
    for i in range(4):
        p = f"encoder.layer.{i}"
        P = p.replace(".", "_")
        b.stmt(f"# {p}")
        qkv = []
        for nm in ("query", "key", "value"):
            t = b.linear(h, f"{p}.attention.self.{nm}", H)
            b.stmt(f"{nm} = {b.use(t)}.view(1, {S}, {nh}, {hd}).transpose(1, 2)")
            qkv.append(heads(b, t, f"{P}_{nm}", nh, hd, S))
        ctx = mha_core(b, qkv[0], qkv[1], qkv[2], f"{P}_attention", nh, hd, S, 1.0 / math.sqrt(hd))
        b.stmt(f"scores = torch.matmul(query, key.transpose(-1, -2)) * {1.0 / math.sqrt(hd)!r}")
        b.stmt(f"context = torch.matmul(F.softmax(scores, dim=-1), value).transpose(1, 2).reshape(1, {S}, {H})")
        ctx.m2 = 0.1
        o = b.linear(alias(ctx, "context"), f"{p}.attention.output.dense", H)
        b.stmt(f"attention_output = {b.use(o)} + hidden_states")
        r = gnode(b, f"add({o.g}, {h.g})", f"{P}_attention_residual", [1, S, H], o.m2 + h.m2, py="attention_output")
        a = b.layer_norm(r, f"{p}.attention.output.LayerNorm", eps=1e-12)
        b.stmt(f"attention_output = {b.use(a)}")
        a = alias(a, "attention_output")
        it = b.linear(a, f"{p}.intermediate.dense", I)
        it = b.act(it, "gelu", f"{P}_intermediate_act")
        o2 = b.linear(it, f"{p}.output.dense", H)
        b.stmt(f"hidden_states = {b.use(o2)} + attention_output")
        r2 = gnode(b, f"add({o2.g}, {a.g})", f"{P}_output_residual", [1, S, H], o2.m2 + 1.2, py="hidden_states")
        h = b.layer_norm(r2, f"{p}.output.LayerNorm", eps=1e-12)
        b.stmt(f"hidden_states = {b.use(h)}")
        h = alias(h, "hidden_states")
    first = gnode(b, f"slice({h.g}, axes=[1], starts=[0], ends=[1], steps=[1])", "first_token", [1, 1, H])
    first = gnode(b, f"reshape({first.g}, shape=[1,{H}])", "first_token_tensor", [1, H], 1.2, py="hidden_states[:, 0]")
    pd = b.linear(first, "pooler.dense", H)
    pooled = b.act(pd, "tanh", "pooler_output")
    return dict(family="transformer_encoder", domains=["mobile", "aiot"], model="TinyBERT-4L-312D", layer="full model",
                module="transformers BertModel (4 layers, hidden 312, 12 heads of 26, intermediate 1200, GELU, "
                       "LayerNorm eps 1e-12): embeddings (word, position, token type), encoder, pooler",
                source="transformers BertModel (huawei-noah/TinyBERT_General_4L_312D)",
                notes=["The whole TinyBERT (general distillation, 4 layers, 312 wide) on a 64-token sentence pair,",
                       "batch 1, eager attention, no padding (an all-ones attention mask adds nothing), dropout as",
                       "identity: token, position (iota) and token-type embeddings by gather, four post-norm encoder",
                       "layers, and the tanh pooler on the first token. Embedding tables are drawn normal(0, 0.02)",
                       "as BERT initialises them. Outputs: the last hidden states and the pooled output."]), \
        [alias(h, "hidden_states"), pooled], ["last_hidden_state", "pooler_output"]


def conv1d_nodes(b, x, path, cout, k, s, p, bias, w_init=None):
    """nn.Conv1d as an own parameter [cout, cin, k] and a 1xK conv2d on x viewed [1, cin, 1, L]."""
    cin, L = x.shape[1], x.shape[2]
    w_init = w_init or ("kaiming", ())
    w = b.param(f"{path}.weight".replace(".", "_"), [cout, cin, k], w_init)
    bb = b.param(f"{path}.bias".replace(".", "_"), [cout], U(-1 / math.sqrt(cin * k), 1 / math.sqrt(cin * k))) \
        if bias else None
    P = path.replace(".", "_")
    x4 = gnode(b, f"reshape({x.g}, shape=[1,{cin},1,{L}])", f"{P}_in_2d", [1, cin, 1, L])
    w4 = gnode(b, f"reshape({w.g}, shape=[{cout},{cin},1,{k}])", f"{P}_weight_2d", [cout, cin, 1, k])
    out_l = (L + 2 * p - k) // s + 1
    args = f"{x4.g}, {w4.g}" + (f", {bb.g}" if bias else "")
    c = gnode(b, f"conv2d({args}, stride=[1,{s}], pad=[0,{p},0,{p}], dilation=[1,1], groups=1)", f"{P}_2d",
              [1, cout, 1, out_l])
    wm2 = 1 / (3 * cin * k) if w_init[0] == "kaiming" else init_m2(w_init)
    m2 = cin * k * wm2 * x.m2
    y = gnode(b, f"reshape({c.g}, shape=[1,{cout},{out_l}])", P, [1, cout, out_l], m2)
    return y, w, bb


def sinusoid_nodes(b, length, channels):
    inc = math.log(10000) / (channels // 2 - 1)
    j = b.iota([1, channels // 2], 1, "timescale_index", "f32")
    f = b.full(repr(-inc), "neg_log_timescale_increment")
    e = gnode(b, f"mul({j.g}, {f.g})", "log_inv_timescales", [1, channels // 2])
    inv = gnode(b, f"exp({e.g})", "inv_timescales", [1, channels // 2])
    t = b.iota([length, 1], 0, "positions", "f32")
    st = gnode(b, f"mul({t.g}, {inv.g})", "scaled_time", [length, channels // 2])
    sn = gnode(b, f"sin({st.g})", "scaled_time_sin", [length, channels // 2])
    cs = gnode(b, f"cos({st.g})", "scaled_time_cos", [length, channels // 2])
    return gnode(b, f"concat({sn.g}, {cs.g}, axis=1)", "positional_embedding", [length, channels], 0.5)


@model
def whisper_tiny_encoder_1s(b):
    T, H, nh, hd = 100, 384, 6, 64
    x = b.input("mel", [1, 80, T])
    h, w1, b1 = conv1d_nodes(b, x, "conv1", H, 3, 1, 1, True)
    h = gnode(b, f"gelu({h.g}, approximate=none)", "conv1_gelu", h.shape, gauss_m2(ACT["gelu"][0], h.m2))
    h, w2, b2 = conv1d_nodes(b, h, "conv2", H, 3, 2, 1, True, He(H * 3))
    h = gnode(b, f"gelu({h.g}, approximate=none)", "conv2_gelu", h.shape, gauss_m2(ACT["gelu"][0], h.m2))
    S = T // 2
    h = gnode(b, f"transpose({h.g}, perm=[0,2,1])", "conv_out_t", [1, S, H], h.m2)
    pe = sinusoid_nodes(b, S, H)
    h = gnode(b, f"add({h.g}, {pe.g})", "embed_positions", [1, S, H], h.m2 + 0.5, py="x")
    b.helpers.append('''
def sinusoids(length, channels, max_timescale=10000, dtype=torch.float32):
    """Returns sinusoids for positional embedding (whisper.model.sinusoids, in the model's dtype)."""
    assert channels % 2 == 0
    log_timescale_increment = math.log(max_timescale) / (channels // 2 - 1)
    inv_timescales = torch.exp(-log_timescale_increment * torch.arange(channels // 2, dtype=dtype))
    scaled_time = torch.arange(length, dtype=dtype)[:, None] * inv_timescales[None, :]
    return torch.cat([torch.sin(scaled_time), torch.cos(scaled_time)], dim=1)
''')
    b.stmt(f"x = F.gelu(F.conv1d(mel, {w1.py}, {b1.py}, padding=1))")
    b.stmt(f"x = F.gelu(F.conv1d(x, {w2.py}, {b2.py}, stride=2, padding=1))")
    b.stmt("x = x.permute(0, 2, 1)")
    b.stmt(f"x = x + sinusoids({S}, {H}, dtype=x.dtype)")
    for i in range(4):
        p = f"blocks.{i}"
        P = p.replace(".", "_")
        b.stmt(f"# {p}")
        a = b.layer_norm(h, f"{p}.attn_ln")
        b.stmt(f"xa = {b.use(a)}")
        a = alias(a, "xa")
        q = b.linear(a, f"{p}.attn.query", H)
        k = b.linear(a, f"{p}.attn.key", H, bias=False)
        v = b.linear(a, f"{p}.attn.value", H)
        scale = hd ** -0.25
        b.stmt(f"q = {b.use(q)}.view(1, {S}, {nh}, -1).permute(0, 2, 1, 3) * {scale!r}")
        b.stmt(f"k = {b.use(k)}.view(1, {S}, {nh}, -1).permute(0, 2, 3, 1) * {scale!r}")
        b.stmt(f"v = {b.use(v)}.view(1, {S}, {nh}, -1).permute(0, 2, 1, 3)")
        b.stmt(f"w = F.softmax(q @ k, dim=-1)")
        b.stmt(f"wv = (w @ v).permute(0, 2, 1, 3).flatten(start_dim=2)")
        ctx = mha_core(b, heads(b, q, f"{P}_q", nh, hd, S), heads(b, k, f"{P}_k", nh, hd, S),
                       heads(b, v, f"{P}_v", nh, hd, S), f"{P}_attn", nh, hd, S, hd ** -0.5)
        ctx.m2 = 0.1
        o = b.linear(alias(ctx, "wv"), f"{p}.attn.out", H)
        h = gnode(b, f"add({h.g}, {o.g})", f"{P}_attn_residual", [1, S, H], h.m2 + o.m2, py="x")
        b.stmt(f"x = x + {b.use(o)}")
        m = b.layer_norm(h, f"{p}.mlp_ln")
        m = b.linear(m, f"{p}.mlp.0", 4 * H)
        m = b.act(m, "gelu", f"{P}_mlp_1")
        m = b.linear(m, f"{p}.mlp.2", H)
        h = gnode(b, f"add({h.g}, {m.g})", P, [1, S, H], h.m2 + m.m2, py="x")
        b.stmt(f"x = x + {b.use(m)}")
    y = b.layer_norm(h, "ln_post")
    return dict(family="speech_encoder", domains=["mobile", "robotics", "aiot"], model="Whisper tiny", layer="encoder",
                module="whisper AudioEncoder(n_mels=80, n_ctx reduced, n_state=384, n_head=6, n_layer=4): conv1, "
                       "GELU, conv2 (stride 2), GELU, sinusoidal positional embedding, 4 ResidualAttentionBlocks, "
                       "ln_post",
                source="openai/whisper whisper/model.py",
                notes=["The whole Whisper-tiny audio encoder on 1 s of audio (100 log-mel frames of 80 bands, values",
                       "in [-1, 1] as Whisper's (log-mel + 4) / 4 scaling gives), batch 1. Whisper pads audio to",
                       "30 s (3000 frames, 1500 positions); here the audio context is 50 positions, as whisper.cpp's",
                       "audio_ctx option shortens it for short commands, so the f64 reference stays fast. The",
                       "sinusoidal positional embedding is computed in the graph (iota, exp, sin, cos); the",
                       "convolutions are Conv1d written as 1xK conv2d on a [1, C, 1, L] view; attention scales q and",
                       "k by head_dim^-0.25 each (one scale of head_dim^-0.5 in the graph)."]), [y], ["x"]


@model
def wav2vec2_feature_encoder_2000(b):
    L = 2000
    x = b.input("input_values", [1, L], ("normal", (0.0, 1.0)))
    h = gnode(b, f"reshape({x.g}, shape=[1,1,{L}])", "input_values_3d", [1, 1, L], 1.0)
    b.stmt("hidden_states = input_values[:, None]")
    specs = [(10, 5)] + [(3, 2)] * 4 + [(2, 2)] * 2
    cin = 1
    for i, (k, s) in enumerate(specs):
        p = f"feature_extractor.conv_layers.{i}"
        h, w, _ = conv1d_nodes(b, h, f"{p}.conv", 512, k, s, 0, False, He(cin * k))
        line = f"hidden_states = F.conv1d(hidden_states, {w.py}, stride={s})"
        if i == 0:
            gn = b.module(f"{p}.layer_norm", "nn.GroupNorm(512, 512)", [("weight", [512], U(0.5, 1.5)),
                                                                          ("bias", [512], U(-0.5, 0.5))])
            h = gnode(b, f"group_norm({h.g}, {gn}_weight, {gn}_bias, groups=512, eps=1e-5)", gn, h.shape, 1.17)
            line = f"hidden_states = self.{gn}(F.conv1d(hidden_states, {w.py}, stride={s}))"
        h = gnode(b, f"gelu({h.g}, approximate=none)", f"{p}_activation".replace(".", "_"), h.shape,
                  gauss_m2(ACT["gelu"][0], h.m2))
        b.stmt(line)
        b.stmt("hidden_states = F.gelu(hidden_states)")
        cin = 512
    T = h.shape[2]
    h = gnode(b, f"transpose({h.g}, perm=[0,2,1])", "extract_features", [1, T, 512], h.m2)
    b.stmt("hidden_states = hidden_states.transpose(1, 2)")
    n = b.layer_norm(alias(h, "hidden_states"), "feature_projection.layer_norm")
    b.stmt(f"norm_hidden_states = {b.use(n)}")
    y = b.linear(alias(n, "norm_hidden_states"), "feature_projection.projection", 768)
    return dict(family="speech_encoder", domains=["mobile", "robotics"], model="wav2vec2-base",
                layer="feature_extractor, feature_projection",
                module="transformers Wav2Vec2FeatureEncoder (7 Conv1d of 512 channels, kernels 10, 3, 3, 3, 3, 2, 2, "
                       "strides 5, 2, 2, 2, 2, 2, 2, no bias; GroupNorm(512, 512) after the first; GELU) + "
                       "Wav2Vec2FeatureProjection (LayerNorm(512), Linear(512, 768))",
                source="transformers Wav2Vec2Model (facebook/wav2vec2-base)",
                notes=["The convolutional front end of wav2vec2-base and its feature projection on a 125 ms chunk",
                       "of 16 kHz audio (2000 samples, normalised to normal(0, 1) as the feature extractor does),",
                       "batch 1: 399, 199, 99, 49, 24, 12 and 6 frames after the seven convolutions, GroupNorm with",
                       "one group per channel over time, and 6 projected frames of 768. Conv1d is written as 1xK",
                       "conv2d on a [1, C, 1, L] view; weights are drawn as wav2vec2 initialises them",
                       "(kaiming, bound sqrt(6 / fan_in)). The output is the projected features (dropout as",
                       "identity)."]), [y], ["hidden_states"]


def vit_block(b, h, p, H, nh, S, eps=1e-6, mlp_act="gelu", mlp_ratio=4):
    hd = H // nh
    P = p.replace(".", "_")
    b.stmt(f"# {p}")
    a = b.layer_norm(h, f"{p}.norm1", eps=eps)
    qkv = b.linear(a, f"{p}.attn.qkv", 3 * H)
    b.stmt(f"qkv = {b.use(qkv)}.reshape(1, {S}, 3, {nh}, {hd}).permute(2, 0, 3, 1, 4)")
    b.stmt("q, k, v = qkv.unbind(0)")
    b.stmt(f"attn = (q * {hd ** -0.5!r}) @ k.transpose(-2, -1)")
    b.stmt(f"x = (attn.softmax(dim=-1) @ v).transpose(1, 2).reshape(1, {S}, {H})")
    t = gnode(b, f"reshape({qkv.g}, shape=[1,{S},3,{nh},{hd}])", f"{P}_qkv_5d", [1, S, 3, nh, hd])
    t = gnode(b, f"transpose({t.g}, perm=[2,0,3,1,4])", f"{P}_qkv_heads", [3, 1, nh, S, hd])
    qs = []
    for i, nm in enumerate("qkv"):
        u = gnode(b, f"slice({t.g}, axes=[0], starts=[{i}], ends=[{i + 1}], steps=[1])", f"{P}_{nm}_slice",
                  [1, 1, nh, S, hd])
        qs.append(gnode(b, f"reshape({u.g}, shape=[1,{nh},{S},{hd}])", f"{P}_{nm}", [1, nh, S, hd], qkv.m2))
    ctx = mha_core(b, qs[0], qs[1], qs[2], f"{P}_attn", nh, hd, S, hd ** -0.5)
    ctx.m2 = 0.1
    o = b.linear(alias(ctx, "x"), f"{p}.attn.proj", H)
    h = gnode(b, f"add({h.g}, {o.g})", f"{P}_attn_residual", h.shape, h.m2 + o.m2, py="x")
    b.stmt(f"x = shortcut + {b.use(o)}")
    b.stmt("shortcut = x")
    m = b.layer_norm(h, f"{p}.norm2", eps=eps)
    m = b.linear(m, f"{p}.mlp.fc1", mlp_ratio * H)
    m = b.act(m, mlp_act, f"{P}_mlp_act")
    m = b.linear(m, f"{p}.mlp.fc2", H)
    h = gnode(b, f"add({h.g}, {m.g})", P, h.shape, h.m2 + m.m2, py="x")
    b.stmt(f"x = shortcut + {b.use(m)}")
    return h


@model
def deit_tiny_112(b):
    H, S = 192, 50
    cls = b.param("cls_token", [1, 1, H], ("normal", (0.0, 0.02)))
    pos = b.param("pos_embed", [1, S, H], ("normal", (0.0, 0.02)))
    x = b.input("x", [1, 3, 112, 112])
    pe = b.conv(x, "patch_embed.proj", H, 16, 16, p=0, bias=True)
    pe = b.reshape(pe, [1, H, 49], "patch_flatten", py="{}.flatten(2)")
    pe = b.transpose(pe, [0, 2, 1], "patch_tokens", py_fn="{}.transpose(1, 2)")
    t = gnode(b, f"concat({cls.g}, {pe.g}, axis=1)", "tokens", [1, S, H], pe.m2)
    h = gnode(b, f"add({t.g}, {pos.g})", "pos_drop", [1, S, H], pe.m2 + 0.0004, py="x")
    b.stmt(f"x = torch.cat((self.cls_token.expand(1, -1, -1), {b.use(pe)}), dim=1)")
    b.stmt("x = x + self.pos_embed")
    for i in range(12):
        b.stmt("shortcut = x")
        h = vit_block(b, h, f"blocks.{i}", H, 3, S)
    n = b.layer_norm(h, "norm", eps=1e-6)
    b.stmt(f"x = {b.use(n)}")
    c = gnode(b, f"slice({n.g}, axes=[1], starts=[0], ends=[1], steps=[1])", "cls_out", [1, 1, H])
    c = gnode(b, f"reshape({c.g}, shape=[1,{H}])", "pre_logits", [1, H], 1.2, py="x[:, 0]")
    y = b.linear(c, "head", 1000)
    return dict(family="vision_transformer", domains=["mobile", "robotics"], model="DeiT-Tiny", layer="full model",
                module="timm VisionTransformer (deit_tiny_patch16_224, img_size=112): patch_embed (16x16 conv), "
                       "cls_token, pos_embed, 12 Blocks (LayerNorm eps 1e-6, Attention with 3 heads, Mlp 192 -> 768 "
                       "-> 192, GELU), norm, head on the class token",
                source="timm deit_tiny_patch16_224",
                notes=["The whole DeiT-Tiny, batch 1, inference form (dropout and drop path as identities). The input",
                       "is reduced from 224x224 to 112x112 (49 patches and the class token, 50 tokens instead of",
                       "197; timm builds it with img_size=112, the position embedding resized) so the f64",
                       "reference stays fast (0.57 instead of 2.5 GFLOP). Class token and position embedding are",
                       "drawn normal(0, 0.02). The output is the 1000 class logits."]), [y], ["logits"]


# ---------------------------------------------------------------------------------------------
# Detection, segmentation, depth, point clouds, generation
# ---------------------------------------------------------------------------------------------

def interp(b, x, size, mode, name, py, align_corners=False):
    return b.resize(x, size, mode, name, py, align_corners)


@model
def nanodet_m_320(b):
    x = b.input("x", [1, 3, 320, 320])
    h = b.cba(x, "backbone.conv1.0", "backbone.conv1.1", 24, 3, 2, act="leaky_relu", act_name="backbone.conv1.2")
    h = maxpool(b, h, 3, 2, 1, "backbone_maxpool")
    feats = shufflenet_stages(b, h, [24, 116, 232, 464], [4, 8, 4], prefix="backbone.", act="leaky_relu")
    lat = [b.let(b.conv(f, f"fpn.lateral_convs.{i}.conv", 96, 1, bias=True), f"lateral_{i}")
           for i, f in enumerate(feats)]
    for i in (2, 1):
        sz = lat[i - 1].shape[2:]
        up = interp(b, lat[i], sz, "bilinear", f"top_down_{i}", 'F.interpolate({}, scale_factor=2, mode="bilinear")')
        lat[i - 1] = b.let(b.add(lat[i - 1], up, f"lateral_{i - 1}_td"))
    for i in (0, 1):
        sz = lat[i + 1].shape[2:]
        dn = interp(b, lat[i], sz, "bilinear", f"bottom_up_{i}", 'F.interpolate({}, scale_factor=0.5, mode="bilinear")')
        lat[i + 1] = b.let(b.add(lat[i + 1], dn, f"inter_out_{i + 1}"))
    outs = []
    for i, f in enumerate(lat):
        h = f
        for j in range(2):
            p = f"head.cls_convs.{i}.{j}"
            h = b.cba(h, f"{p}.depthwise", f"{p}.dwnorm", 96, 3, g=96, act="leaky_relu", act_name=f"{p}.dw_act")
            h = b.cba(h, f"{p}.pointwise", f"{p}.pwnorm", 96, 1, act="leaky_relu", act_name=f"{p}.pw_act")
        o = b.conv(h, f"head.gfl_cls.{i}", 112, 1, bias=True)
        hw = o.shape[2] * o.shape[3]
        outs.append(b.reshape(o, [1, 112, hw], f"head_out_{i}", py="{}.flatten(start_dim=2)"))
    cat = b.concat(outs, 2, "head_cat", "torch.cat([{}, {}, {}], dim=2)")
    y = b.transpose(cat, [0, 2, 1], "head_out")
    return dict(family="detector", domains=["mobile", "robotics", "aiot"], model="NanoDet-m", layer="full model",
                module="NanoDet (nanodet-m.yml): ShuffleNetV2 1.0x backbone (LeakyReLU, stages 2-4), PAN (1x1 lateral "
                       "convs, bilinear top-down x2 and bottom-up x0.5 paths), NanoDetHead (2 depthwise-separable "
                       "convs per level, BN, LeakyReLU; gfl_cls 1x1 to 80 classes + 4 x 8 distribution bins)",
                source="RangiLyu/nanodet nanodet/model (backbone/shufflenetv2.py, fpn/pan.py, head/nanodet_head.py)",
                notes=["The whole NanoDet-m detector at its 320x320 input, batch 1, inference form, up to the raw",
                       "head output (the post-processing's sigmoid and distance-distribution decoding are not",
                       "included): strides 8, 16 and 32 give 40x40, 20x20 and 10x10 maps, 2100 anchor points of",
                       "112 values (80 class scores, 4 x 8 box distribution bins). LeakyReLU slope 0.1; the PAN",
                       "interpolates bilinearly (align_corners false)."]), [y], ["preds"]


def yolo_conv(b, x, path, cout, k=1, s=1):
    return b.cba(x, f"{path}.conv", f"{path}.bn", cout, k, s, act="silu", eps=0.001, momentum=0.03,
                 act_name=f"{path}.act")


def c3(b, x, path, cout, n, shortcut=True):
    c_ = cout // 2
    xv = b.let(x)
    m = yolo_conv(b, xv, f"{path}.cv1", c_)
    for j in range(n):
        mv = b.let(m)
        t = yolo_conv(b, mv, f"{path}.m.{j}.cv1", c_)
        t = yolo_conv(b, t, f"{path}.m.{j}.cv2", c_, 3)
        m = b.add(mv, t, f"{path}.m.{j}", "{a} + {b}") if shortcut else t
    c2 = yolo_conv(b, xv, f"{path}.cv2", c_)
    cat = b.concat([m, c2], 1, f"{path}_cat", "torch.cat(({}, {}), 1)")
    return b.let(yolo_conv(b, cat, f"{path}.cv3", cout), path.replace(".", "_"))


def sppf(b, x, path, cout):
    c_ = x.shape[1] // 2
    h = b.let(yolo_conv(b, x, f"{path}.cv1", c_))
    y1 = b.let(maxpool(b, h, 5, 1, 2, f"{path}_y1"))
    y2 = b.let(maxpool(b, y1, 5, 1, 2, f"{path}_y2"))
    y3 = maxpool(b, y2, 5, 1, 2, f"{path}_y3")
    cat = b.concat([h, y1, y2, y3], 1, f"{path}_cat", "torch.cat(({}, {}, {}, {}), 1)")
    return b.let(yolo_conv(b, cat, f"{path}.cv2", cout), path.replace(".", "_"))


def upsample2(b, x, name):
    return b.resize(x, [x.shape[2] * 2, x.shape[3] * 2], "nearest", name,
                    'F.interpolate({}, scale_factor=2.0, mode="nearest")')


@model
def yolov5n_256(b):
    x = b.input("x", [1, 3, 256, 256], ("uniform", (0.0, 1.0)))
    L = {}
    h = yolo_conv(b, x, "model.0", 16, 6, 2) if False else b.cba(
        x, "model.0.conv", "model.0.bn", 16, 6, 2, p=2, act="silu", eps=0.001, momentum=0.03, act_name="model.0.act")
    h = yolo_conv(b, h, "model.1", 32, 3, 2)
    h = c3(b, h, "model.2", 32, 1)
    h = yolo_conv(b, h, "model.3", 64, 3, 2)
    L[4] = h = c3(b, h, "model.4", 64, 2)
    h = yolo_conv(b, h, "model.5", 128, 3, 2)
    L[6] = h = c3(b, h, "model.6", 128, 3)
    h = yolo_conv(b, h, "model.7", 256, 3, 2)
    h = c3(b, h, "model.8", 256, 1)
    h = sppf(b, h, "model.9", 256)
    L[10] = h = b.let(yolo_conv(b, h, "model.10", 128), "model_10")
    h = b.concat([upsample2(b, h, "model_11"), L[6]], 1, "model_12", "torch.cat(({}, {}), 1)")
    h = c3(b, h, "model.13", 128, 1, False)
    L[14] = h = b.let(yolo_conv(b, h, "model.14", 64), "model_14")
    h = b.concat([upsample2(b, h, "model_15"), L[4]], 1, "model_16", "torch.cat(({}, {}), 1)")
    L[17] = h = c3(b, h, "model.17", 64, 1, False)
    h = b.concat([yolo_conv(b, h, "model.18", 64, 3, 2), L[14]], 1, "model_19", "torch.cat(({}, {}), 1)")
    L[20] = h = c3(b, h, "model.20", 128, 1, False)
    h = b.concat([yolo_conv(b, h, "model.21", 128, 3, 2), L[10]], 1, "model_22", "torch.cat(({}, {}), 1)")
    L[23] = c3(b, h, "model.23", 256, 1, False)
    outs = []
    for i, src in enumerate([L[17], L[20], L[23]]):
        o = b.conv(src, f"model.24.m.{i}", 255, 1, bias=True)
        ny, nx = o.shape[2], o.shape[3]
        o = b.reshape(o, [1, 3, 85, ny, nx], f"detect_view_{i}", py=f"{{}}.view(1, 3, 85, {ny}, {nx})")
        outs.append(b.transpose(o, [0, 1, 3, 4, 2], f"p{i + 3}", py_fn="{}.permute(0, 1, 3, 4, 2).contiguous()"))
    return dict(family="detector", domains=["robotics", "aiot"], model="YOLOv5n (v6.0+)", layer="full model",
                module="ultralytics YOLOv5n (yolov5n.yaml, depth 0.33, width 0.25): CSP backbone (Conv, C3, SPPF), "
                       "PANet neck (nearest upsampling, concatenation, C3), Detect convolutions (3 anchors x 85)",
                source="ultralytics/yolov5 models/yolo.py, models/common.py",
                notes=["The whole YOLOv5n at 256x256 (reduced from 640 for the f64 reference; channels are the",
                       "model's), RGB in [0, 1], batch 1, inference form: Conv = Conv2d + BatchNorm2d (eps 1e-3) +",
                       "SiLU. The outputs are Detect's three raw prediction maps (view(1, 3, 85, ny, nx) permuted",
                       "to [1, 3, ny, nx, 85]) at strides 8, 16, 32; the grid and anchor decoding is a separate",
                       "Level-2 task."]), outs, ["p3", "p4", "p5"]


def c2f(b, x, path, cout, n, shortcut):
    c = cout // 2
    y = yolo_conv(b, x, f"{path}.cv1", 2 * c)
    a, bb = chunk2(b, y, 1, [f"{path}_y0", f"{path}_y1"])
    ys = [a, bb]
    last = bb
    for j in range(n):
        t = yolo_conv(b, last, f"{path}.m.{j}.cv1", c, 3)
        t = yolo_conv(b, t, f"{path}.m.{j}.cv2", c, 3)
        last = b.let(b.add(last, t, f"{path}.m.{j}", "{a} + {b}") if shortcut else t, f"{path}_m_{j}".replace(".", "_"))
        ys.append(last)
    cat = b.concat(ys, 1, f"{path}_cat", "torch.cat((" + ", ".join(["{}"] * len(ys)) + "), 1)")
    return b.let(yolo_conv(b, cat, f"{path}.cv2", cout), path.replace(".", "_"))


@model
def yolov8n_224(b):
    x = b.input("x", [1, 3, 224, 224], ("uniform", (0.0, 1.0)))
    L = {}
    h = yolo_conv(b, x, "model.0", 16, 3, 2)
    h = yolo_conv(b, h, "model.1", 32, 3, 2)
    h = c2f(b, h, "model.2", 32, 1, True)
    h = yolo_conv(b, h, "model.3", 64, 3, 2)
    L[4] = h = c2f(b, h, "model.4", 64, 2, True)
    h = yolo_conv(b, h, "model.5", 128, 3, 2)
    L[6] = h = c2f(b, h, "model.6", 128, 2, True)
    h = yolo_conv(b, h, "model.7", 256, 3, 2)
    h = c2f(b, h, "model.8", 256, 1, True)
    L[9] = h = sppf(b, h, "model.9", 256)
    h = b.concat([upsample2(b, h, "model_10"), L[6]], 1, "model_11", "torch.cat(({}, {}), 1)")
    L[12] = h = c2f(b, h, "model.12", 128, 1, False)
    h = b.concat([upsample2(b, h, "model_13"), L[4]], 1, "model_14", "torch.cat(({}, {}), 1)")
    L[15] = h = c2f(b, h, "model.15", 64, 1, False)
    h = b.concat([yolo_conv(b, h, "model.16", 64, 3, 2), L[12]], 1, "model_17", "torch.cat(({}, {}), 1)")
    L[18] = h = c2f(b, h, "model.18", 128, 1, False)
    h = b.concat([yolo_conv(b, h, "model.19", 128, 3, 2), L[9]], 1, "model_20", "torch.cat(({}, {}), 1)")
    L[21] = c2f(b, h, "model.21", 256, 1, False)
    outs = []
    for i, src in enumerate([L[15], L[18], L[21]]):
        sv = b.let(src)
        bx = yolo_conv(b, sv, f"model.22.cv2.{i}.0", 64, 3)
        bx = yolo_conv(b, bx, f"model.22.cv2.{i}.1", 64, 3)
        bx = b.conv(bx, f"model.22.cv2.{i}.2", 64, 1, bias=True)
        cl = yolo_conv(b, sv, f"model.22.cv3.{i}.0", 80, 3)
        cl = yolo_conv(b, cl, f"model.22.cv3.{i}.1", 80, 3)
        cl = b.conv(cl, f"model.22.cv3.{i}.2", 80, 1, bias=True)
        o = b.concat([bx, cl], 1, f"detect_{i}", "torch.cat(({}, {}), 1)")
        hw = o.shape[2] * o.shape[3]
        outs.append(b.reshape(o, [1, 144, hw], f"detect_flat_{i}", py="{}.view(1, 144, -1)"))
    y = b.concat(outs, 2, "x_cat", "torch.cat(({}, {}, {}), 2)")
    return dict(family="detector", domains=["mobile", "robotics", "aiot"], model="YOLOv8n", layer="full model",
                module="ultralytics YOLOv8n (yolov8n.yaml, scale n): backbone (Conv, C2f, SPPF), PAN neck (nearest "
                       "upsampling, concatenation, C2f), Detect (cv2 box and cv3 class branches per level)",
                source="ultralytics/ultralytics ultralytics/nn/tasks.py, ultralytics/nn/modules",
                notes=["The whole YOLOv8n at 224x224 (reduced from 640 for the f64 reference; channels are the",
                       "model's), RGB in [0, 1], batch 1, inference form: Conv = Conv2d + BatchNorm2d (eps 1e-3) +",
                       "SiLU. The output is Detect's raw predictions of the 784 + 196 + 49 anchor points",
                       "concatenated as in its inference path (x_cat: 64 distribution bins for the box, 80 class",
                       "logits); the DFL softmax and box decoding are not included."]), [y], ["x_cat"]


def conv_t(b, x, path, cout, k, s, p=0, op=0, bias=False, w_init=None, b_init=None):
    """nn.ConvTranspose2d as an own parameter [cin, cout, k, k] and conv_transpose2d."""
    cin, hh, ww = x.shape[1], x.shape[2], x.shape[3]
    w_init = w_init or ("kaiming", ())
    w = b.param(f"{path}.weight".replace(".", "_"), [cin, cout, k, k], w_init)
    bb = b.param(f"{path}.bias".replace(".", "_"), [cout], b_init or U(-1 / math.sqrt(cout * k * k),
                                                                        1 / math.sqrt(cout * k * k))) if bias else None
    oh = (hh - 1) * s - 2 * p + (k - 1) + op + 1
    ow = (ww - 1) * s - 2 * p + (k - 1) + op + 1
    args = f"{x.g}, {w.g}" + (f", {bb.g}" if bias else "")
    n = b.node(f"conv_transpose2d({args}, stride=[{s},{s}], pad=[{p},{p},{p},{p}], output_padding=[{op},{op}], "
               f"dilation=[1,1], groups=1)", path, [1, cout, oh, ow])
    wm2 = 1 / (3 * cout * k * k) if w_init[0] == "kaiming" else init_m2(w_init)
    contrib = cin * hh * ww * k * k / (oh * ow)
    kw = f"stride={s}" + (f", padding={p}" if p else "") + (f", output_padding={op}" if op else "")
    py = f"F.conv_transpose2d({b.use(x)}, {w.py}" + (f", {bb.py}" if bias else "") + f", {kw})"
    return b.out(n, [1, cout, oh, ow], py, contrib * wm2 * x.m2)


@model
def pointpillars_bev_64(b):
    x = b.input("spatial_features", [1, 64, 64, 64], ("uniform", (0.0, 1.0)))
    ups = []
    h = x
    cin = 64
    for i, (n, c) in enumerate([(3, 64), (5, 128), (5, 256)]):
        p = f"backbone_2d.blocks.{i}"
        h = b.conv(h, f"{p}.1", c, 3, 2, pad4=(1, 1, 1, 1))
        h = b.act(b.bn(h, f"{p}.2", eps=0.001, momentum=0.01), "relu", f"{p}.3")
        for j in range(n):
            h = b.conv(h, f"{p}.{4 + 3 * j}", c, 3)
            h = b.act(b.bn(h, f"{p}.{5 + 3 * j}", eps=0.001, momentum=0.01), "relu", f"{p}.{6 + 3 * j}")
        h = b.let(h, p.replace(".", "_"))
        k = [1, 2, 4][i]
        d = conv_t(b, h, f"backbone_2d.deblocks.{i}.0", 128, k, k)
        d = b.act(b.bn(d, f"backbone_2d.deblocks.{i}.1", eps=0.001, momentum=0.01), "relu",
                  f"backbone_2d_deblocks_{i}_2")
        ups.append(d)
        cin = c
    f = b.let(b.concat(ups, 1, "spatial_features_2d", "torch.cat([{}, {}, {}], dim=1)"))
    outs = []
    for nm, c in [("conv_cls", 18), ("conv_box", 42), ("conv_dir_cls", 12)]:
        o = b.conv(f, f"dense_head.{nm}", c, 1, bias=True)
        outs.append(b.transpose(o, [0, 2, 3, 1], f"{nm}_preds", py_fn="{}.permute(0, 2, 3, 1).contiguous()"))
    return dict(family="pointcloud", domains=["robotics"], model="PointPillars (KITTI)",
                layer="backbone_2d, dense_head",
                module="OpenPCDet BaseBEVBackbone (LAYER_NUMS [3, 5, 5], strides 2, filters 64/128/256, deblocks "
                       "ConvTranspose2d to 128 x 3 with strides 1/2/4, BN eps 1e-3) + AnchorHeadSingle (conv_cls 18, "
                       "conv_box 42, conv_dir_cls 12, permuted to NHWC)",
                source="open-mmlab/OpenPCDet pcdet/models/backbones_2d/base_bev_backbone.py, "
                       "dense_heads/anchor_head_single.py",
                notes=["The dense part of PointPillars after the pillar scatter: the 64-channel BEV pseudo-image",
                       "(non-negative pillar features, drawn from [0, 1]) through the three strided blocks",
                       "(ZeroPad2d(1) + stride-2 convolution, then 3 or 5 3x3 convolutions), the transposed",
                       "convolution deblocks, their concatenation to 384 channels, and the anchor head (2 rotations x",
                       "3 classes per location). KITTI's 432x496 pillar grid is reduced to 64x64 for the f64",
                       "reference; channels are the model's."]), outs, ["cls_preds", "box_preds", "dir_cls_preds"]


def conv1x1_points(b, x, path, cout, bias=True):
    """nn.Conv1d(cin, cout, 1) on [1, cin, N] points: an own parameter [cout, cin, 1] and a matmul."""
    cin, n = x.shape[1], x.shape[2]
    w = b.param(f"{path}.weight".replace(".", "_"), [cout, cin, 1], ("kaiming", ()))
    bb = b.param(f"{path}.bias".replace(".", "_"), [cout], U(-1 / math.sqrt(cin), 1 / math.sqrt(cin)))
    P = path.replace(".", "_")
    w2 = gnode(b, f"reshape({w.g}, shape=[{cout},{cin}])", f"{P}_weight_2d", [cout, cin])
    mm = gnode(b, f"matmul({w2.g}, {x.g}, transpose_a=false, transpose_b=false)", f"{P}_mm", [1, cout, n])
    b2 = gnode(b, f"reshape({bb.g}, shape=[{cout},1])", f"{P}_bias_col", [cout, 1])
    n_ = b.node(f"add({mm.g}, {b2.g})", P, [1, cout, n])
    return b.out(n_, [1, cout, n], f"F.conv1d({b.use(x)}, {w.py}, {bb.py})", x.m2 / 3 + 1 / (3 * cin))


def pointnet_stn(b, x, path, k):
    h = x
    for i, c in enumerate([64, 128, 1024]):
        h = conv1x1_points(b, h, f"{path}.conv{i + 1}", c)
        h = b.act(b.bn(h, f"{path}.bn{i + 1}", dims=1), "relu", f"{path}_relu{i + 1}".replace(".", "_"))
    P = path.replace(".", "_")
    n = b.node(f"max({h.g}, axes=[2], keepdims=true)", f"{P}_max", [1, 1024, 1])
    h = b.out(n, [1, 1024, 1], f"torch.max({b.use(h)}, 2, keepdim=True)[0]", h.m2 * 2)
    h = b.reshape(h, [1, 1024], f"{P}_view", py="{}.view(-1, 1024)")
    for i, c in enumerate([512, 256]):
        h = b.linear(h, f"{path}.fc{i + 1}", c)
        h = b.act(b.bn(h, f"{path}.bn{i + 4}", dims=1), "relu", f"{P}_relu{i + 4}")
    h = b.linear(h, f"{path}.fc3", k * k)
    r = b.iota([k, k], 0, f"{P}_eye_row")
    c = b.iota([k, k], 1, f"{P}_eye_col")
    eq = gnode(b, f"equal({r.g}, {c.g})", f"{P}_eye_i32", [k, k], dtype="i32")
    eye = gnode(b, f"cast({eq.g}, dtype=f32)", f"{P}_eye", [k, k])
    eye = gnode(b, f"reshape({eye.g}, shape=[1,{k * k}])", f"{P}_iden", [1, k * k])
    n = b.node(f"add({h.g}, {eye.g})", f"{P}_plus_iden", [1, k * k])
    h = b.out(n, [1, k * k], f"({b.use(h)} + torch.eye({k}, dtype={x.py}.dtype).flatten()[None, :])", h.m2 + 1 / k)
    return b.let(b.reshape(h, [1, k, k], P, py=f"{{}}.view(-1, {k}, {k})"))


def point_transform(b, x, t, name):
    xt = b.transpose(x, [0, 2, 1], f"{name}_t", py_fn="{}.transpose(2, 1)")
    m = b.matmul(xt, t, f"{name}_bmm", py="torch.bmm({}, {})", m2=xt.m2)
    return b.let(b.transpose(m, [0, 2, 1], name, py_fn="{}.transpose(2, 1)"))


@model
def pointnet_cls_1024(b):
    n = 1024
    x = b.input("points", [1, 3, n])
    xv = b.let(x)
    trans = pointnet_stn(b, xv, "feat.stn", 3)
    h = point_transform(b, xv, trans, "feat_input_transform")
    h = b.let(b.act(b.bn(conv1x1_points(b, h, "feat.conv1", 64), "feat.bn1", dims=1), "relu", "feat_relu1"))
    trans_feat = pointnet_stn(b, h, "feat.fstn", 64)
    h = point_transform(b, h, trans_feat, "feat_feature_transform")
    h = b.act(b.bn(conv1x1_points(b, h, "feat.conv2", 128), "feat.bn2", dims=1), "relu", "feat_relu2")
    h = b.bn(conv1x1_points(b, h, "feat.conv3", 1024), "feat.bn3", dims=1)
    nn_ = b.node(f"max({h.g}, axes=[2], keepdims=true)", "feat_max", [1, 1024, 1])
    h = b.out(nn_, [1, 1024, 1], f"torch.max({b.use(h)}, 2, keepdim=True)[0]", h.m2 * 2)
    h = b.reshape(h, [1, 1024], "global_feature", py="{}.view(-1, 1024)")
    h = b.act(b.bn(b.linear(h, "fc1", 512), "bn1", dims=1), "relu", "relu1")
    h = b.act(b.bn(b.linear(h, "fc2", 256), "bn2", dims=1), "relu", "relu2")
    h = b.linear(h, "fc3", 40)
    y = b.softmax(h, 1, "log_probs", "F.log_softmax({}, dim=1)", log=True)
    return dict(family="pointcloud", domains=["robotics"], model="PointNet (classification, feature transform)",
                layer="full model",
                module="PointNetCls(k=40, feature_transform=True): PointNetfeat (STN3d, shared MLP 64, STNkd(64), "
                       "shared MLP 128, 1024, max pool) + fc1 512, fc2 256 (BatchNorm1d, ReLU), fc3, log_softmax",
                source="fxia22/pointnet.pytorch pointnet/model.py",
                notes=["The whole PointNet classifier on one cloud of 1024 points (ModelNet40's usual sampling,",
                       "coordinates in [-1, 1]), batch 1, inference form: the input and feature transform nets",
                       "(shared 1x1 Conv1d MLPs written as matmuls, max over points, fully connected layers, plus",
                       "the identity built from iota and equal), batch mmultiplications with the predicted",
                       "transforms, dropout as identity. Outputs: the 40 class log-probabilities and the 3x3 and",
                       "64x64 transforms."]), [y, trans, trans_feat], ["log_probs", "trans", "trans_feat"]


def double_conv(b, x, path, mid, out):
    h = b.cba(x, f"{path}.double_conv.0", f"{path}.double_conv.1", mid, 3, act="relu",
              act_name=f"{path}.double_conv.2")
    return b.let(b.cba(h, f"{path}.double_conv.3", f"{path}.double_conv.4", out, 3, act="relu",
                       act_name=f"{path}.double_conv.5"), path.replace(".", "_"))


@model
def unet_w16_96(b):
    x = b.input("x", [1, 3, 96, 96])
    w = [16, 32, 64, 128, 256]
    x1 = double_conv(b, x, "inc", w[0], w[0])
    xs = [x1]
    h = x1
    for i in range(4):
        h = maxpool(b, h, 2, 2, 0, f"down{i + 1}_maxpool")
        h = double_conv(b, h, f"down{i + 1}.maxpool_conv.1", w[i + 1], w[i + 1])
        xs.append(h)
    h = xs[4]
    for i in range(4):
        cin = w[4 - i]
        up = conv_t(b, h, f"up{i + 1}.up", cin // 2, 2, 2, bias=True)
        skip = xs[3 - i]
        cat = b.concat([skip, up], 1, f"up{i + 1}_cat", "torch.cat([{}, {}], dim=1)")
        h = double_conv(b, cat, f"up{i + 1}.conv", w[3 - i], w[3 - i])
    y = b.conv(h, "outc.conv", 2, 1, bias=True)
    return dict(family="segmentation", domains=["robotics", "aiot"], model="U-Net (width-reduced)", layer="full model",
                module="UNet(n_channels=3, n_classes=2, bilinear=False): inc, down1-4 (MaxPool2d(2) + DoubleConv), "
                       "up1-4 (ConvTranspose2d(2, stride 2), concatenation with the skip, DoubleConv), outc",
                source="milesial/Pytorch-UNet unet/unet_model.py, unet/unet_parts.py",
                notes=["The whole U-Net with transposed-convolution up-sampling on a 96x96 RGB image, batch 1,",
                       "inference form. The width is reduced by 4 (16, 32, 64, 128, 256 channels instead of 64 to",
                       "1024, as lightweight edge U-Nets use; at full width even 64x64 costs 4.5 GFLOP) so the f64",
                       "reference stays fast. Sizes divide by 16, so the skip padding of Up is zero and left out.",
                       "The output is the 2-class logits map."]), [y], ["logits"]


@model
def lraspp_mobilenet_v3_large_224(b):
    x = b.input("x", [1, 3, 224, 224])
    outs = mnv3_features(b, x, MNV3_LARGE, prefix="backbone", dilated=True)
    low, high = outs[4], b.let(outs[16])
    h = b.cba(high, "classifier.cbr.0", "classifier.cbr.1", 128, 1, act="relu", act_name="classifier.cbr.2")
    s = b.gap(high, "classifier_scale_0")
    s = b.act(b.conv(s, "classifier.scale.1", 128, 1), "sigmoid", "classifier_scale_2")
    h = b.mul(h, s, "classifier_x_s")
    h = interp(b, h, low.shape[2:], "bilinear", "classifier_up",
               f'F.interpolate({{}}, size=({low.shape[2]}, {low.shape[3]}), mode="bilinear", align_corners=False)')
    lo = b.conv(low, "classifier.low_classifier", 21, 1, bias=True)
    hi = b.conv(h, "classifier.high_classifier", 21, 1, bias=True)
    o = b.add(lo, hi, "classifier_out")
    y = interp(b, o, [224, 224], "bilinear", "out",
               'F.interpolate({}, size=(224, 224), mode="bilinear", align_corners=False)')
    return dict(family="segmentation", domains=["mobile", "aiot"], model="LR-ASPP MobileNetV3-Large",
                layer="full model",
                module="torchvision LRASPP: backbone MobileNetV3-Large features.0-16 (dilated=True: the last three "
                       "blocks at stride 16 with dilation 2), LRASPPHead(40, 960, 21, 128), F.interpolate to the input",
                source="torchvision.models.segmentation.lraspp_mobilenet_v3_large",
                notes=["The whole LR-ASPP semantic segmentation model (21 VOC classes) at 224x224, batch 1, inference",
                       "form: the dilated MobileNetV3-Large backbone gives the 40-channel 28x28 'low' and 960-channel",
                       "14x14 'high' features; the head gates a 1x1 conv of 'high' by a pooled sigmoid branch,",
                       "upsamples bilinearly (align_corners false) and adds the low classifier; the logits are",
                       "resized to 224x224."]), [y], ["logits"]


def scnn_cbr(b, x, path, cout, k=3, s=1, p=0):
    return b.cba(x, f"{path}.conv.0", f"{path}.conv.1", cout, k, s, p=p, act="relu", act_name=f"{path}.conv.2")


def scnn_ds(b, x, path, cout, s=1):
    c = x.shape[1]
    h = b.cba(x, f"{path}.conv.0", f"{path}.conv.1", c, 3, s, p=1, g=c, act="relu", act_name=f"{path}.conv.2")
    return b.cba(h, f"{path}.conv.3", f"{path}.conv.4", cout, 1, act="relu", act_name=f"{path}.conv.5")


def scnn_bottleneck(b, x, path, cin, cout, s, t=6):
    use_res = s == 1 and cin == cout
    xv = b.let(x) if use_res else x
    h = scnn_cbr(b, xv, f"{path}.block.0", cin * t, 1)
    h = b.cba(h, f"{path}.block.1.conv.0", f"{path}.block.1.conv.1", cin * t, 3, s, p=1, g=cin * t, act="relu",
              act_name=f"{path}.block.1.conv.2")
    h = b.bn(b.conv(h, f"{path}.block.2", cout, 1), f"{path}.block.3")
    if use_res:
        return b.let(b.add(xv, h, path.replace(".", "_"), "{a} + {b}"))
    return b.let(h, path.replace(".", "_"))


@model
def fast_scnn_192x384(b):
    x = b.input("x", [1, 3, 192, 384])
    h = scnn_cbr(b, x, "learning_to_downsample.conv", 32, 3, 2)
    h = scnn_ds(b, h, "learning_to_downsample.dsconv1", 48, 2)
    higher = b.let(scnn_ds(b, h, "learning_to_downsample.dsconv2", 64, 2), "higher_res_features")
    h, cin = higher, 64
    for bi, (c, n, s) in enumerate([(64, 3, 2), (96, 3, 2), (128, 3, 1)]):
        for j in range(n):
            h = scnn_bottleneck(b, h, f"global_feature_extractor.bottleneck{bi + 1}.{j}", cin, c, s if j == 0 else 1)
            cin = c
    hv = b.let(h)
    hh, ww = h.shape[2], h.shape[3]
    feats = [hv]
    for i, size in enumerate([1, 2, 3, 6]):
        p = f"global_feature_extractor.ppm.conv{i + 1}"
        if size == 1:
            t = b.gap(hv, f"ppm_pool{size}", "F.adaptive_avg_pool2d({}, 1)")
        else:
            t = b.pool(hv, "avg_pool2d", (hh // size, ww // size), (hh // size, ww // size), 0, f"ppm_pool{size}",
                       f"F.adaptive_avg_pool2d({{}}, {size})")
        t = scnn_cbr(b, t, p, 32, 1)
        feats.append(interp(b, t, [hh, ww], "bilinear", f"ppm_up{size}",
                            f'F.interpolate({{}}, ({hh}, {ww}), mode="bilinear", align_corners=True)', True))
    cat = b.concat(feats, 1, "ppm_cat", "torch.cat([{}, {}, {}, {}, {}], dim=1)")
    low = scnn_cbr(b, cat, "global_feature_extractor.ppm.out", 128, 1)
    low = interp(b, low, higher.shape[2:], "bilinear", "feature_fusion_up",
                 'F.interpolate({}, scale_factor=4, mode="bilinear", align_corners=True)', True)
    low = b.cba(low, "feature_fusion.dwconv.conv.0", "feature_fusion.dwconv.conv.1", 128, 3, p=1, g=128, act="relu",
                act_name="feature_fusion.dwconv.conv.2")
    low = b.bn(b.conv(low, "feature_fusion.conv_lower_res.0", 128, 1, bias=True), "feature_fusion.conv_lower_res.1")
    hi = b.bn(b.conv(higher, "feature_fusion.conv_higher_res.0", 128, 1, bias=True),
              "feature_fusion.conv_higher_res.1")
    h = b.act(b.add(hi, low, "feature_fusion_add", "{a} + {b}"), "relu", "feature_fusion")
    h = scnn_ds(b, h, "classifier.dsconv1", 128)
    h = scnn_ds(b, h, "classifier.dsconv2", 128)
    h = b.conv(h, "classifier.conv.1", 19, 1, bias=True)
    y = interp(b, h, [192, 384], "bilinear", "logits_up",
               'F.interpolate({}, (192, 384), mode="bilinear", align_corners=True)', True)
    return dict(family="segmentation", domains=["robotics", "aiot"], model="Fast-SCNN", layer="full model",
                module="FastSCNN(19): LearningToDownsample (conv + 2 depthwise-separable, /8), GlobalFeatureExtractor "
                       "(9 LinearBottlenecks, PyramidPooling 1/2/3/6 with bilinear align_corners upsampling), "
                       "FeatureFusionModule (x4 upsampling, depthwise conv, 1x1 convs, add), Classifer, x8 upsampling",
                source="Tramac/Fast-SCNN-pytorch models/fast_scnn.py",
                notes=["The whole Fast-SCNN real-time segmentation network (19 Cityscapes classes), batch 1,",
                       "inference form, on a 192x384 image (reduced from 1024x2048 with the aspect ratio kept; at",
                       "this size the 1/32 map is 6x12, so the pyramid pooling's adaptive pools to 1, 2, 3 and 6",
                       "are exact average pools). All upsampling is bilinear with align_corners true; auxiliary",
                       "heads and dropout are left out. The output is the 19-class logits map."]), [y], ["logits"]


@model
def fastdepth_160(b):
    x = b.input("x", [1, 3, 160, 160])
    h = b.cba(x, "conv0.0", "conv0.1", 32, 3, 2, act="relu6", act_name="conv0.2")
    skips = {}
    cin = 32
    for i, (c, s) in enumerate([(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2)] + [(512, 1)] * 5 +
                               [(1024, 2), (1024, 1)]):
        p = f"conv{i + 1}"
        h = b.cba(h, f"{p}.0", f"{p}.1", cin, 3, s, g=cin, act="relu6", act_name=f"{p}.2")
        h = b.let(b.cba(h, f"{p}.3", f"{p}.4", c, 1, act="relu6", act_name=f"{p}.5"), p)
        if i + 1 in (1, 3, 5):
            skips[i + 1] = h
        cin = c
    for i, c in enumerate([512, 256, 128, 64, 32]):
        p = f"decode_conv{i + 1}"
        h = b.cba(h, f"{p}.0.0", f"{p}.0.1", cin, 5, g=cin, act="relu", act_name=f"{p}.0.2")
        h = b.cba(h, f"{p}.1.0", f"{p}.1.1", c, 1, act="relu", act_name=f"{p}.1.2")
        h = b.resize(h, [h.shape[2] * 2, h.shape[3] * 2], "nearest", f"{p}_up",
                     'F.interpolate({}, scale_factor=2, mode="nearest")')
        if i + 1 in (2, 3, 4):
            h = b.let(b.add(h, skips[{2: 5, 3: 3, 4: 1}[i + 1]], f"{p}_skip", "{a} + {b}"))
        cin = c
    y = b.cba(h, "decode_conv6.0", "decode_conv6.1", 1, 1, act="relu", act_name="decode_conv6.2")
    return dict(family="depth_estimation", domains=["mobile", "robotics"], model="FastDepth", layer="full model",
                module="MobileNetSkipAdd: MobileNet encoder conv0-13 (ReLU6), NNConv5 decoder decode_conv1-5 "
                       "(5x5 depthwise + pointwise, BN, ReLU, nearest x2 upsampling) with additive skips from conv1, "
                       "conv3, conv5, decode_conv6 (pointwise to depth)",
                source="dwofk/fast-depth models.py, imagenet/mobilenet.py",
                notes=["The whole FastDepth monocular depth network, batch 1, inference form. The input is reduced",
                       "from 224x224 to 160x160 (1.5 to 0.78 GFLOP) for the f64 reference; channels are the model's,",
                       "and the skips meet at 20x20, 40x40 and 80x80. The output is the 160x160 depth map (ReLU)."]), \
        [y], ["depth"]


@model
def dcgan_generator_64(b):
    z = b.input("z", [1, 100, 1, 1], ("normal", (0.0, 1.0)))
    h = z
    w = ("normal", (0.0, 0.02))
    for i, (c, s, p) in enumerate([(512, 1, 0), (256, 2, 1), (128, 2, 1), (64, 2, 1)]):
        h = conv_t(b, h, f"main.{3 * i}", c, 4, s, p, w_init=w)
        h = b.act(b.bn(h, f"main.{3 * i + 1}"), "relu", f"main.{3 * i + 2}")
    h = conv_t(b, h, "main.12", 3, 4, 2, 1, w_init=w)
    y = b.act(h, "tanh", "main_13")
    return dict(family="generator", domains=["mobile"], model="DCGAN generator", layer="full model",
                module="Generator(nz=100, ngf=64, nc=3): ConvTranspose2d(100, 512, 4, 1, 0), 3x ConvTranspose2d(4, 2, "
                       "1) to 256, 128, 64 (each + BatchNorm2d + ReLU), ConvTranspose2d(64, 3, 4, 2, 1) + Tanh",
                source="pytorch/examples dcgan/main.py",
                notes=["The whole DCGAN generator: one 100-d latent vector (normal(0, 1)) to a 64x64 RGB image, batch",
                       "1, inference form. Transposed-convolution weights are drawn normal(0, 0.02) as the example's",
                       "weights_init does; batch norm with running statistics. The output is the tanh image."]), \
        [y], ["image"]


@model
def fsrcnn_x3_96x128(b):
    x = b.input("x", [1, 1, 96, 128], ("uniform", (0.0, 1.0)))
    h = b.conv(x, "first_part.0", 56, 5, bias=True, w_init=He(25), b_init=U(-0.01, 0.01))
    h = prelu(b, h, "first_part.1")
    specs = [(12, 1)] + [(12, 3)] * 4 + [(56, 1)]
    for i, (c, k) in enumerate(specs):
        h = b.conv(h, f"mid_part.{2 * i}", c, k, bias=True, w_init=He(h.shape[1] * k * k), b_init=U(-0.01, 0.01))
        h = prelu(b, h, f"mid_part.{2 * i + 1}")
    bound = math.sqrt(3.0 / (56 * 81 / 9))
    y = conv_t(b, h, "last_part", 1, 9, 3, 4, 2, bias=True, w_init=U(-bound, bound), b_init=U(-0.01, 0.01))
    return dict(family="super_resolution", domains=["mobile", "aiot"], model="FSRCNN (x3)", layer="full model",
                module="FSRCNN(scale_factor=3, num_channels=1, d=56, s=12, m=4): first_part (5x5 conv, PReLU), mid_part "
                       "(shrink 1x1, 4x 3x3 maps, expand 1x1, PReLU), last_part ConvTranspose2d(56, 1, 9, stride=3, "
                       "padding=4, output_padding=2)",
                source="yjn870/FSRCNN-pytorch models.py",
                notes=["The whole FSRCNN x3 super-resolution network on the luminance of a 96x128 frame (values in",
                       "[0, 1]) giving 288x384, batch 1: PReLU slopes drawn from [0.1, 0.4]; weights drawn at He",
                       "scale (kaiming_uniform with the ReLU gain, the deconvolution at the same scale over its",
                       "56 x 9 contributing taps) as the model's own He-normal init does, so activations keep",
                       "their range. The output is the upscaled luminance."]), [y], ["y"]


@model
def espcn_x3_64x96(b):
    x = b.input("x", [1, 1, 64, 96], ("uniform", (0.0, 1.0)))
    h = b.act(b.conv(x, "first_part.0", 64, 5, bias=True, w_init=He(25)), "tanh", "first_part_1")
    h = b.act(b.conv(h, "first_part.2", 32, 3, bias=True, w_init=He(576)), "tanh", "first_part_3")
    h = b.conv(h, "last_part.0", 9, 3, bias=True, w_init=He(288))
    hh, ww = h.shape[2], h.shape[3]
    g = b.node(f"reshape({h.g}, shape=[1,1,3,3,{hh},{ww}])", "pixel_shuffle_view", [1, 1, 3, 3, hh, ww])
    g = b.node(f"transpose(%{g}, perm=[0,1,4,2,5,3])", "pixel_shuffle_perm", [1, 1, hh, 3, ww, 3])
    n = b.node(f"reshape(%{g}, shape=[1,1,{3 * hh},{3 * ww}])", "last_part_1", [1, 1, 3 * hh, 3 * ww])
    y = b.out(n, [1, 1, 3 * hh, 3 * ww], f"F.pixel_shuffle({b.use(h)}, 3)", h.m2)
    return dict(family="super_resolution", domains=["mobile", "aiot"], model="ESPCN (x3)", layer="full model",
                module="ESPCN(scale_factor=3, num_channels=1): first_part (Conv2d 5x5 1 -> 64, Tanh, Conv2d 3x3 64 -> "
                       "32, Tanh), last_part (Conv2d 3x3 32 -> 9, PixelShuffle(3))",
                source="yjn870/ESPCN-pytorch models.py",
                notes=["The whole ESPCN x3 super-resolution network on the luminance of a 64x96 frame (values in",
                       "[0, 1]) giving 192x288, batch 1; the pixel shuffle is a reshape to [1, 1, 3, 3, H, W], a",
                       "transpose and a reshape. Weights are drawn at He scale (bound sqrt(6 / fan_in)) as the",
                       "model's own normal init does. The output is the upscaled luminance."]), [y], ["y"]


@model
def mobilenet_v1_160(b):
    x = b.input("x", [1, 3, 160, 160])
    h = b.cba(x, "conv_stem", "bn1", 32, 3, 2, act="relu6", act_name="bn1_act")
    cin = 32
    stages = [[(64, 1)], [(128, 2), (128, 1)], [(256, 2), (256, 1)], [(512, 2)] + [(512, 1)] * 5, [(1024, 2), (1024, 1)]]
    for si, st in enumerate(stages):
        for j, (c, s) in enumerate(st):
            p = f"blocks.{si}.{j}"
            h = b.cba(h, f"{p}.conv_dw", f"{p}.bn1", cin, 3, s, g=cin, act="relu6")
            h = b.let(b.cba(h, f"{p}.conv_pw", f"{p}.bn2", c, 1, act="relu6"), p.replace(".", "_"))
            cin = c
    y = classifier_head(b, h, "classifier", 1000, "global_pool")
    return dict(family="cnn_classifier", domains=["mobile", "aiot"], model="MobileNetV1 1.0", layer="full model",
                module="timm MobileNetV1 (mobilenetv1_100): conv_stem, bn1 (ReLU6), blocks.0-4 (13 "
                       "DepthwiseSeparableConv: 3x3 depthwise + BN + ReLU6, 1x1 pointwise + BN + ReLU6), global pool, "
                       "classifier",
                source="timm mobilenetv1_100",
                notes=["The whole MobileNetV1 1.0, batch 1, inference form, at 160x160 (one of the paper's input",
                       "resolutions, 0.58 GFLOP instead of 1.1 at 224) so the f64 reference stays fast; the output",
                       "is the 1000 class logits."]), [y], ["logits"]


@model
def mnasnet1_0_224(b):
    x = b.input("x", [1, 3, 224, 224])
    h = b.cba(x, "layers.0", "layers.1", 32, 3, 2, act="relu", act_name="layers.2")
    h = b.cba(h, "layers.3", "layers.4", 32, 3, 1, g=32, act="relu", act_name="layers.5")
    h = b.bn(b.conv(h, "layers.6", 16, 1), "layers.7")
    cin = 16
    for si, (c, k, s, t, n) in enumerate([(24, 3, 2, 3, 3), (40, 5, 2, 3, 3), (80, 5, 2, 6, 3), (96, 3, 1, 6, 2),
                                          (192, 5, 2, 6, 4), (320, 3, 1, 6, 1)]):
        for j in range(n):
            p = f"layers.{8 + si}.{j}.layers"
            st = s if j == 0 else 1
            use_res = st == 1 and cin == c
            inp = b.let(h) if use_res else h
            m = cin * t
            e = b.cba(inp, f"{p}.0", f"{p}.1", m, 1, act="relu", act_name=f"{p}.2")
            e = b.cba(e, f"{p}.3", f"{p}.4", m, k, st, g=m, act="relu", act_name=f"{p}.5")
            e = b.bn(b.conv(e, f"{p}.6", c, 1), f"{p}.7")
            h = b.let(b.add(e, inp, f"layers_{8 + si}_{j}", "{a} + {b}")) if use_res else \
                b.let(e, f"layers_{8 + si}_{j}")
            cin = c
    h = b.cba(h, "layers.14", "layers.15", 1280, 1, act="relu", act_name="layers.16")
    h = b.mean(h, [2, 3], "mean", "{}.mean([2, 3])")
    y = b.linear(h, "classifier.1", 1000)
    return dict(family="cnn_classifier", domains=["mobile", "aiot"], model="MNASNet 1.0", layer="full model",
                module="torchvision MNASNet(1.0): layers.0-16 (stem conv, depthwise-separable conv, 6 stacks of "
                       "inverted residuals with 3x3 and 5x5 depthwise kernels, 1x1 conv to 1280), mean over H and W, "
                       "classifier (Dropout, Linear(1280, 1000))",
                source="torchvision.models.mnasnet1_0",
                notes=["The whole MNASNet 1.0 (the platform-aware searched mobile network) at 224x224, batch 1,",
                       "inference form; the output is the 1000 class logits."]), [y], ["logits"]

# ---------------------------------------------------------------------------------------------

def main(names):
    os.makedirs(OUT, exist_ok=True)
    todo = names or sorted(MODELS)
    for name in todo:
        if name not in MODELS:
            sys.exit(f"unknown model `{name}`; known: {', '.join(sorted(MODELS))}")
        b = B(name)
        meta, outputs, out_names = MODELS[name](b)
        b.write(meta, outputs, out_names)
        print(f"wrote {name}: {len(b.own) + sum(len(p) for _, _, p in b.mods)} parameters, {len(b.nodes)} nodes")


if __name__ == "__main__":
    main(sys.argv[1:])
