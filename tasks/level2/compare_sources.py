"""Compares Level-2 twins with the modules of their source libraries, weight for weight.

Usage: python3 tasks/level2/compare_sources.py   (needs torch, torchvision, timm and transformers)

Each twin is a flat re-writing of one block of a model. For every twin whose source module can be
built from torchvision, timm or transformers without downloading weights, this script draws the
twin's parameters at random (float64), copies them into the source module (in state_dict order, or
in the key order given below where the twin covers part of a larger module), runs both on the
twin's get_inputs() and compares the outputs. It prints one line per task and exits 1 when any
output differs by more than 1e-9 * (1 + max |output|) (1e-6 where the source computes in float32
whatever the input dtype, as transformers' RMSNorm does) or a module cannot be matched.
"""

import importlib.util
import os
import sys

import timm
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
import transformers
from transformers.models.bert import modeling_bert
from transformers.models.gemma import modeling_gemma
from transformers.models.gpt2 import modeling_gpt2
from transformers.models.llama import modeling_llama
from transformers.models.qwen2 import modeling_qwen2

torch.set_default_dtype(torch.float64)
HERE = os.path.dirname(os.path.abspath(__file__))
tv = torchvision.models


def tm(name):
    return timm.create_model(name, pretrained=False)


class Wrap(nn.Module):
    """A source module applied through `fn`, for twins that cover part of a larger module."""

    def __init__(self, mod, fn):
        super().__init__()
        self.mod = mod
        self.fn = fn

    def forward(self, *args):
        return self.fn(self.mod, *args)


SOURCES = {}


def source(name, build, keys=None, tol=1e-9):
    SOURCES[name] = (build, keys, tol)


# torchvision
source("conv_bn_relu_maxpool_resnet18_stem",
       lambda: (lambda m: nn.Sequential(m.conv1, m.bn1, m.relu, m.maxpool))(tv.resnet18()))
source("basic_block_resnet18_layer1", lambda: tv.resnet18().layer1[0])
source("basic_block_s2_resnet18_layer2", lambda: tv.resnet18().layer2[0])
source("basic_block_s2_resnet18_layer4", lambda: tv.resnet18().layer4[0])
source("bottleneck_resnet50_layer1", lambda: tv.resnet50().layer1[1])
for _name, _i in [("conv_bn_relu6_mobilenetv2_stem", 0), ("dwsep_mobilenetv2_features1", 1),
                  ("inverted_residual_s2_mobilenetv2_features2", 2), ("inverted_residual_mobilenetv2_features3", 3),
                  ("inverted_residual_mobilenetv2_features8", 8), ("inverted_residual_mobilenetv2_features15", 15)]:
    source(_name, lambda i=_i: tv.mobilenet_v2().features[i])
for _name, _i in [("conv_bn_hardswish_mobilenetv3_large_stem", 0),
                  ("inverted_residual_se_s2_mobilenetv3_large_features4", 4),
                  ("inverted_residual_se_hswish_mobilenetv3_large_features12", 12)]:
    source(_name, lambda i=_i: tv.mobilenet_v3_large().features[i])
source("se_hardsigmoid_mobilenetv3_large_features12", lambda: tv.mobilenet_v3_large().features[12].block[2])
source("conv_bn_silu_efficientnet_b0_stem", lambda: tv.efficientnet_b0().features[0])
for _name, _i, _j in [("mbconv1_se_efficientnet_b0_features1", 1, 0), ("mbconv6_se_s2_efficientnet_b0_features2", 2, 0),
                      ("mbconv6_se_k5_efficientnet_b0_features3", 3, 1), ("mbconv6_se_k5_efficientnet_b0_features6", 6, 1)]:
    source(_name, lambda i=_i, j=_j: tv.efficientnet_b0().features[i][j])
