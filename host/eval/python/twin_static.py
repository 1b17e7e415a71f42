"""Static facts about PyTorch twins, read with `ast` (no torch needed).

Usage: python3 twin_static.py TWIN.py...   (or the script on stdin: python3 - TWIN.py...)

For each file, prints one JSON object per line on stdout:
  {"file": ..., "errors": [{"line": N, "message": ...}],
   "inputs": [{"shape": [...], "dtype": DTYPE, "line": N}],
   "params": [{"name": "conv.weight", "shape": [...], "dtype": DTYPE, "line": N}],
   "init_inputs": [...]}

`inputs` are the tensors `get_inputs()` returns, in order. `params` are the entries of
`Model(*get_init_inputs()).state_dict()` in state_dict order (a module's own parameters, then its
own buffers, then each child module in registration order), worked out from the constructors in
`Model.__init__`; int64 buffers (`num_batches_tracked`, index tables) and non-persistent buffers
are left out. DTYPE is "float" (float32, torch's default), "half" (float16), "int8", "int32" or
"int64" (`torch.int` is int32; `long`, `torch.randint` without a dtype and other integer
types are "int64"). Each entry's line is that of the
call that made its module or `nn.Parameter`. Anything the reader cannot follow is an error with
its line, never a guess: twins keep to the constructs below.

Constants are numbers, strings (f-strings too), booleans, None, tuples, lists and dicts of
them, arithmetic, comparisons, `and`/`or`/`not`, `a if c else b`, indexing and slicing on them,
the builtins `range len min max abs int float round sum list tuple zip enumerate dict` and
`OrderedDict`, `*` unpacking in lists and calls, list comprehensions over constant sequences,
and names bound earlier (module level, `__init__` arguments, locals, `self.X`).

Understood in `__init__`: `super().__init__()`; `x = VALUE`, `a, b = VALUE`, `x += VALUE`;
`self.X = VALUE`; `self.register_buffer("X", T[, persistent=B])`;
`self.add_module("X", M)` / `self.register_module(...)`; `self.register_parameter("X", P or
None)`; `L.append(V)`, `L.extend(Vs)` on a local list, an `nn.Sequential` or an
`nn.ModuleList`; `for` loops over constant sequences and `if` statements on constants; `pass`,
docstrings and `assert`s (skipped). A comprehension or loop over anything but a constant
sequence is an error: its length, and so the state_dict, would be a guess. A VALUE is a constant, a module M or a
parameter `nn.Parameter(T)`, and lists, tuples and dicts of them. Modules are:
- those of PARAM_MODULES, with PyTorch's signatures (positional or keyword arguments) and
  parameter shapes: Linear, Bilinear, Conv1d/2d/3d, ConvTranspose1d/2d/3d, BatchNorm1d/2d/3d,
  InstanceNorm1d/2d/3d, LayerNorm, RMSNorm, GroupNorm, PReLU, Embedding, EmbeddingBag,
  MultiheadAttention, RNN/LSTM/GRU and their cells;
- those of PARAMLESS (activations, pools, pads, dropout, ...), their arguments constants;
- containers of modules: `nn.Sequential(M, ...)` or `nn.Sequential(OrderedDict(...))`,
  `nn.ModuleList([M, ...])` and `nn.ModuleDict({...})`, nested freely; children are named
  "0", "1", ... (or by their keys), so `seq.0.weight`;
- classes deriving from `nn.Module` defined in the same file, read like `Model`.
T is one of `torch.{rand,randn,zeros,ones,empty}(shape)`, `torch.full(shape, v)`,
`torch.tensor(number or list)`, `torch.tril/triu(T)`, optionally followed by `.view(shape)`,
`.uniform_(...)`-style methods or arithmetic with numbers.

A twin must also follow the model to any device (`model.to("cuda")` moves parameters and
buffers, the caller moves the inputs, nothing else moves), so these are errors too, each with
its line (see `device_errors`): in forward() and every function but `__init__`, `get_inputs`
and `get_init_inputs`, a tensor made by `torch.arange`, `torch.zeros`, `torch.tensor`, ...
(FACTORIES) without `device=` (or with a constant one), unless a `.to(x.device)` moves it at once,
and `torch.tensor(number or list, device=...)` (HOST_DATA: a copy from host memory on every call,
which a CUDA graph capture refuses);
`torch.from_numpy` and the legacy `torch.FloatTensor`-style constructors; `.cpu()`, `.cuda()`,
`.numpy()` and `.to("cpu")`; in `__init__`, a tensor kept as a plain attribute (`self.X =
torch...`: it must be `register_buffer`, persistent=False for a constant, or `nn.Parameter`);
at module and class level, a tensor kept in a variable.
"""

import ast
import json
import sys
from collections import OrderedDict

PARAMLESS = {
    "ReLU", "ReLU6", "LeakyReLU", "GELU", "SiLU", "Sigmoid", "Tanh", "Hardswish", "Hardsigmoid",
    "Softplus", "ELU", "Mish", "Softmax", "LogSoftmax", "MaxPool2d", "AvgPool2d",
    "AdaptiveAvgPool2d", "AdaptiveMaxPool2d", "Identity", "PixelShuffle", "PixelUnshuffle",
    "ChannelShuffle", "Flatten", "Unflatten", "ZeroPad2d", "ConstantPad2d", "ReflectionPad2d",
    "ReplicationPad2d", "Dropout", "Upsample",
    "SELU", "CELU", "GLU", "Hardtanh", "Hardshrink", "Softshrink", "Tanhshrink", "Softsign",
    "LogSigmoid", "Threshold", "Softmin", "Softmax2d", "MaxPool1d", "MaxPool3d", "AvgPool1d",
    "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
    "AdaptiveMaxPool3d", "LPPool1d", "LPPool2d", "ZeroPad1d", "ZeroPad3d", "ConstantPad1d",
    "ConstantPad3d", "ReflectionPad1d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad3d",
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "Dropout1d", "Dropout2d", "Dropout3d",
    "AlphaDropout", "UpsamplingNearest2d", "UpsamplingBilinear2d", "LocalResponseNorm", "Fold",
    "Unfold", "CosineSimilarity", "PairwiseDistance",
}


class Unsupported(Exception):
    def __init__(self, node, message):
        super().__init__(message)
        self.line = getattr(node, "lineno", 0)


