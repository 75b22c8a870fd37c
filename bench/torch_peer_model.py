"""The decoder of docs/SPEC.md written for speed in plain PyTorch 1.13 (CPU), for the training peer.

Same model and parameter count as tools/oracle/model.py (which is written for clarity and
writes the golden fixtures); `check_against_oracle` proves that both give the same loss and
gradients before the peer times anything. What a PyTorch user would do for speed, and no more:
- one GEMM for the q/k/v (and diff2 lambda) projections and one for gate/up: the weights are
  stored concatenated ([q; k; v], [gate; up]), which is the same function and the same parameters;
- the softmax scale folded into the queries, the mask applied in place, and grouped-query
  heads folded into the query rows ([B, kv heads, n_rep * T, d]) so keys and values are never
  repeated;
- RoPE as a complex multiplication (interleaved pairs) or the rotate-half form;
- F.silu, F.embedding, F.linear and the fused F.cross_entropy.
Attention materialises the T x T map, as every PyTorch 1.13 model does (1.13 has no fused
attention on CPU).
"""

import math

import torch
import torch.nn.functional as F

IGNORE_ID = -1


def _lambda_init(cfg, layer_index):
    """docs/SPEC.md §2.2: 0.8 - 0.6 exp(-0.3 (l - 1)) with l = layer_index + 1, or the constant."""
    if cfg.lambda_init == "exp":
        return 0.8 - 0.6 * math.exp(-0.3 * layer_index)
    return float(cfg.lambda_init)


def _widths(cfg):
    """(q, k, v, extra) output widths of the fused input projection (docs/SPEC.md §2)."""
    D, d, H, Hkv = cfg.hidden_size, cfg.head_dim, cfg.num_attention_heads, cfg.num_key_value_heads
    if cfg.attention == "baseline":
        return H * d, Hkv * d, Hkv * d, 0
    if cfg.attention == "diff":
        return 2 * H * d, 2 * Hkv * d, 2 * Hkv * d, 0
    return 2 * H * d, Hkv * d, Hkv * d, H  # diff2: lambda_proj rides along