source("se_efficientnet_b0_features2", lambda: tv.efficientnet_b0().features[2][0].block[2])
source("fire_squeezenet11_features3", lambda: tv.squeezenet1_1().features[3])
source("maxpool_fire_squeezenet11_features6", lambda: tv.squeezenet1_1().features[5:7])
source("fire_squeezenet11_features10", lambda: tv.squeezenet1_1().features[10])
source("fire_squeezenet11_features12", lambda: tv.squeezenet1_1().features[12])
source("shuffle_unit_s2_shufflenetv2_stage2", lambda: tv.shufflenet_v2_x1_0().stage2[0])
source("shuffle_unit_shufflenetv2_stage2", lambda: tv.shufflenet_v2_x1_0().stage2[1])
source("shuffle_unit_shufflenetv2_stage3", lambda: tv.shufflenet_v2_x1_0().stage3[3])
source("shuffle_unit_s2_shufflenetv2_stage4", lambda: tv.shufflenet_v2_x1_0().stage4[0])
source("convnext_block_convnext_tiny_stage3", lambda: tv.convnext_tiny().features[5][1])
source("convnext_downsample_convnext_tiny_stage2", lambda: tv.convnext_tiny().features[2])
source("patch_stem_layernorm2d_convnext_tiny", lambda: tv.convnext_tiny().features[0])
source("lraspp_head_upsample_mobilenetv3_large",
       lambda: Wrap(tv.segmentation.lraspp_mobilenet_v3_large(weights_backbone=None).classifier,
                    lambda head, low, high: F.interpolate(head({"low": low, "high": high}), size=(320, 320),
                                                          mode="bilinear", align_corners=False)))

# timm
source("dwsep_mobilenetv1_blocks0", lambda: tm("mobilenetv1_100").blocks[0][0])
source("dwsep_s2_mobilenetv1_blocks1", lambda: tm("mobilenetv1_100").blocks[1][0])
for _name, _variant, _stage in [("convnext_block_convnext_atto_stage0", "atto", 0),
                                ("convnext_block_convnext_femto_stage1", "femto", 1),
                                ("convnext_block_convnext_pico_stage2", "pico", 2),
                                ("convnext_block_convnext_nano_stage3", "nano", 3)]:
    source(_name, lambda v=_variant, s=_stage: tm(f"convnext_{v}").stages[s].blocks[0])
source("ghost_module_ghostnet_blocks1", lambda: tm("ghostnet_100").blocks[1][0].ghost1)
source("ghost_bottleneck_ghostnet_blocks2", lambda: tm("ghostnet_100").blocks[2][0])
source("ghost_bottleneck_se_s2_ghostnet_blocks3", lambda: tm("ghostnet_100").blocks[3][0])
source("ghost_bottleneck_se_ghostnet_blocks6", lambda: tm("ghostnet_100").blocks[6][4])
source("se_module_seresnet50_layer1", lambda: tm("seresnet50").layer1[0].se)
source("eca_ecaresnet50d_layer1", lambda: tm("ecaresnet50d").layer1[0].se)
source("attention_deit_tiny", lambda: tm("deit_tiny_patch16_224").blocks[0].attn)
source("mlp_deit_tiny", lambda: tm("deit_tiny_patch16_224").blocks[0].mlp)
source("layernorm_qkv_deit_small",
       lambda: (lambda b: nn.Sequential(b.norm1, b.attn.qkv))(tm("deit_small_patch16_224").blocks[0]))
source("attention_residual_dinov2_small",
       lambda: Wrap(tm("vit_small_patch14_dinov2").blocks[0], lambda b, x: x + b.ls1(b.attn(b.norm1(x)))),
       ["mod.ls1.gamma", "mod.norm1.weight", "mod.norm1.bias", "mod.attn.qkv.weight", "mod.attn.qkv.bias",
        "mod.attn.proj.weight", "mod.attn.proj.bias"])