def ntuple(v, n, node):
    if isinstance(v, int) and not isinstance(v, bool):
        return (v,) * n
    if (isinstance(v, (tuple, list)) and len(v) == n
            and all(isinstance(x, int) and not isinstance(x, bool) for x in v)):
        return tuple(v)
    what = "a 1-tuple" if n == 1 else "a pair of ints" if n == 2 else f"a tuple of {n} ints"
    raise Unsupported(node, f"expected an int or {what}, found {v!r}")


def shape_of(v, node):
    if isinstance(v, int):
        return [v]
    if isinstance(v, (tuple, list)) and all(isinstance(x, int) for x in v):
        return list(v)
    raise Unsupported(node, f"expected a shape (int or tuple of ints), found {v!r}")


REQUIRED = object()


def bind(sig, args, kwargs, node, name):
    """Binds call arguments to a signature [(name, default or REQUIRED)]."""
    out = {}
    if len(args) > len(sig):
        raise Unsupported(node, f"{name}: too many positional arguments")
    for (pname, _), v in zip(sig, args):
        out[pname] = v
    for k, v in kwargs.items():
        if k not in dict(sig):
            raise Unsupported(node, f"{name}: unknown argument `{k}`")
        if k in out:
            raise Unsupported(node, f"{name}: argument `{k}` given twice")
        out[k] = v
    for pname, default in sig:
        if pname not in out:
            if default is REQUIRED:
                raise Unsupported(node, f"{name}: missing argument `{pname}`")
            out[pname] = default
    return out


def grouped(a, node, key):
    """`a[key] // a["groups"]`, an error where PyTorch would refuse the grouping."""
    g = a["groups"]
    for k in ("in_channels", "out_channels"):
        if not isinstance(a[k], int) or not isinstance(g, int) or g < 1 or a[k] % g:
            raise Unsupported(node, f"{k} {a[k]!r} is not divisible by groups {g!r}")
    return a[key] // g


def conv(n):
    def rule(a, node):
        k = list(ntuple(a["kernel_size"], n, node))
        w = [a["out_channels"], grouped(a, node, "in_channels")] + k
        return [("weight", w)] + ([("bias", [a["out_channels"]])] if a["bias"] else []), []
    return rule


def conv_transpose(n):
    def rule(a, node):
        k = list(ntuple(a["kernel_size"], n, node))
        w = [a["in_channels"], grouped(a, node, "out_channels")] + k
        return [("weight", w)] + ([("bias", [a["out_channels"]])] if a["bias"] else []), []
    return rule


def linear(a, node):
    params = [("weight", [a["out_features"], a["in_features"]])]
    if a["bias"]:
        params.append(("bias", [a["out_features"]]))
    return params, []


def bilinear(a, node):
    params = [("weight", [a["out_features"], a["in1_features"], a["in2_features"]])]
    if a["bias"]:
        params.append(("bias", [a["out_features"]]))
    return params, []


def batchnorm(a, node):
    """BatchNorm and InstanceNorm; `num_batches_tracked` is an integer buffer, left out."""
    c = [a["num_features"]]
    params = [("weight", c), ("bias", c)] if a["affine"] else []
    buffers = [("running_mean", c), ("running_var", c)] if a["track_running_stats"] else []
    return params, buffers


def layernorm(a, node):
    s = shape_of(a["normalized_shape"], node)
    if not a["elementwise_affine"]:
        return [], []
    return [("weight", s)] + ([("bias", s)] if a["bias"] else []), []


def rmsnorm(a, node):
    s = shape_of(a["normalized_shape"], node)
    return ([("weight", s)] if a["elementwise_affine"] else []), []


def groupnorm(a, node):
    c = [a["num_channels"]]
    return ([("weight", c), ("bias", c)] if a["affine"] else []), []


def prelu(a, node):
    return [("weight", [a["num_parameters"]])], []


def embedding(a, node):
    return [("weight", [a["num_embeddings"], a["embedding_dim"]])], []


def multihead_attention(a, node):
    """Own parameters (the packed or separate projections, the biases), then `out_proj`."""
    e = a["embed_dim"]
    kdim = e if a["kdim"] is None else a["kdim"]
    vdim = e if a["vdim"] is None else a["vdim"]
    if kdim == e and vdim == e:
        params = [("in_proj_weight", [3 * e, e])]
    else:
        params = [("q_proj_weight", [e, e]), ("k_proj_weight", [e, kdim]),
                  ("v_proj_weight", [e, vdim])]
    if a["bias"]:
        params.append(("in_proj_bias", [3 * e]))
    if a["add_bias_kv"]:
        params += [("bias_k", [1, 1, e]), ("bias_v", [1, 1, e])]
    params.append(("out_proj.weight", [e, e]))
    if a["bias"]:
        params.append(("out_proj.bias", [e]))
    return params, []


def rnn(gates):
    """RNN/LSTM/GRU: per layer, per direction: weight_ih, weight_hh, bias_ih, bias_hh, weight_hr."""
    def rule(a, node):
        h, proj = a["hidden_size"], a.get("proj_size", 0)
        dirs = 2 if a["bidirectional"] else 1
        out_size = proj if proj > 0 else h
        params = []
        for layer in range(a["num_layers"]):
            width = a["input_size"] if layer == 0 else out_size * dirs
            for d in range(dirs):
                sfx = f"_l{layer}" + ("_reverse" if d == 1 else "")
                params += [("weight_ih" + sfx, [gates * h, width]),
                           ("weight_hh" + sfx, [gates * h, out_size])]
                if a["bias"]:
                    params += [("bias_ih" + sfx, [gates * h]), ("bias_hh" + sfx, [gates * h])]
                if proj > 0:
                    params.append(("weight_hr" + sfx, [proj, h]))
        return params, []
    return rule


def rnn_cell(gates):
    def rule(a, node):
        h = a["hidden_size"]
        params = [("weight_ih", [gates * h, a["input_size"]]), ("weight_hh", [gates * h, h])]
        if a["bias"]:
            params += [("bias_ih", [gates * h]), ("bias_hh", [gates * h])]
        return params, []
    return rule


CONV_SIG = [("in_channels", REQUIRED), ("out_channels", REQUIRED), ("kernel_size", REQUIRED),
            ("stride", 1), ("padding", 0), ("dilation", 1), ("groups", 1), ("bias", True),
            ("padding_mode", "zeros")]
CONVT_SIG = [("in_channels", REQUIRED), ("out_channels", REQUIRED), ("kernel_size", REQUIRED),
             ("stride", 1), ("padding", 0), ("output_padding", 0), ("groups", 1), ("bias", True),
             ("dilation", 1), ("padding_mode", "zeros")]
