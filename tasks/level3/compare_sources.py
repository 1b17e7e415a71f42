"""Compares Level-3 twins with the models of their source libraries, weight for weight.

Usage: python3 tasks/level3/compare_sources.py [NAME...]   (needs torch, torchvision, timm, transformers)

Each twin is a flat re-writing of a whole model (or of a model's decoder layers). For every twin
whose source model can be built from torchvision, timm or transformers without downloading
weights, this script draws the twin's parameters at random (float64), copies each into the source
model's state_dict entry of the same name (the twin's names are the source's with `_` for `.`;
a source entry the twin does not use, such as an unused embedding table, is left as built), runs
both on the twin's get_inputs() and compares the outputs. It prints one line per task and exits 1
when an output differs by more than tol * (1 + max |output|) or a model cannot be matched.
Models of other repositories (ultralytics, NanoDet, OpenPCDet, Keras references, ...) are checked
against the graph by check_twins.py only.
"""

import importlib.util
import os
import sys

import timm
import torch
import torch.nn as nn
import torchvision
import transformers
from transformers.models.wav2vec2 import modeling_wav2vec2

torch.set_default_dtype(torch.float64)
HERE = os.path.dirname(os.path.abspath(__file__))
tv = torchvision.models

SOURCES = {}


def source(name, build, out=lambda r: r, src_prefix="", tol=1e-9):
    """`src_prefix` is added to the source's keys before matching ("-h.0." removes "h.0.")."""
    SOURCES[name] = (build, out, src_prefix, tol)


def tm(name, **kw):
    return timm.create_model(name, pretrained=False, **kw)


class Wav2Vec2Front(nn.Module):
    def __init__(self):
        super().__init__()
        cfg = transformers.Wav2Vec2Config()
        self.feature_extractor = modeling_wav2vec2.Wav2Vec2FeatureEncoder(cfg)
        self.feature_projection = modeling_wav2vec2.Wav2Vec2FeatureProjection(cfg)

    def forward(self, x):
        h = self.feature_extractor(x).transpose(1, 2)
        return self.feature_projection(h)[0]


def decoder_stack(model):
    """A transformers base model whose final norm is removed: the decoder layers alone."""
    model.norm = nn.Identity()
    return model


def gpt2_block():
    m = transformers.GPT2Model(transformers.GPT2Config(n_layer=1, vocab_size=16, n_positions=64,
                                                       attn_implementation="eager"))
    m.ln_f = nn.Identity()
    return m


# torchvision
source("mobilenet_v2_224", lambda: tv.mobilenet_v2())
source("mobilenet_v3_large_224", lambda: tv.mobilenet_v3_large())
source("mobilenet_v3_small_224", lambda: tv.mobilenet_v3_small())
source("resnet18_112", lambda: tv.resnet18())
source("squeezenet1_1_224", lambda: tv.squeezenet1_1())
source("shufflenet_v2_x1_0_224", lambda: tv.shufflenet_v2_x1_0())
source("efficientnet_b0_224", lambda: tv.efficientnet_b0())
source("regnet_x_400mf_160", lambda: tv.regnet_x_400mf())
source("mnasnet1_0_224", lambda: tv.mnasnet1_0())
source("lraspp_mobilenet_v3_large_224",
       lambda: tv.segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None), lambda r: r["out"])
# timm
source("efficientnet_lite0_224", lambda: tm("efficientnet_lite0"))
source("convnext_atto_160", lambda: tm("convnext_atto"))
source("ghostnet_100_224", lambda: tm("ghostnet_100"))
source("mobilenet_v1_160", lambda: tm("mobilenetv1_100"))
source("deit_tiny_112", lambda: tm("deit_tiny_patch16_224", img_size=112))
# transformers (configurations of the named checkpoints, eager attention). Their RMSNorm and rotary
# tables compute in float32 whatever the dtype, hence the looser bound.
F32_ROPE = 1e-4
source("llama_smollm2_135m_2layers_s64",
       lambda: decoder_stack(transformers.LlamaModel(transformers.LlamaConfig(
           hidden_size=576, intermediate_size=1536, num_attention_heads=9, num_key_value_heads=3, head_dim=64,
           rms_norm_eps=1e-5, rope_theta=100000.0, num_hidden_layers=2, vocab_size=16,
           attn_implementation="eager"))), lambda r: r.last_hidden_state, "model.", F32_ROPE)
source("qwen2_05b_layer_s32",
       lambda: decoder_stack(transformers.Qwen2Model(transformers.Qwen2Config(
           hidden_size=896, intermediate_size=4864, num_attention_heads=14, num_key_value_heads=2,
           rms_norm_eps=1e-6, rope_theta=1000000.0, num_hidden_layers=1, vocab_size=16,
           attn_implementation="eager"))), lambda r: r.last_hidden_state, "model.", F32_ROPE)
source("mistral_layer_reduced_s32",
       lambda: decoder_stack(transformers.MistralModel(transformers.MistralConfig(
           hidden_size=1024, intermediate_size=3584, num_attention_heads=8, num_key_value_heads=2, head_dim=128,
           rms_norm_eps=1e-5, rope_theta=1000000.0, sliding_window=4096, num_hidden_layers=1, vocab_size=16,
           attn_implementation="eager"))), lambda r: r.last_hidden_state, "model.", F32_ROPE)