source("mlp_residual_dinov2_small",
       lambda: Wrap(tm("vit_small_patch14_dinov2").blocks[0], lambda b, x: x + b.ls2(b.mlp(b.norm2(x)))),
       ["mod.ls2.gamma", "mod.norm2.weight", "mod.norm2.bias", "mod.mlp.fc1.weight", "mod.mlp.fc1.bias",
        "mod.mlp.fc2.weight", "mod.mlp.fc2.bias"])
source("layerscale_add_layernorm_dinov2_small",
       lambda: Wrap(tm("vit_small_patch14_dinov2").blocks[0],
                    lambda b, x, a: (x + b.ls1(a), b.norm2(x + b.ls1(a)))),
       ["mod.ls1.gamma", "mod.norm2.weight", "mod.norm2.bias"])
source("patch_embed_cls_pos_deit_tiny",
       lambda: Wrap(tm("deit_tiny_patch16_224"), lambda m, x: m._pos_embed(m.patch_embed(x))),
       ["mod.cls_token", "mod.pos_embed", "mod.patch_embed.proj.weight", "mod.patch_embed.proj.bias"])
source("patch_embed_pos_siglip_base",
       lambda: Wrap(tm("vit_base_patch16_siglip_224"), lambda m, x: m._pos_embed(m.patch_embed(x))),
       ["mod.pos_embed", "mod.patch_embed.proj.weight", "mod.patch_embed.proj.bias"])
source("patch_embed_norm_swin_tiny", lambda: tm("swin_tiny_patch4_window7_224").patch_embed)
source("patch_merging_swin_tiny", lambda: tm("swin_tiny_patch4_window7_224").layers[1].downsample)
source("mobilevit_block_xxs_stage4", lambda: tm("mobilevit_xxs").stages[4][1])
source("mobilevit_block_xxs_stage3", lambda: tm("mobilevit_xxs").stages[3][1])
source("mobilevit_block_xs_stage4", lambda: tm("mobilevit_xs").stages[4][1])

# transformers (configurations of the named checkpoints, eager attention)
QWEN = transformers.Qwen2Config(hidden_size=896, intermediate_size=4864, num_attention_heads=14,
                                num_key_value_heads=2, rms_norm_eps=1e-6, attn_implementation="eager")
LLAMA_1B = transformers.LlamaConfig(hidden_size=2048, intermediate_size=8192, num_attention_heads=32,
                                    num_key_value_heads=8, head_dim=64, rms_norm_eps=1e-5, attn_implementation="eager")
SMOL_135M = transformers.LlamaConfig(hidden_size=576, intermediate_size=1536, num_attention_heads=9,
                                     num_key_value_heads=3, head_dim=64, attn_implementation="eager")
LLAMA3_ROPE = {"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
               "original_max_position_embeddings": 8192, "rope_theta": 500000.0}
LLAMA_1B_ROPE = transformers.LlamaConfig(hidden_size=2048, num_attention_heads=32, head_dim=64, rope_theta=500000.0,
                                         rope_scaling=LLAMA3_ROPE, max_position_embeddings=131072)
SMOL_360M = transformers.LlamaConfig(hidden_size=960, intermediate_size=2560, num_attention_heads=15,
                                     num_key_value_heads=5, head_dim=64, attn_implementation="eager")
MINILM = transformers.BertConfig(hidden_size=384, num_attention_heads=12, intermediate_size=1536,
                                 layer_norm_eps=1e-12, attn_implementation="eager")


# transformers' RMSNorm casts to float32 and back: in a float64 run it rounds to float32.
F32 = 1e-6
# transformers computes rotary tables in float32 whatever the dtype (angles up to 255 rad).
F32_ROPE = 1e-4


def causal_prefill(attn, h, cos, sin):
    q_len = h.shape[1]
    mask = torch.full((q_len, q_len), torch.finfo(h.dtype).min).triu(1)[None, None]
    return attn(h, position_embeddings=(cos, sin), attention_mask=mask)[0]