BN_SIG = [("num_features", REQUIRED), ("eps", 1e-5), ("momentum", 0.1), ("affine", True),
          ("track_running_stats", True)]
IN_SIG = [("num_features", REQUIRED), ("eps", 1e-5), ("momentum", 0.1), ("affine", False),
          ("track_running_stats", False)]
RNN_TAIL = [("bias", True), ("batch_first", False), ("dropout", 0.0), ("bidirectional", False)]
RNN_HEAD = [("input_size", REQUIRED), ("hidden_size", REQUIRED), ("num_layers", 1)]
CELL_SIG = [("input_size", REQUIRED), ("hidden_size", REQUIRED), ("bias", True)]
PARAM_MODULES = {
    "Conv1d": (CONV_SIG, conv(1)),
    "Conv2d": (CONV_SIG, conv(2)),
    "Conv3d": (CONV_SIG, conv(3)),
    "ConvTranspose1d": (CONVT_SIG, conv_transpose(1)),
    "ConvTranspose2d": (CONVT_SIG, conv_transpose(2)),
    "ConvTranspose3d": (CONVT_SIG, conv_transpose(3)),
    "Linear": ([("in_features", REQUIRED), ("out_features", REQUIRED), ("bias", True)], linear),
    "Bilinear": ([("in1_features", REQUIRED), ("in2_features", REQUIRED),
                  ("out_features", REQUIRED), ("bias", True)], bilinear),
    "BatchNorm1d": (BN_SIG, batchnorm),
    "BatchNorm2d": (BN_SIG, batchnorm),
    "BatchNorm3d": (BN_SIG, batchnorm),
    "InstanceNorm1d": (IN_SIG, batchnorm),
    "InstanceNorm2d": (IN_SIG, batchnorm),
    "InstanceNorm3d": (IN_SIG, batchnorm),
    "LayerNorm": ([("normalized_shape", REQUIRED), ("eps", 1e-5), ("elementwise_affine", True),
                   ("bias", True)], layernorm),
    "RMSNorm": ([("normalized_shape", REQUIRED), ("eps", None), ("elementwise_affine", True)],
                rmsnorm),
    "GroupNorm": ([("num_groups", REQUIRED), ("num_channels", REQUIRED), ("eps", 1e-5),
                   ("affine", True)], groupnorm),
    "PReLU": ([("num_parameters", 1), ("init", 0.25)], prelu),
    "Embedding": ([("num_embeddings", REQUIRED), ("embedding_dim", REQUIRED),
                   ("padding_idx", None), ("max_norm", None), ("norm_type", 2.0),
                   ("scale_grad_by_freq", False), ("sparse", False)], embedding),
    "EmbeddingBag": ([("num_embeddings", REQUIRED), ("embedding_dim", REQUIRED),
                      ("max_norm", None), ("norm_type", 2.0), ("scale_grad_by_freq", False),
                      ("mode", "mean"), ("sparse", False), ("include_last_offset", False),
                      ("padding_idx", None)], embedding),
    "MultiheadAttention": ([("embed_dim", REQUIRED), ("num_heads", REQUIRED), ("dropout", 0.0),
                            ("bias", True), ("add_bias_kv", False), ("add_zero_attn", False),
                            ("kdim", None), ("vdim", None), ("batch_first", False)],
                           multihead_attention),
    "RNN": (RNN_HEAD + [("nonlinearity", "tanh")] + RNN_TAIL, rnn(1)),
    "LSTM": (RNN_HEAD + RNN_TAIL + [("proj_size", 0)], rnn(4)),
    "GRU": (RNN_HEAD + RNN_TAIL, rnn(3)),
    "RNNCell": (CELL_SIG + [("nonlinearity", "tanh")], rnn_cell(1)),
    "LSTMCell": (CELL_SIG, rnn_cell(4)),
    "GRUCell": (CELL_SIG, rnn_cell(3)),
}
CONTAINERS = {"Sequential", "ModuleList", "ModuleDict"}

DTYPES = {"float32": "float", "float": "float", "float64": "float", "double": "float",
          "float16": "half", "half": "half", "int8": "int8", "int32": "int32", "int": "int32"}
INT_DTYPES = {"uint8", "int16", "int64", "long"}


def dtype_class(name):
    """The class of a torch dtype's attribute name (`torch.int8` -> "int8"); see the header."""
    if name in DTYPES:
        return DTYPES[name]
    return "int64" if name in INT_DTYPES else "float"


def dtype_arg(node):
    """The class of a `dtype=torch.X` argument."""
    return dtype_class(node.attr if isinstance(node, ast.Attribute) else "")
TENSOR_MAKERS = {"rand", "randn", "zeros", "ones", "empty"}
SAME_SHAPE_METHODS = {"uniform_", "normal_", "abs", "abs_", "clamp", "clamp_", "add_",
                      "mul_", "exp", "sqrt", "contiguous", "clone"}
BUILTINS = {"range": range, "len": len, "min": min, "max": max, "abs": abs, "int": int,
            "float": float, "round": round, "sum": sum, "list": list, "tuple": tuple, "zip": zip,
            "enumerate": enumerate, "dict": dict, "OrderedDict": OrderedDict}
MAX_ITEMS = 100000


def nn_name(func):
    """`nn.X` or `torch.nn.X` -> "X"; else None."""
    if isinstance(func, ast.Attribute):
        v = func.value
        if isinstance(v, ast.Name) and v.id == "nn":
            return func.attr
        if (isinstance(v, ast.Attribute) and v.attr == "nn" and isinstance(v.value, ast.Name)
                and v.value.id == "torch"):
            return func.attr
    return None


def torch_name(func):
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "torch":
        return func.attr
    return None


class Param:
    """An `nn.Parameter` made at `line`."""

    def __init__(self, shape, dtype, line):
        self.shape, self.dtype, self.line = shape, dtype, line


class Mod:
    """A module made at `line`: its own parameters and persistent buffers other than int64 ones
    ({name: (shape, dtype, line)}) and its children ({name: Mod}), each in registration order."""

    def __init__(self, kind, line, sequence=False):
        self.kind, self.line, self.sequence = kind, line, sequence
        self.params, self.buffers, self.children = {}, {}, {}

    def add_child(self, name, value, node):
        if not isinstance(value, Mod):
            raise Unsupported(node, f"{self.kind}: child `{name}` is not a module but {value!r}")
        self.children[name] = value

    def append(self, value, node):
        self.add_child(str(len(self.children)), value, node)

    def entries(self, prefix=""):
        own = list(self.params.items()) + list(self.buffers.items())
        out = [(prefix + n,) + e for n, e in own if e is not None]
        for n, c in self.children.items():
            if c is not None:
                out.extend(c.entries(prefix + n + "."))
        return out