class PeerModel:
    """Parameters (fused layout) and the training forward pass returning the mean loss."""

    def __init__(self, cfg, named):
        """named: docs/SPEC.md §3 name -> tensor (e.g. from the oracle's init_parameters)."""
        self.cfg = cfg
        self.params = {}
        for l in range(cfg.num_hidden_layers):
            p = f"model.layers.{l}."
            a = p + "self_attn."
            fused = [named[a + "q_proj.weight"], named[a + "k_proj.weight"], named[a + "v_proj.weight"]]
            if cfg.attention == "diff2":
                fused.append(named[a + "lambda_proj.weight"])
            self.params[p + "qkv"] = torch.cat(fused)
            self.params[p + "gate_up"] = torch.cat([named[p + "mlp.gate_proj.weight"], named[p + "mlp.up_proj.weight"]])
            for name in ("input_layernorm.weight", "post_attention_layernorm.weight", "mlp.down_proj.weight",
                         "self_attn.o_proj.weight", "self_attn.lambda_q1", "self_attn.lambda_k1",
                         "self_attn.lambda_q2", "self_attn.lambda_k2", "self_attn.subln.weight"):
                if p + name in named:
                    self.params[p + name] = named[p + name].clone()
        for name in ("model.embed_tokens.weight", "model.norm.weight", "lm_head.weight"):
            if name in named:
                self.params[name] = named[name].clone()
        self._rope_cache = {}
        self._mask_cache = {}

    def parameters(self):
        return list(self.params.values())

    def split_grads(self):
        """Gradients under the docs/SPEC.md §3 names (the fused ones cut back apart)."""
        cfg, out = self.cfg, {}
        q, k, v, x = _widths(cfg)
        F_ = cfg.intermediate_size
        for name, t in self.params.items():
            if name.endswith(".qkv"):
                p = name[: -len("qkv")] + "self_attn."
                parts = t.grad.split([q, k, v, x] if x else [q, k, v])
                for part, n in zip(parts, ("q_proj", "k_proj", "v_proj", "lambda_proj")):
                    out[p + n + ".weight"] = part
            elif name.endswith(".gate_up"):
                p = name[: -len("gate_up")] + "mlp."
                out[p + "gate_proj.weight"], out[p + "up_proj.weight"] = t.grad.split([F_, F_])
            else:
                out[name] = t.grad
        return out

    # ---- pieces

    def _rope(self, T, dtype):
        key = (T, dtype)
        if key not in self._rope_cache:
            d, theta = self.cfg.head_dim, self.cfg.rope_theta
            inv_freq = theta ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
            angles = torch.arange(T, dtype=torch.float64)[:, None] * inv_freq[None, :]  # [T, d/2]
            if self.cfg.rope_style == "interleaved":
                cplx = torch.polar(torch.ones_like(angles), angles)
                self._rope_cache[key] = cplx.to(torch.complex64 if dtype == torch.float32 else torch.complex128)
            else:
                cos, sin = angles.cos().repeat(1, 2).to(dtype), angles.sin().repeat(1, 2).to(dtype)
                self._rope_cache[key] = (cos, sin)
        return self._rope_cache[key]

    def _apply_rope(self, x, T):
        """x [B, T, heads, d] -> rotated, same shape (docs/SPEC.md §1)."""
        table = self._rope(T, x.dtype)
        if self.cfg.rope_style == "interleaved":
            c = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
            return torch.view_as_real(c * table[:, None, :]).flatten(-2)
        cos, sin = table
        half = x.shape[-1] // 2
        rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * cos[:, None, :] + rotated * sin[:, None, :]

    def _mask(self, T, rows):
        """[rows * T, T] boolean: True where the key lies after the query (rows stacked copies)."""
        key = (T, rows)
        if key not in self._mask_cache:
            self._mask_cache[key] = torch.ones(T, T, dtype=torch.bool).triu(1).repeat(rows, 1)
        return self._mask_cache[key]

    def _softmax_maps(self, q, k, T, n_rep):
        """q [B, G, n_rep*T, d] (pre-scaled), k [B, G, T, d] -> causal softmax [B, G, n_rep*T, T]."""
        s = torch.matmul(q, k.transpose(-1, -2))
        s.masked_fill_(self._mask(T, n_rep), float("-inf"))
        return torch.softmax(s, dim=-1)

    def _attention(self, h, p, layer_index):
        cfg = self.cfg
        B, T, _ = h.shape
        d, H, Hkv = cfg.head_dim, cfg.num_attention_heads, cfg.num_key_value_heads
        qw, kw, vw, xw = _widths(cfg)
        proj = F.linear(h, p["qkv"])
        q, k, v = proj[..., :qw], proj[..., qw:qw + kw], proj[..., qw + kw:qw + kw + vw]
        scale = 1.0 / math.sqrt(d)
        if cfg.attention == "diff":
            # docs/SPEC.md §2.2: head i = [q1 | q2] of width d each, group g = i // n_rep with [k1 | k2].
            n_rep = H // Hkv
            q = self._apply_rope(q.reshape(B, T, 2 * H, d), T) * scale
            k = self._apply_rope(k.reshape(B, T, 2 * Hkv, d), T)
            q = q.view(B, T, Hkv, n_rep, 2, d).permute(0, 2, 4, 3, 1, 5).reshape(B, 2 * Hkv, n_rep * T, d)
            k = k.view(B, T, 2 * Hkv, d).transpose(1, 2)
            a = self._softmax_maps(q, k, T, n_rep).view(B, Hkv, 2, n_rep * T, T)
            lam = (torch.exp(torch.dot(p["self_attn.lambda_q1"], p["self_attn.lambda_k1"]))
                   - torch.exp(torch.dot(p["self_attn.lambda_q2"], p["self_attn.lambda_k2"]))
                   + _lambda_init(cfg, layer_index))
            v = v.reshape(B, T, Hkv, 2 * d).transpose(1, 2)
            heads = torch.matmul(a[:, :, 0] - lam * a[:, :, 1], v)  # [B, Hkv, n_rep*T, 2d]
            heads = heads.view(B, Hkv, n_rep, T, 2 * d).permute(0, 3, 1, 2, 4).reshape(B, T, H, 2 * d)
            if cfg.diff_subln:  # Eq. 3
                rms = torch.rsqrt(heads.pow(2).mean(-1, keepdim=True) + cfg.rms_norm_eps)
                heads = heads * rms * (p["self_attn.subln.weight"] * (1.0 - _lambda_init(cfg, layer_index)))
            return heads.reshape(B, T, H * 2 * d)
        # baseline (docs/SPEC.md §2.1) and diff2 (docs/SPEC.md §2.3): ordinary maps over Hkv kv heads.
        maps = qw // d
        n_rep = maps // Hkv
        q = self._apply_rope(q.reshape(B, T, maps, d), T) * scale
        k = self._apply_rope(k.reshape(B, T, Hkv, d), T).transpose(1, 2)
        q = q.view(B, T, Hkv, n_rep, d).permute(0, 2, 3, 1, 4).reshape(B, Hkv, n_rep * T, d)
        v = v.reshape(B, T, Hkv, d).transpose(1, 2)
        a = torch.matmul(self._softmax_maps(q, k, T, n_rep), v)  # [B, Hkv, n_rep*T, d]
        if cfg.attention == "baseline":
            return a.view(B, Hkv, n_rep, T, d).permute(0, 3, 1, 2, 4).reshape(B, T, H * d)
        # diff2: adjacent query heads (2i, 2i+1) share kv head; out_i = a_2i - sigmoid(l_i) a_2i+1.
        lam = torch.sigmoid(proj[..., qw + kw + vw:])  # [B, T, h]
        a = a.view(B, Hkv, n_rep // 2, 2, T, d)
        lam = lam.view(B, T, Hkv, n_rep // 2).permute(0, 2, 3, 1).unsqueeze(-1)
        heads = a[:, :, :, 0] - lam * a[:, :, :, 1]  # [B, Hkv, n_rep/2, T, d]
        return heads.permute(0, 3, 1, 2, 4).reshape(B, T, H * d)

    def _rms_norm(self, x, gain):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.cfg.rms_norm_eps) * gain

    def loss(self, ids, targets):
        """Mean cross-entropy of the next token over targets != IGNORE_ID (docs/SPEC.md §1)."""
        cfg, P = self.cfg, self.params
        x = F.embedding(ids, P["model.embed_tokens.weight"])
        for l in range(cfg.num_hidden_layers):
            prefix = f"model.layers.{l}."
            p = {name[len(prefix):]: t for name, t in P.items() if name.startswith(prefix)}
            att = self._attention(self._rms_norm(x, p["input_layernorm.weight"]), p, l)
            x = x + F.linear(att, p["self_attn.o_proj.weight"])
            gate, up = F.linear(self._rms_norm(x, p["post_attention_layernorm.weight"]), p["gate_up"]).chunk(2, -1)
            x = x + F.linear(F.silu(gate) * up, p["mlp.down_proj.weight"])
        head = P["model.embed_tokens.weight" if cfg.tie_word_embeddings else "lm_head.weight"]
        logits = F.linear(self._rms_norm(x, P["model.norm.weight"]), head)
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=IGNORE_ID)