def rotary(rotary_emb, apply, q, k):
    cos, sin = rotary_emb(q, torch.arange(q.shape[2])[None, :])
    return apply(q, k, cos, sin)


def decode_step(attn, h, cos, sin, past_key, past_value):
    cache = transformers.DynamicCache()
    cache.update(past_key, past_value, 0)
    return attn(h, position_embeddings=(cos, sin), attention_mask=None, past_key_values=cache)[0]


source("swiglu_mlp_decode_qwen2_05b", lambda: modeling_qwen2.Qwen2MLP(QWEN))
source("swiglu_mlp_qwen2_05b_spec8", lambda: modeling_qwen2.Qwen2MLP(QWEN))
source("swiglu_mlp_smollm2_135m", lambda: modeling_llama.LlamaMLP(SMOL_135M))
source("mlp_gelu_tanh_gpt2_decode", lambda: modeling_gpt2.GPT2MLP(3072, transformers.GPT2Config()))
source("attention_output_minilm_l6",
       lambda: Wrap(modeling_bert.BertAttention(MINILM), lambda m, h: m(h)[0]))
source("ffn_output_minilm_l6",
       lambda: Wrap(nn.ModuleList([modeling_bert.BertIntermediate(MINILM), modeling_bert.BertOutput(MINILM)]),
                    lambda m, a: m[1](m[0](a), a)))
source("add_rmsnorm_qwen2_05b",
       lambda: Wrap(modeling_qwen2.Qwen2RMSNorm(896, eps=1e-6), lambda n, h, r: (n(r + h), r + h)), tol=F32)
source("add_rmsnorm_llama32_1b",
       lambda: Wrap(modeling_llama.LlamaRMSNorm(2048, eps=1e-5), lambda n, h, r: (n(r + h), r + h)), tol=F32)
source("add_gemma_rmsnorm_gemma_2b",
       lambda: Wrap(modeling_gemma.GemmaRMSNorm(2048, eps=1e-6), lambda n, h, r: (n(r + h), r + h)))
source("rmsnorm_qkv_qwen2_05b",
       lambda: Wrap(nn.ModuleList([modeling_qwen2.Qwen2RMSNorm(896, eps=1e-6), modeling_qwen2.Qwen2Attention(QWEN, 0)]),
                    lambda m, h: (lambda n: (m[1].q_proj(n), m[1].k_proj(n), m[1].v_proj(n)))(m[0](h))),
       ["mod.0.weight", "mod.1.q_proj.weight", "mod.1.q_proj.bias", "mod.1.k_proj.weight", "mod.1.k_proj.bias",
        "mod.1.v_proj.weight", "mod.1.v_proj.bias"], tol=F32)
source("rmsnorm_qkv_decode_llama32_1b",
       lambda: Wrap(nn.ModuleList([modeling_llama.LlamaRMSNorm(2048, eps=1e-5), modeling_llama.LlamaAttention(LLAMA_1B, 0)]),
                    lambda m, h: (lambda n: (m[1].q_proj(n), m[1].k_proj(n), m[1].v_proj(n)))(m[0](h))),
       ["mod.0.weight", "mod.1.q_proj.weight", "mod.1.k_proj.weight", "mod.1.v_proj.weight"], tol=F32)
source("rmsnorm_gate_up_decode_qwen2_05b",
       lambda: Wrap(nn.ModuleList([modeling_qwen2.Qwen2RMSNorm(896, eps=1e-6), modeling_qwen2.Qwen2MLP(QWEN)]),
                    lambda m, h: (lambda n: m[1].act_fn(m[1].gate_proj(n)) * m[1].up_proj(n))(m[0](h))),
       ["mod.0.weight", "mod.1.gate_proj.weight", "mod.1.up_proj.weight"], tol=F32)