def as_items(v, node, what):
    """A constant sequence (list, tuple, range, dict keys, zip, ...) as a list."""
    if isinstance(v, (list, tuple)):
        return list(v)
    if isinstance(v, (range, dict, zip, enumerate)):
        if isinstance(v, range) and len(v) > MAX_ITEMS:
            raise Unsupported(node, f"{what}: {len(v)} items is too many")
        return list(v)
    raise Unsupported(node, f"{what}: cannot iterate over {v!r}; it must be a constant sequence")


class Reader:
    """Evaluates expressions in `env`; `classes` are the file's module classes, `globs` its
    module-level constants (what a class's `__init__` sees), `depth` the nesting of modules."""

    def __init__(self, env, classes=None, globs=None, depth=0):
        self.env = env
        self.classes = classes or {}
        self.globs = env if globs is None else globs
        self.depth = depth

    def bind_target(self, target, value, node):
        """`x = v` or `a, b = v` into the environment."""
        if isinstance(target, ast.Name):
            self.env[target.id] = value
            return
        if isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in target.elts):
            items = as_items(value, node, "unpacking")
            if len(items) != len(target.elts):
                raise Unsupported(node, f"cannot unpack {len(items)} values into {len(target.elts)} names")
            for e, v in zip(target.elts, items):
                self.env[e.id] = v
            return
        raise Unsupported(node, f"cannot assign to `{ast.unparse(target)}` here")

    def elements(self, nodes):
        """The values of list elements or call arguments, `*X` unpacked."""
        out = []
        for e in nodes:
            if isinstance(e, ast.Starred):
                out.extend(as_items(self.const(e.value), e, f"`{ast.unparse(e)}`"))
            else:
                out.append(self.const(e))
        return out

    def comprehension(self, node):
        """The elements of `[E for X in SEQ if C ...]`, SEQ a constant sequence."""
        results = []

        def walk(gens, env):
            if not gens:
                results.append(Reader(env, self.classes, self.globs, self.depth).const(node.elt))
                return
            g = gens[0]
            if g.is_async:
                raise Unsupported(node, "async comprehensions are not understood")
            inner = Reader(env, self.classes, self.globs, self.depth)
            try:
                seq = inner.const(g.iter)
            except Unsupported as e:
                raise Unsupported(node, "a list comprehension must run over a constant sequence, "
                                  f"so that its length is known: {e}") from None
            for v in as_items(seq, node, "list comprehension"):
                scope = Reader(dict(env), self.classes, self.globs, self.depth)
                scope.bind_target(g.target, v, node)
                if all(scope.const(c) for c in g.ifs):
                    walk(gens[1:], scope.env)

        walk(node.generators, dict(self.env))
        return results

    def call(self, node):
        m = nn_name(node.func)
        if m is not None:
            return self.nn_call(m, node)
        if isinstance(node.func, ast.Name) and node.func.id in self.classes and node.func.id not in self.env:
            if self.depth > 50:
                raise Unsupported(node, "modules nested too deeply (recursive construction?)")
            args = self.elements(node.args)
            kwargs = {k.arg: self.const(k.value) for k in node.keywords if k.arg is not None}
            if any(k.arg is None for k in node.keywords):
                raise Unsupported(node, "`**kwargs` in a module call is not understood")
            return read_class(self.classes[node.func.id], args, kwargs, self.globs,
                              self.classes, self.depth + 1, node)
        name = None
        if isinstance(node.func, ast.Name) and node.func.id not in self.env:
            name = node.func.id
        elif (isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
              and node.func.value.id == "collections" and node.func.attr == "OrderedDict"):
            name = "OrderedDict"
        if name in BUILTINS:
            if any(k.arg is None for k in node.keywords):
                raise Unsupported(node, "`**kwargs` is not understood")
            args = self.elements(node.args)
            kwargs = {k.arg: self.const(k.value) for k in node.keywords}
            if name == "range" and len(range(*args)) > MAX_ITEMS:
                raise Unsupported(node, "range too long")
            v = BUILTINS[name](*args, **kwargs)
            return list(v) if isinstance(v, (zip, enumerate)) else v
        raise Unsupported(node, f"cannot evaluate `{ast.unparse(node)}` statically")

    def nn_call(self, m, node):
        if m == "Parameter":
            if not node.args:
                raise Unsupported(node, "nn.Parameter needs a tensor")
            shape, dtype = self.tensor(node.args[0])
            return Param(shape, dtype, node.lineno)
        if any(k.arg is None for k in node.keywords):
            raise Unsupported(node, f"nn.{m}: `**kwargs` is not understood")
        args = self.elements(node.args)
        kwargs = {k.arg: self.const(k.value) for k in node.keywords}
        if m in PARAM_MODULES:
            sig, rule = PARAM_MODULES[m]
            a = bind(sig, args, kwargs, node, f"nn.{m}")
            try:
                ps, bs = rule(a, node)
            except Unsupported as e:
                raise Unsupported(node, f"nn.{m}: {e}") from None
            mod = Mod(f"nn.{m}", node.lineno)
            for n, s in ps:
                owner = mod
                if "." in n:  # a fixed child, e.g. MultiheadAttention's out_proj
                    child, n = n.split(".", 1)
                    owner = mod.children.setdefault(child, Mod("nn.Linear", node.lineno))
                owner.params[n] = (s, "float", node.lineno)
            for n, s in bs:
                mod.buffers[n] = (s, "float", node.lineno)
            return mod
        if m in PARAMLESS:
            return Mod(f"nn.{m}", node.lineno)
        if m in CONTAINERS:
            mod = Mod(f"nn.{m}", node.lineno, sequence=m != "ModuleDict")
            if kwargs:
                raise Unsupported(node, f"nn.{m} takes no keyword arguments here")
            if m == "Sequential":
                if len(args) == 1 and isinstance(args[0], OrderedDict):
                    for k, v in args[0].items():
                        mod.add_child(str(k), v, node)
                else:
                    for v in args:
                        mod.append(v, node)
                return mod
            if len(args) > 1:
                raise Unsupported(node, f"nn.{m} takes one argument")
            if m == "ModuleList":
                for v in as_items(args[0], node, "nn.ModuleList") if args else []:
                    mod.append(v, node)
            else:
                items = args[0] if args else {}
                if not isinstance(items, dict):
                    raise Unsupported(node, "nn.ModuleDict takes a dict of modules")
                for k, v in items.items():
                    mod.add_child(str(k), v, node)
            return mod
        raise Unsupported(node, f"cannot tell the parameters of `nn.{m}` statically")

    def const(self, node):
        """Evaluates a constant expression (modules and parameters included)."""
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in self.env:
                return self.env[node.id]
            raise Unsupported(node, f"`{node.id}` is not a constant known here")
        if isinstance(node, (ast.Tuple, ast.List)):
            vals = self.elements(node.elts)
            return tuple(vals) if isinstance(node, ast.Tuple) else vals
        if isinstance(node, ast.Dict):
            if any(k is None for k in node.keys):
                raise Unsupported(node, "`**` in a dict is not understood")
            return {self.const(k): self.const(v) for k, v in zip(node.keys, node.values)}
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            return self.comprehension(node)
        if isinstance(node, ast.JoinedStr):  # f"conv{i}"
            parts = []
            for v in node.values:
                if isinstance(v, ast.Constant):
                    parts.append(str(v.value))
                    continue
                x = self.const(v.value)
                x = {115: str, 114: repr, 97: ascii}.get(v.conversion, lambda y: y)(x)
                parts.append(format(x, self.const(v.format_spec) if v.format_spec else ""))
            return "".join(parts)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = self.const(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return not self.const(node.operand)
        if isinstance(node, ast.BinOp):
            a, b = self.const(node.left), self.const(node.right)
            ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
                   ast.FloorDiv: lambda: a // b, ast.Div: lambda: a / b, ast.Pow: lambda: a ** b,
                   ast.Mod: lambda: a % b}
            if type(node.op) in ops:
                return ops[type(node.op)]()
        if isinstance(node, ast.BoolOp):
            v = None
            for e in node.values:
                v = self.const(e)
                if (not v) if isinstance(node.op, ast.And) else v:
                    return v
            return v
        if isinstance(node, ast.Compare):
            left = self.const(node.left)
            for op, right_node in zip(node.ops, node.comparators):
                right = self.const(right_node)
                cmp = {ast.Eq: lambda: left == right, ast.NotEq: lambda: left != right,
                       ast.Lt: lambda: left < right, ast.LtE: lambda: left <= right,
                       ast.Gt: lambda: left > right, ast.GtE: lambda: left >= right,
                       ast.Is: lambda: left is right, ast.IsNot: lambda: left is not right,
                       ast.In: lambda: left in right, ast.NotIn: lambda: left not in right}
                if type(op) not in cmp:
                    raise Unsupported(node, f"cannot evaluate `{ast.unparse(node)}` statically")
                if not cmp[type(op)]():
                    return False
                left = right
            return True
        if isinstance(node, ast.IfExp):
            return self.const(node.body) if self.const(node.test) else self.const(node.orelse)
        if isinstance(node, ast.Subscript):
            base = self.const(node.value)
            if isinstance(base, (Mod, Param)):
                raise Unsupported(node, f"cannot index `{ast.unparse(node.value)}` here")
            if isinstance(node.slice, ast.Slice):
                s = node.slice
                parts = [None if p is None else self.const(p) for p in (s.lower, s.upper, s.step)]
                return base[slice(*parts)]
            return base[self.const(node.slice)]
        if isinstance(node, ast.Call):
            return self.call(node)
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id == "self" and ("self." + node.attr) in self.env):
            return self.env["self." + node.attr]
        raise Unsupported(node, f"cannot evaluate `{ast.unparse(node)}` statically")

    def tensor(self, node):
        """(shape, dtype) of a tensor-making expression."""
        if isinstance(node, ast.Call):
            t = torch_name(node.func)
            if t in TENSOR_MAKERS or t == "full":
                args = [self.const(a) for a in node.args]
                dtype = "float"
                for k in node.keywords:
                    if k.arg == "dtype":
                        dtype = dtype_arg(k.value)
                    else:
                        self.const(k.value)
                if t == "full":
                    shape = shape_of(args[0], node)
                elif len(args) == 1 and isinstance(args[0], (tuple, list)):
                    shape = shape_of(args[0], node)
                else:
                    shape = shape_of(tuple(args), node)
                return shape, dtype
            if t == "randint":
                args = [self.const(a) for a in node.args]
                if len(args) != 3:
                    raise Unsupported(node, "write torch.randint(low, high, shape)")
                dtype = "int64"
                for k in node.keywords:
                    if k.arg == "dtype":
                        dtype = dtype_arg(k.value)
                return shape_of(args[2], node), dtype
            if t in ("tril", "triu") and node.args:
                return self.tensor(node.args[0])
            if t == "tensor":
                v = self.const(node.args[0])
                if isinstance(v, (int, float)):
                    return [], "float" if isinstance(v, float) else "int64"
                return [len(v)], "float"
            if isinstance(node.func, ast.Attribute) and node.func.attr in SAME_SHAPE_METHODS:
                return self.tensor(node.func.value)
            if isinstance(node.func, ast.Attribute) and node.func.attr in ("view", "reshape"):
                base_shape, dtype = self.tensor(node.func.value)
                args = [self.const(a) for a in node.args]
                shape = shape_of(args[0] if len(args) == 1 else tuple(args), node)
                n = 1
                for d in base_shape:
                    n *= d
                if -1 in shape:
                    known = 1
                    for d in shape:
                        known *= d if d != -1 else 1
                    shape = [n // known if d == -1 else d for d in shape]
                return shape, dtype
            conversions = {"int": "int32", "long": "int64", "half": "half", "float": "float", "double": "float"}
            if isinstance(node.func, ast.Attribute) and node.func.attr in conversions:
                return self.tensor(node.func.value)[0], conversions[node.func.attr]
            if isinstance(node.func, ast.Attribute) and node.func.attr == "to" and len(node.args) == 1:
                return self.tensor(node.func.value)[0], dtype_arg(node.args[0])
        if isinstance(node, ast.BinOp):
            for side, other in ((node.left, node.right), (node.right, node.left)):
                try:
                    self.const(other)
                except Unsupported:
                    continue
                return self.tensor(side)
        raise Unsupported(node, f"cannot tell the shape of `{ast.unparse(node)}` statically")


def function(tree, name):
    for n in tree.body:
        if isinstance(n, ast.FunctionDef) and n.name == name:
            return n
    return None


def returned_list(fn, reader):
    """Runs simple local assignments, then returns the elements of `return [...]`."""
    for st in fn.body:
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            reader.env[st.targets[0].id] = reader.const(st.value)
        elif isinstance(st, ast.Return):
            if not isinstance(st.value, (ast.List, ast.Tuple)):
                raise Unsupported(st, f"{fn.name}() must return a list literal")
            return st.value.elts
        elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
            continue
        else:
            raise Unsupported(st, f"{fn.name}(): only constant assignments before `return [...]`")
    raise Unsupported(fn, f"{fn.name}() has no `return [...]`")


EVAL_ERRORS = (Unsupported, TypeError, ValueError, ZeroDivisionError, IndexError, KeyError,
               AttributeError, OverflowError, RecursionError)


def module_constants(tree):
    env = {}
    reader = Reader(env)
    for n in tree.body:
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            try:
                value = reader.const(n.value)
            except EVAL_ERRORS:
                continue
            if not isinstance(value, (Mod, Param)):
                env[n.targets[0].id] = value
    return env


def module_classes(tree):
    """The classes of the file that derive from nn.Module (Model included), by name."""
    return {n.name: n for n in tree.body
            if isinstance(n, ast.ClassDef) and any(nn_name(b) == "Module" for b in n.bases)}


class InitRunner:
    """Runs the statements of one `__init__`, building the module `mod`."""

    def __init__(self, mod, reader):
        self.mod, self.reader = mod, reader

    def assign_self(self, attr, value, node):
        """`self.attr = value`, registered as PyTorch's Module.__setattr__ does: a parameter or
        a module takes the place it already had, None empties it, anything else is a plain
        attribute."""
        mod = self.mod
        slots = (mod.params, mod.buffers, mod.children)
        if isinstance(value, (Param, Mod)):
            mine = mod.params if isinstance(value, Param) else mod.children
            for d in slots:
                if d is not mine:
                    d.pop(attr, None)
            mine[attr] = (value.shape, value.dtype, value.line) if isinstance(value, Param) else value
        elif any(attr in d for d in slots):
            if value is not None:
                raise Unsupported(node, f"`self.{attr}` is a parameter, buffer or module; "
                                  f"it cannot become {value!r}")
            for d in slots:
                if attr in d:
                    d[attr] = None
        self.reader.env["self." + attr] = value

    def method_call(self, call, st):
        """`X.append(v)`, `X.extend(vs)`, `self.add_module(name, m)`, `self.register_buffer(...)`."""
        func, r = call.func, self.reader
        recv = func.value
        if func.attr == "__init__":  # super().__init__(), nn.Module.__init__(self)
            return
        if isinstance(recv, ast.Name) and recv.id == "self":
            if func.attr == "register_buffer":
                name = r.const(call.args[0])
                persistent = True
                for k in call.keywords:
                    if k.arg == "persistent":
                        persistent = r.const(k.value)
                if len(call.args) > 2:
                    persistent = r.const(call.args[2])
                shape, dtype = r.tensor(call.args[1])
                if persistent and dtype != "int64":
                    self.mod.buffers[name] = (shape, dtype, call.lineno)
                return
            if func.attr in ("add_module", "register_module"):
                args = r.elements(call.args) + [r.const(k.value) for k in call.keywords]
                if len(args) != 2 or not isinstance(args[0], str):
                    raise Unsupported(call, f"write self.{func.attr}(\"name\", module)")
                if not isinstance(args[1], Mod):
                    raise Unsupported(call, f"self.{func.attr}: {args[1]!r} is not a module")
                self.assign_self(args[0], args[1], call)
                return
            if func.attr == "register_parameter":
                name, value = r.elements(call.args)
                if value is not None and not isinstance(value, Param):
                    raise Unsupported(call, "register_parameter takes nn.Parameter(...) or None")
                if value is not None:
                    self.assign_self(name, value, call)
                return
        if func.attr in ("append", "extend"):
            target = r.const(recv)
            values = r.elements(call.args)
            if len(values) != 1 or call.keywords:
                raise Unsupported(call, f"`{func.attr}` takes one argument")
            items = values if func.attr == "append" else as_items(values[0], call, "extend")
            if isinstance(target, list):
                target.extend(items)
                return
            if isinstance(target, Mod) and target.sequence:
                for v in items:
                    target.append(v, call)
                return
            raise Unsupported(call, f"cannot {func.attr} to `{ast.unparse(recv)}` ({target!r})")
        raise Unsupported(st, "statement not understood in __init__ (see twin_static.py)")

    def run(self, body):
        r = self.reader
        for st in body:
            if isinstance(st, ast.Pass) or (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant)):
                continue
            if (isinstance(st, ast.Expr) and isinstance(st.value, ast.Call)
                    and isinstance(st.value.func, ast.Attribute)):
                self.method_call(st.value, st)
                continue
            if isinstance(st, ast.Assign):
                message = plain_tensor_attribute(st)
                if message:
                    raise Unsupported(st, message)
                value = r.const(st.value)
                for target in st.targets:
                    if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                            and target.value.id == "self"):
                        self.assign_self(target.attr, value, st)
                    elif isinstance(target, (ast.Name, ast.Tuple, ast.List)):
                        r.bind_target(target, value, st)
                    else:
                        raise Unsupported(st, "only `self.X = ...` and `x = ...` assignments are understood")
                continue
            if isinstance(st, ast.AnnAssign) and st.value is not None and isinstance(st.target, ast.Name):
                r.env[st.target.id] = r.const(st.value)
                continue
            if isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name):
                op = ast.BinOp(left=ast.Name(id=st.target.id, ctx=ast.Load()), op=st.op, right=st.value)
                ast.copy_location(op, st)
                old = r.const(op.left)
                if isinstance(old, list) and isinstance(st.op, ast.Add):
                    old.extend(as_items(r.const(st.value), st, "`+=`"))  # in place, as Python does
                else:
                    r.env[st.target.id] = r.const(op)
                continue
            if isinstance(st, ast.For) and not st.orelse:
                try:
                    seq = r.const(st.iter)
                except Unsupported as e:
                    raise Unsupported(st, f"a `for` loop must run over a constant sequence: {e}") from None
                for v in as_items(seq, st, "for loop"):
                    r.bind_target(st.target, v, st)
                    self.run(st.body)
                continue
            if isinstance(st, ast.If):
                self.run(st.body if r.const(st.test) else st.orelse)
                continue
            if isinstance(st, ast.Assert):
                continue
            raise Unsupported(st, "statement not understood in __init__ (see twin_static.py)")