source("phi3_layer_reduced_s32",
       lambda: decoder_stack(transformers.Phi3Model(transformers.Phi3Config(
           hidden_size=768, intermediate_size=2048, num_attention_heads=8, num_key_value_heads=8,
           rms_norm_eps=1e-5, rope_theta=10000.0, num_hidden_layers=1, vocab_size=16, pad_token_id=0,
           bos_token_id=1, eos_token_id=2, attn_implementation="eager"))),
       lambda r: r.last_hidden_state, "model.", F32_ROPE)
source("gpt2_block_s64", gpt2_block, lambda r: r.last_hidden_state, "-h.0.", 1e-9)
source("tinybert_4l_312d_s64",
       lambda: transformers.BertModel(transformers.BertConfig(
           vocab_size=30522, hidden_size=312, num_hidden_layers=4, num_attention_heads=12, intermediate_size=1200,
           layer_norm_eps=1e-12, attn_implementation="eager")),
       lambda r: (r.last_hidden_state, r.pooler_output))
source("wav2vec2_feature_encoder_2000", Wav2Vec2Front)


def norm(key):
    return key.replace(".", "_").replace("-", "_")


def load_twin(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def randomize(state):
    """Random float64 values of the state's shapes (positive running variances)."""
    g = torch.Generator().manual_seed(0)
    out = {}
    for k, v in state.items():
        if not v.is_floating_point():
            out[k] = v
        elif k.endswith("running_var"):
            out[k] = torch.rand(v.shape, generator=g) * 1.5 + 0.5
        elif k.endswith("running_mean"):
            out[k] = torch.randn(v.shape, generator=g) * 0.2
        elif k.endswith("weight") and v.dim() == 1:
            out[k] = 1 + torch.randn(v.shape, generator=g) * 0.2
        else:
            fan_in = max(1, v[0].numel()) if v.dim() > 1 else 1
            out[k] = torch.randn(v.shape, generator=g) / fan_in ** 0.5
    return out


def compare(name, build, out, src_prefix):
    twin = load_twin(name)
    model = twin.Model(*twin.get_init_inputs()).eval()
    state = randomize(model.state_dict())
    model.load_state_dict(state)
    ref = build().eval().double()
    ref_state = ref.state_dict()
    def key(k):
        if src_prefix.startswith("-"):
            return norm(k[len(src_prefix) - 1:] if k.startswith(src_prefix[1:]) else k)
        return norm(src_prefix + k)

    by_name = {key(k): k for k, v in ref_state.items() if v.is_floating_point()}
    missing = []
    for k, v in state.items():
        if not v.is_floating_point():
            continue
        sk = by_name.pop(norm(k), None)
        if sk is None:
            missing.append(k)
            continue
        if ref_state[sk].shape != v.shape:
            raise ValueError(f"`{k}` {list(v.shape)} against `{sk}` {list(ref_state[sk].shape)}")
        ref_state[sk] = v.clone()
    if missing:
        raise ValueError(f"twin entries without a source entry: {missing[:8]}")
    if name == "gpt2_block_s64":
        ref_state["wpe.weight"] = torch.zeros_like(ref_state["wpe.weight"])
    ref.load_state_dict(ref_state)
    torch.manual_seed(1)
    xs = [x.double() if x.is_floating_point() else x for x in twin.get_inputs()]
    with torch.no_grad():
        got = model(*[x.clone() for x in xs])
        if name.startswith(("llama", "qwen2", "mistral", "phi3", "gpt2")):
            want = out(ref(inputs_embeds=xs[0].clone()))
        elif name.startswith("tinybert"):
            want = out(ref(input_ids=xs[0].clone(), token_type_ids=xs[1].clone()))
        else:
            want = out(ref(*[x.clone() for x in xs]))
    got = got if isinstance(got, (tuple, list)) else (got,)
    want = want if isinstance(want, (tuple, list)) else (want,)
    if [a.shape for a in got] != [b.shape for b in want]:
        raise ValueError(f"output shapes {[list(a.shape) for a in got]} against {[list(b.shape) for b in want]}")
    diff = max(float((a - b).abs().max()) for a, b in zip(got, want))
    mag = max(float(a.abs().max()) for a in got)
    return diff, mag, sorted(by_name.values())


def main(names):
    failed = 0
    todo = {n: SOURCES[n] for n in (names or SOURCES)}
    for name, (build, out, src_prefix, tol) in todo.items():
        try:
            diff, mag, unused = compare(name, build, out, src_prefix)
            ok = diff <= tol * (1 + mag)
            extra = f"; source entries not in the twin: {len(unused)} ({', '.join(unused[:4])})" if unused else ""
            print(f"{'ok  ' if ok else 'DIFF'} {name}: max difference {diff:.3e} (max |output| {mag:.3e}){extra}")
        except Exception as e:  # a source model that cannot be matched is a failure, not a crash
            ok = False
            print(f"FAIL {name}: {type(e).__name__}: {str(e)[:400]}")
        failed += not ok
    print(f"{len(todo) - failed} of {len(todo)} twins agree with their source models")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main(sys.argv[1:])