source("gqa_decode_step_qwen2_05b", lambda: Wrap(modeling_qwen2.Qwen2Attention(QWEN, 0), decode_step))
source("gqa_decode_step_llama32_1b", lambda: Wrap(modeling_llama.LlamaAttention(LLAMA_1B, 0), decode_step))
source("gqa_decode_step_smollm2_360m", lambda: Wrap(modeling_llama.LlamaAttention(SMOL_360M, 0), decode_step))
source("gqa_prefill_causal_smollm2_135m", lambda: Wrap(modeling_llama.LlamaAttention(SMOL_135M, 0), causal_prefill))
source("rope_tables_qwen2_05b",
       lambda: Wrap(modeling_qwen2.Qwen2RotaryEmbedding(transformers.Qwen2Config(rope_theta=1000000.0, hidden_size=896,
                                                                                 num_attention_heads=14)),
                    lambda m, q, k: rotary(m, modeling_qwen2.apply_rotary_pos_emb, q, k)), tol=F32_ROPE)
source("rope_llama3_scaled_llama32_1b",
       lambda: Wrap(modeling_llama.LlamaRotaryEmbedding(LLAMA_1B_ROPE),
                    lambda m, q, k: rotary(m, modeling_llama.apply_rotary_pos_emb, q, k)), tol=F32_ROPE)
source("bert_embeddings_minilm_l6", lambda: modeling_bert.BertEmbeddings(MINILM))
source("gqa_decode_attention_llama32_1b",
       lambda: Wrap(modeling_llama.LlamaAttention(LLAMA_1B, 0).eval(),
                    lambda m, q, k, v: modeling_llama.eager_attention_forward(m, q, k, v, None, scaling=0.125)[0]
                    .transpose(1, 2)),
       [])


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
        else:
            out[k] = torch.randn(v.shape, generator=g) * 0.2
    return out


def compare(name, build, keys):
    twin = load_twin(name)
    model = twin.Model(*twin.get_init_inputs()).eval()
    state = randomize(model.state_dict())
    model.load_state_dict(state)
    ref = build().eval().double()
    ref_state = ref.state_dict()
    ref_keys = [k for k, v in ref_state.items() if v.is_floating_point()] if keys is None else keys
    twin_keys = [k for k, v in state.items() if v.is_floating_point()]
    if len(ref_keys) != len(twin_keys):
        raise ValueError(f"the twin has {len(twin_keys)} parameters, the source module {len(ref_keys)}")
    for a, b in zip(twin_keys, ref_keys):
        if state[a].shape != ref_state[b].shape:
            raise ValueError(f"`{a}` {list(state[a].shape)} against `{b}` {list(ref_state[b].shape)}")
        ref_state[b] = state[a].clone()
    ref.load_state_dict(ref_state)
    torch.manual_seed(1)
    xs = [x.double() if x.is_floating_point() else x for x in twin.get_inputs()]
    with torch.no_grad():
        got = model(*[x.clone() for x in xs])
        want = ref(*[x.clone() for x in xs])
    got = got if isinstance(got, (tuple, list)) else (got,)
    want = want if isinstance(want, (tuple, list)) else (want,)
    if [a.shape for a in got] != [b.shape for b in want]:
        raise ValueError(f"output shapes {[list(a.shape) for a in got]} against {[list(b.shape) for b in want]}")
    diff = max(float((a - b).abs().max()) for a, b in zip(got, want))
    mag = max(float(a.abs().max()) for a in got)
    return diff, mag


def main():
    failed = 0
    for name, (build, keys, tol) in SOURCES.items():
        try:
            diff, mag = compare(name, build, keys)
            ok = diff <= tol * (1 + mag)
            print(f"{'ok  ' if ok else 'DIFF'} {name}: max difference {diff:.3e} (max |output| {mag:.3e})")
        except Exception as e:  # a source module that cannot be matched is a failure, not a crash
            ok = False
            print(f"FAIL {name}: {type(e).__name__}: {str(e)[:300]}")
        failed += not ok
    print(f"{len(SOURCES) - failed} of {len(SOURCES)} twins agree with their source modules")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