def read_class(cls, args, kwargs, env, classes, depth, node, what=None):
    """The module `cls(*args, **kwargs)` builds, read from its `__init__`."""
    mod = Mod(cls.name, getattr(node, "lineno", cls.lineno))
    init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    if init is None:
        if args or kwargs:
            raise Unsupported(node, f"`{cls.name}` has no __init__ but is given arguments")
        return mod
    a = init.args
    if a.vararg or a.kwarg or a.posonlyargs:
        raise Unsupported(init, f"{cls.name}.__init__: `*args`, `**kwargs` and `/` are not understood")
    names = [x.arg for x in a.args][1:]
    defaults = [None] * (len(names) - len(a.defaults)) + list(a.defaults)
    local = dict(env)
    reader = Reader(local, classes, env, depth)
    if len(args) > len(names):
        raise Unsupported(init if what else node, (what or f"`{cls.name}(...)`")
                          + f" gives {len(args)} values but __init__ takes {len(names)}")
    given = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names and k not in [x.arg for x in a.kwonlyargs]:
            raise Unsupported(node, f"`{cls.name}(...)`: unknown argument `{k}`")
        given[k] = v
    for i, n in enumerate(names):
        if n in given:
            local[n] = given[n]
        elif defaults[i] is not None:
            local[n] = reader.const(defaults[i])
        elif what:
            raise Unsupported(init, f"__init__ argument `{n}` has no value in {what}")
        else:
            raise Unsupported(node, f"`{cls.name}(...)`: missing argument `{n}`")
    for x, d in zip(a.kwonlyargs, a.kw_defaults):
        if x.arg in given:
            local[x.arg] = given[x.arg]
        elif d is not None:
            local[x.arg] = reader.const(d)
        else:
            raise Unsupported(node, f"`{cls.name}(...)`: missing argument `{x.arg}`")
    InitRunner(mod, reader).run(init.body)
    return mod


