"""Static facts about PyTorch twins, read with `ast` (no torch needed).

Usage: python3 twin_static.py TWIN.py...   (or the script on stdin: python3 - TWIN.py...)

For each file, prints one JSON object per line on stdout:
  {"file": ..., "errors": [{"line": N, "message": ...}],
   "inputs": [{"shape": [...], "dtype": "float"|"int", "line": N}],
   "params": [{"name": "conv.weight", "shape": [...], "line": N}],
   "init_inputs": [...]}

`inputs` are the tensors `get_inputs()` returns, in order. `params` are the floating-point
entries of `Model(*get_init_inputs()).state_dict()` in state_dict order (a module's own
parameters, then its own buffers, then each child module in registration order), worked out
from the constructors in `Model.__init__`. Anything the reader cannot follow is an error with
its line, never a guess: twins keep to the constructs below.

Understood in `__init__`: `super().__init__()`; `self.X = nn.M(...)` for the modules in
PARAM_MODULES (shapes from their arguments) and PARAMLESS; `self.X = nn.Parameter(T)`;
`self.register_buffer("X", T[, persistent=True])`; `self.X = CONSTANT` and local
`x = CONSTANT`; T one of `torch.{rand,randn,zeros,ones,empty}(shape)`, `torch.full(shape, v)`,
`torch.tensor(number or list)`, optionally followed by `.view(shape)`, `.uniform_(...)`-style
methods or arithmetic with numbers. Constants are numbers, strings, booleans, None, tuples and lists of them,
arithmetic on them, and names bound earlier (module level, `__init__` arguments, locals).
"""

import ast
import json
import sys

PARAMLESS = {
    "ReLU", "ReLU6", "LeakyReLU", "GELU", "SiLU", "Sigmoid", "Tanh", "Hardswish", "Hardsigmoid",
    "Softplus", "ELU", "Mish", "Softmax", "LogSoftmax", "MaxPool2d", "AvgPool2d",
    "AdaptiveAvgPool2d", "AdaptiveMaxPool2d", "Identity", "PixelShuffle", "PixelUnshuffle",
    "ChannelShuffle", "Flatten", "Unflatten", "ZeroPad2d", "ConstantPad2d", "ReflectionPad2d",
    "ReplicationPad2d", "Dropout", "Upsample",
}


class Unsupported(Exception):
    def __init__(self, node, message):
        super().__init__(message)
        self.line = getattr(node, "lineno", 0)


def pair(v, node):
    if isinstance(v, int):
        return (v, v)
    if isinstance(v, (tuple, list)) and len(v) == 2 and all(isinstance(x, int) for x in v):
        return tuple(v)
    raise Unsupported(node, f"expected an int or a pair of ints, found {v!r}")


def shape_of(v, node):
    if isinstance(v, int):
        return [v]
    if isinstance(v, (tuple, list)) and all(isinstance(x, int) for x in v):
        return list(v)
    raise Unsupported(node, f"expected a shape (int or tuple of ints), found {v!r}")


def bind(sig, args, kwargs, node, name):
    """Binds call arguments to a signature [(name, default or REQUIRED)]."""
    out = {}
    if len(args) > len(sig):
        raise Unsupported(node, f"nn.{name}: too many positional arguments")
    for (pname, _), v in zip(sig, args):
        out[pname] = v
    for k, v in kwargs.items():
        if k not in dict(sig):
            raise Unsupported(node, f"nn.{name}: unknown argument `{k}`")
        out[k] = v
    for pname, default in sig:
        if pname not in out:
            if default is REQUIRED:
                raise Unsupported(node, f"nn.{name}: missing argument `{pname}`")
            out[pname] = default
    return out


REQUIRED = object()


def conv2d(a, node):
    kh, kw = pair(a["kernel_size"], node)
    w = [a["out_channels"], a["in_channels"] // a["groups"], kh, kw]
    params = [("weight", w)] + ([("bias", [a["out_channels"]])] if a["bias"] else [])
    return params, []


def linear(a, node):
    params = [("weight", [a["out_features"], a["in_features"]])]
    if a["bias"]:
        params.append(("bias", [a["out_features"]]))
    return params, []


def batchnorm(a, node):
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


CONV_SIG = [("in_channels", REQUIRED), ("out_channels", REQUIRED), ("kernel_size", REQUIRED),
            ("stride", 1), ("padding", 0), ("dilation", 1), ("groups", 1), ("bias", True),
            ("padding_mode", "zeros")]
BN_SIG = [("num_features", REQUIRED), ("eps", 1e-5), ("momentum", 0.1), ("affine", True),
          ("track_running_stats", True)]
PARAM_MODULES = {
    "Conv2d": (CONV_SIG, conv2d),
    "Linear": ([("in_features", REQUIRED), ("out_features", REQUIRED), ("bias", True)], linear),
    "BatchNorm2d": (BN_SIG, batchnorm),
    "BatchNorm1d": (BN_SIG, batchnorm),
    "LayerNorm": ([("normalized_shape", REQUIRED), ("eps", 1e-5), ("elementwise_affine", True),
                   ("bias", True)], layernorm),
    "RMSNorm": ([("normalized_shape", REQUIRED), ("eps", None), ("elementwise_affine", True)],
                rmsnorm),
    "GroupNorm": ([("num_groups", REQUIRED), ("num_channels", REQUIRED), ("eps", 1e-5),
                   ("affine", True)], groupnorm),
    "PReLU": ([("num_parameters", 1), ("init", 0.25)], prelu),
}

INT_DTYPES = {"int8", "uint8", "int16", "int32", "int64", "int", "long"}
TENSOR_MAKERS = {"rand", "randn", "zeros", "ones", "empty"}
SAME_SHAPE_METHODS = {"uniform_", "normal_", "abs", "abs_", "float", "clamp", "clamp_", "add_",
                      "mul_", "exp", "sqrt", "contiguous", "clone"}


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


class Reader:
    def __init__(self, env):
        self.env = env

    def const(self, node):
        """Evaluates a constant expression."""
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in self.env:
                return self.env[node.id]
            raise Unsupported(node, f"`{node.id}` is not a constant known here")
        if isinstance(node, (ast.Tuple, ast.List)):
            vals = [self.const(e) for e in node.elts]
            return tuple(vals) if isinstance(node, ast.Tuple) else vals
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = self.const(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp):
            a, b = self.const(node.left), self.const(node.right)
            ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
                   ast.FloorDiv: lambda: a // b, ast.Div: lambda: a / b, ast.Pow: lambda: a ** b,
                   ast.Mod: lambda: a % b}
            if type(node.op) in ops:
                return ops[type(node.op)]()
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
                        name = k.value.attr if isinstance(k.value, ast.Attribute) else ""
                        dtype = "int" if name in INT_DTYPES else "float"
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
                return shape_of(args[2], node), "int"
            if t == "tensor":
                v = self.const(node.args[0])
                if isinstance(v, (int, float)):
                    return [], "float" if isinstance(v, float) else "int"
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
            if isinstance(node.func, ast.Attribute) and node.func.attr in ("int", "long"):
                return self.tensor(node.func.value)[0], "int"
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