def check_against_oracle(oracle, cfg_dict_overrides=None):
    """Raises AssertionError unless PeerModel equals the oracle model (float64: loss and every
    gradient) on small configs of every variant, with GQA and both RoPE styles."""
    base = dict(model_type="difftx", vocab_size=37, hidden_size=32, num_hidden_layers=2, head_dim=8,
                intermediate_size=64, max_position_embeddings=16, rope_theta=10000.0, rope_style="interleaved",
                rms_norm_eps=1e-5, tie_word_embeddings=True, lambda_init="exp", diff_subln=True)
    cases = [
        dict(attention="baseline", num_attention_heads=4, num_key_value_heads=4),
        dict(attention="baseline", num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=False),
        dict(attention="diff", num_attention_heads=2, num_key_value_heads=2),
        dict(attention="diff", num_attention_heads=2, num_key_value_heads=1, rope_style="half"),
        dict(attention="diff", num_attention_heads=2, num_key_value_heads=2, diff_subln=False, lambda_init=0.5),
        dict(attention="diff2", num_attention_heads=2, num_key_value_heads=2),
        dict(attention="diff2", num_attention_heads=2, num_key_value_heads=1, rope_style="half"),
    ]
    for seed, case in enumerate(cases):
        cfg = oracle.Config.from_dict(dict(base, **case))
        gen = torch.Generator().manual_seed(1000 + seed)
        named = oracle.init_parameters(cfg, gen)  # float64
        ids = torch.randint(0, cfg.vocab_size, (2, 12), generator=gen)
        targets = torch.randint(0, cfg.vocab_size, (2, 12), generator=gen)
        targets[0, 3] = IGNORE_ID
        for t in named.values():
            t.requires_grad_(True)
        want = oracle.loss_of(cfg, named, ids, targets)
        want.backward()
        peer = PeerModel(cfg, {n: t.detach() for n, t in named.items()})
        for t in peer.parameters():
            t.requires_grad_(True)
        got = peer.loss(ids, targets)
        got.backward()
        what = f"torch peer vs oracle ({case})"
        assert abs(got.item() - want.item()) <= 1e-12, f"{what}: loss {got.item()} != {want.item()}"
        grads = peer.split_grads()
        assert set(grads) == set(named), f"{what}: parameter names differ"
        for name, t in named.items():
            err = (grads[name] - t.grad).abs().max().item()
            assert err <= 1e-10, f"{what}: gradient of {name} differs by {err:.3e}"