def model_params(cls, init_values, env, classes):
    mod = read_class(cls, list(init_values), {}, env, classes, 0, cls, "get_init_inputs()")
    return mod.entries()


# Device independence. A twin runs wherever its inputs are: `model.to(device)` moves parameters
# and buffers, the caller moves the inputs, and nothing else moves. So a tensor the twin makes
# itself must take its device from an input, a parameter or a buffer, and tensors it keeps must
# be parameters or buffers. The checks below are syntactic, over the whole file; every finding
# is an error with its line.

# torch functions that make a new tensor on `device=` (the CPU when it is left out).
FACTORIES = {
    "tensor", "as_tensor", "asarray", "scalar_tensor", "arange", "range", "zeros", "ones", "full",
    "empty", "empty_strided", "eye", "linspace", "logspace", "rand", "randn", "randint",
    "randperm", "tril_indices", "triu_indices", "hann_window", "hamming_window",
    "blackman_window", "bartlett_window", "kaiser_window",
}
# Factories that copy host data (a number or a list) to `device=` on every call: a CUDA graph
# capture refuses the copy, and the GPU comparison times twins in CUDA graphs.
HOST_DATA = {"tensor", "as_tensor", "asarray"}
# Constructors that always make a CPU tensor.
CPU_ONLY = {
    "from_numpy", "Tensor", "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor",
    "LongTensor", "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor",
}
# torch functions whose result is not a tensor (dtype facts, devices, global settings).
NOT_TENSORS = {
    "finfo", "iinfo", "device", "dtype", "Size", "get_default_dtype", "is_tensor",
    "is_floating_point", "promote_types", "result_type", "no_grad", "inference_mode",
    "set_grad_enabled", "manual_seed",
}
# Tensor methods that tie the result to one device.
FIXED_DEVICE_METHODS = {"cpu", "cuda", "numpy"}
LEGAL_DEVICE = ("pass the device of an input, a parameter or a buffer (`device=x.device`), "
                "or make it once in __init__ as a buffer "
                "(`self.register_buffer(\"name\", ..., persistent=False)`)")