def module_constants(tree):
    env = {}
    reader = Reader(env)
    for n in tree.body:
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            try:
                env[n.targets[0].id] = reader.const(n.value)
            except Unsupported:
                pass
    return env


def model_params(cls, init_values, env):
    init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    own_params, own_buffers, children = [], [], []
    if init is None:
        return []
    args = init.args
    names = [a.arg for a in args.args][1:]
    defaults = [None] * (len(names) - len(args.defaults)) + list(args.defaults)
    local = dict(env)
    reader = Reader(local)
    if len(init_values) > len(names):
        raise Unsupported(init, f"get_init_inputs() gives {len(init_values)} values but __init__ takes {len(names)}")
    for i, n in enumerate(names):
        if i < len(init_values):
            local[n] = init_values[i]
        elif defaults[i] is not None:
            local[n] = reader.const(defaults[i])
        else:
            raise Unsupported(init, f"__init__ argument `{n}` has no value in get_init_inputs()")
    for st in init.body:
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
            continue
        if (isinstance(st, ast.Expr) and isinstance(st.value, ast.Call)
                and isinstance(st.value.func, ast.Attribute) and st.value.func.attr == "__init__"):
            continue
        if (isinstance(st, ast.Expr) and isinstance(st.value, ast.Call)
                and isinstance(st.value.func, ast.Attribute) and st.value.func.attr == "register_buffer"):
            call = st.value
            name = reader.const(call.args[0])
            persistent = True
            for k in call.keywords:
                if k.arg == "persistent":
                    persistent = reader.const(k.value)
            shape, dtype = reader.tensor(call.args[1])
            if persistent and dtype == "float":
                own_buffers.append((name, shape, st.lineno))
            continue
        if isinstance(st, ast.Assign) and len(st.targets) == 1:
            target = st.targets[0]
            value = st.value
            if isinstance(target, ast.Name):
                local[target.id] = reader.const(value)
                continue
            if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                    and target.value.id == "self"):
                raise Unsupported(st, "only `self.X = ...` and `x = ...` assignments are understood")
            attr = target.attr
            if isinstance(value, ast.Call):
                m = nn_name(value.func)
                if m == "Parameter":
                    shape, _ = reader.tensor(value.args[0])
                    own_params.append((attr, shape, st.lineno))
                    continue
                if m in PARAM_MODULES:
                    sig, rule = PARAM_MODULES[m]
                    a = bind(sig, [reader.const(x) for x in value.args],
                             {k.arg: reader.const(k.value) for k in value.keywords}, value, m)
                    ps, bs = rule(a, value)
                    children.append([(f"{attr}.{n}", s, st.lineno) for n, s in ps + bs])
                    continue
                if m in PARAMLESS:
                    for x in list(value.args) + [k.value for k in value.keywords]:
                        reader.const(x)
                    continue
                if m is not None:
                    raise Unsupported(value, f"cannot tell the parameters of `nn.{m}` statically")
            local["self." + attr] = reader.const(value)
            continue
        raise Unsupported(st, "statement not understood in __init__ (see twin_static.py)")
    flat = [(n, s, l) for n, s, l in own_params + own_buffers]
    for c in children:
        flat.extend(c)
    return flat


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
        if fns["get_inputs"] is not None:
            reader = Reader(dict(env))
            for e in returned_list(fns["get_inputs"], reader):
                shape, dtype = reader.tensor(e)
                out["inputs"].append({"shape": shape, "dtype": dtype, "line": e.lineno})
        if cls is not None and fns["get_init_inputs"] is not None:
            for name, shape, line in model_params(cls, out["init_inputs"], env):
                out["params"].append({"name": name, "shape": shape, "line": line})
    except Unsupported as e:
        out["errors"].append({"line": e.line, "message": str(e)})
    except (TypeError, ValueError, ZeroDivisionError, IndexError, KeyError) as e:
        out["errors"].append({"line": 0, "message": f"cannot evaluate statically: {e}"})
    return out


def main(paths):
    for p in paths:
        print(json.dumps(facts(p)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