def constant_device(node):
    """Whether `node` names one device whatever the inputs: a string, None or
    `torch.device("...")`."""
    if isinstance(node, ast.Constant):
        return True
    return (isinstance(node, ast.Call) and torch_name(node.func) == "device"
            and all(isinstance(a, ast.Constant) for a in node.args))


def tensor_call(node):
    """The first `torch.X(...)` call in `node` that makes a tensor, outside `nn.*(...)` calls
    (whose tensors are parameters); None if there is none."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Call):
            if nn_name(n.func) is not None:
                continue
            name = torch_name(n.func)
            if name is not None and name not in NOT_TENSORS:
                return n
        stack.extend(reversed(list(ast.iter_child_nodes(n))))
    return None


def plain_tensor_attribute(st):
    """The message for `self.X = <a tensor>` in `__init__`, or None."""
    targets = [t.attr for t in st.targets if isinstance(t, ast.Attribute)
               and isinstance(t.value, ast.Name) and t.value.id == "self"]
    made = tensor_call(st.value) if targets else None
    if made is None:
        return None
    return (f"`self.{targets[0]} = {ast.unparse(st.value)}` keeps a tensor as a plain attribute, "
            "which `model.to(device)` leaves on the CPU; register it: "
            f"`self.register_buffer(\"{targets[0]}\", ..., persistent=False)` for a constant "
            "(left out of the state_dict) or `nn.Parameter(...)` for a weight")


def follows_device(call):
    """Whether `call` is `.to(...)` with a device that follows the inputs: `device=` not a
    constant, or a positional `x.device` or name of a device (`device`, `dev`)."""
    if not (isinstance(call.func, ast.Attribute) and call.func.attr == "to"):
        return False
    keyword = next((k.value for k in call.keywords if k.arg == "device"), None)
    if keyword is not None:
        return not constant_device(keyword)
    return any(isinstance(a, ast.Attribute) and a.attr == "device"
               or isinstance(a, ast.Name) and "dev" in a.id for a in call.args[:1])


def moved_factories(root):
    """The factory calls in `root` that a `.to(device)` moves at once, as the original
    PointNet++ does: `torch.arange(B, dtype=torch.long).to(device).view(...)`; methods between
    the two (`.view`, `.float()`) are allowed."""
    moved = set()
    for n in ast.walk(root):
        if isinstance(n, ast.Call) and follows_device(n):
            inner = n.func.value
            while (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute)
                   and torch_name(inner.func) is None):
                inner = inner.func.value
            if isinstance(inner, ast.Call):
                moved.add(id(inner))
    return moved


def call_device_error(call, moved):
    """The message for a call in code that runs in forward() that ties a tensor to a fixed
    device, or None; `moved` are the ids of factory calls moved by a `.to(device)`."""
    text = ast.unparse(call)
    name = torch_name(call.func)
    if name in FACTORIES:
        device = next((k.value for k in call.keywords if k.arg == "device"), None)
        if device is None and id(call) in moved:
            return None
        if device is None:
            return (f"`{text}` makes its tensor on the CPU whatever device the model runs on; "
                    + LEGAL_DEVICE)
        if constant_device(device):
            return f"`{text}` makes its tensor on one fixed device; " + LEGAL_DEVICE
        if name in HOST_DATA:
            return (f"`{text}` copies host data to the device on every call; a CUDA graph "
                    "capture refuses that copy: write `torch.full((), v, device=...)` for a "
                    "number, or make the tensor once in __init__ as a buffer")
        return None
    if name in CPU_ONLY:
        return (f"`{text}` makes a CPU tensor; write `torch.tensor(..., device=x.device)` "
                "with the device of an input, a parameter or a buffer")
    if isinstance(call.func, ast.Attribute) and call.func.attr in FIXED_DEVICE_METHODS:
        return (f"`{text}` ties the computation to one device (`.numpy()` only works on the "
                "CPU); a twin computes in torch on the device of its inputs")
    if isinstance(call.func, ast.Attribute) and call.func.attr == "to":
        targets = list(call.args[:1]) + [k.value for k in call.keywords if k.arg == "device"]
        if any(isinstance(t, ast.Constant) and isinstance(t.value, str) or
               isinstance(t, ast.Call) and torch_name(t.func) == "device" for t in targets):
            return (f"`{text}` moves to one fixed device; a twin computes on the device of its "
                    "inputs (`.to(x.device)` or a dtype only)")
    return None


def device_errors(tree):
    """Everything in the file that would not follow the model to another device, by line:
    - in functions other than `__init__`, `get_inputs` and `get_init_inputs` (forward() and what
      it calls): tensors made without a device taken from an input, parameter or buffer
      (FACTORIES without `device=` or with a constant one, CPU_ONLY constructors), and
      `.cpu()`, `.cuda()`, `.numpy()`, `.to("cpu")`;
    - in `__init__`: tensors kept as plain attributes (`self.X = torch...`);
    - at module and class level: tensors kept in variables (`MASK = torch.tril(...)`)."""
    errors = []

    def scan(node, top):
        if isinstance(node, ast.FunctionDef):
            if top and node.name in ("get_inputs", "get_init_inputs"):
                return
            for st in node.body:
                scan(st, False)
            return
        if isinstance(node, ast.ClassDef):
            for st in node.body:
                if isinstance(st, ast.FunctionDef) and st.name == "__init__":
                    for n in ast.walk(st):
                        message = plain_tensor_attribute(n) if isinstance(n, ast.Assign) else None
                        if message:
                            errors.append((n.lineno, message))
                else:
                    scan(st, True)
            return
        if top:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                made = tensor_call(node.value)
                if made is not None:
                    errors.append((node.lineno, f"`{ast.unparse(made)}` makes a tensor outside "
                                   "the model, which `model.to(device)` leaves on the CPU; make "
                                   "it in __init__ as a buffer (`self.register_buffer(\"name\", "
                                   "..., persistent=False)`) or in forward() with the device of "
                                   "an input (`device=x.device`)"))
            return
        moved = moved_factories(node)
        for n in ast.walk(node):
            message = call_device_error(n, moved) if isinstance(n, ast.Call) else None
            if message:
                errors.append((n.lineno, message))

    for st in tree.body:
        scan(st, True)
    return [{"line": line, "message": m} for line, m in sorted(errors)]


def facts(path):
    out = {"file": path, "errors": [], "inputs": [], "params": [], "init_inputs": []}
    try:
        with open(path, encoding="utf-8") as f:
            src = f.read()
        tree = ast.parse(src, filename=path)
    except (OSError, SyntaxError, UnicodeDecodeError) as e:
        out["errors"].append({"line": getattr(e, "lineno", 0) or 0, "message": str(e)})
        return out
    env = module_constants(tree)
    classes = module_classes(tree)
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model"), None)
    if cls is None:
        out["errors"].append({"line": 0, "message": "no `class Model(nn.Module)`"})
    elif not any(nn_name(b) == "Module" for b in cls.bases):
        out["errors"].append({"line": cls.lineno, "message": "`Model` must derive from nn.Module"})
    elif not any(isinstance(n, ast.FunctionDef) and n.name == "forward" for n in cls.body):
        out["errors"].append({"line": cls.lineno, "message": "`Model` has no forward()"})
    fns = {}
    for name in ("get_inputs", "get_init_inputs"):
        fns[name] = function(tree, name)
        if fns[name] is None:
            out["errors"].append({"line": 0, "message": f"no `def {name}()`"})
    try:
        if fns["get_init_inputs"] is not None:
            reader = Reader(dict(env))
            out["init_inputs"] = [reader.const(e) for e in returned_list(fns["get_init_inputs"], reader)]
            if any(isinstance(v, (Mod, Param)) for v in out["init_inputs"]):
                raise Unsupported(fns["get_init_inputs"], "get_init_inputs() must return constants")
        if fns["get_inputs"] is not None:
            reader = Reader(dict(env))
            for e in returned_list(fns["get_inputs"], reader):
                shape, dtype = reader.tensor(e)
                out["inputs"].append({"shape": shape, "dtype": dtype, "line": e.lineno})
        if cls is not None and fns["get_init_inputs"] is not None:
            for name, shape, dtype, line in model_params(cls, out["init_inputs"], env, classes):
                out["params"].append({"name": name, "shape": shape, "dtype": dtype, "line": line})
    except Unsupported as e:
        out["errors"].append({"line": e.line, "message": str(e)})
    except EVAL_ERRORS as e:
        out["errors"].append({"line": 0, "message": f"cannot evaluate statically: {e}"})
    for e in device_errors(tree):
        if e not in out["errors"]:  # a plain tensor attribute also stops the __init__ reader
            out["errors"].append(e)
    out["errors"].sort(key=lambda e: e["line"])
    return out


def main(paths):
    for p in paths:
        print(json.dumps(facts(p), default=repr), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
