"""MultiheadAttention (as torch.nn.MultiheadAttention, packed in-projection, same kdim/vdim)."""
import ember
from ember.nn import functional as F
from ember.nn import init
from ember.nn.modules.linear import Linear
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter


class NonDynamicallyQuantizableLinear(Linear):
    pass


class MultiheadAttention(Module):
    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        if embed_dim % num_heads != 0:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if add_bias_kv or add_zero_attn or (kdim not in (None, embed_dim)) or (vdim not in (None, embed_dim)):
            raise NotImplementedError("MultiheadAttention: add_bias_kv, add_zero_attn and kdim/vdim != embed_dim "
                                      "are not implemented")
        self.embed_dim = embed_dim
        self.kdim = embed_dim
        self.vdim = embed_dim
        self._qkv_same_embed_dim = True
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        self.in_proj_weight = Parameter(ember.empty(3 * embed_dim, embed_dim, device=device, dtype=dtype))
        self.register_parameter("q_proj_weight", None)
        self.register_parameter("k_proj_weight", None)
        self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(ember.empty(3 * embed_dim, device=device, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        self.bias_k = self.bias_v = None
        self.add_zero_attn = False
        self._reset_parameters()

    def _reset_parameters(self):
        init.xavier_uniform_(self.in_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        batched = query.dim() == 3
        if not batched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif self.batch_first:
            query, key, value = (x.transpose(0, 1) for x in (query, key, value))
        # From here on: [L, N, E] (sequence first).
        L, N, E = query.shape
        S = key.shape[0]
        H, D = self.num_heads, self.head_dim
        w_q, w_k, w_v = self.in_proj_weight.chunk(3)
        b_q = b_k = b_v = None
        if self.in_proj_bias is not None:
            b_q, b_k, b_v = self.in_proj_bias.chunk(3)
        q = F.linear(query, w_q, b_q)
        k = F.linear(key, w_k, b_k)
        v = F.linear(value, w_v, b_v)
        # [L, N, H*D] -> [N, H, L, D]
        q = q.reshape(L, N, H, D).permute(1, 2, 0, 3)
        k = k.reshape(S, N, H, D).permute(1, 2, 0, 3)
        v = v.reshape(S, N, H, D).permute(1, 2, 0, 3)

        mask = self._merge_masks(attn_mask, key_padding_mask, is_causal, L, S, N, query)
        scores = ember.matmul(q, k.transpose(-2, -1)) * (1.0 / D ** 0.5)
        if mask is not None:
            scores = scores + mask
        weights = ember.softmax(scores, -1)
        if self.training and self.dropout > 0.0:
            weights = F.dropout(weights, self.dropout, True)
        out = ember.matmul(weights, v)  # [N, H, L, D]
        out = out.permute(2, 0, 1, 3).reshape(L, N, E)
        out = self.out_proj(out)
        if self.batch_first and batched:
            out = out.transpose(0, 1)
        if not batched:
            out = out.squeeze(1)
        if not need_weights:
            return out, None
        if average_attn_weights:
            weights = weights.mean(1)
        if not batched:
            weights = weights.squeeze(0)
        return out, weights

    @staticmethod
    def _as_additive(mask, like):
        if mask is None:
            return None
        if mask.dtype == ember.bool:  # True = not allowed to attend
            zeros = ember.zeros(tuple(mask.shape), dtype=like.dtype, device=like.device)
            return zeros.masked_fill(mask, float("-inf"))
        return mask.to(like.dtype)

    def _merge_masks(self, attn_mask, key_padding_mask, is_causal, L, S, N, like):
        # As in torch, is_causal is only a hint that attn_mask is causal; the mask itself is required.
        if is_causal and attn_mask is None:
            raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer "
                               "module method `generate_square_subsequent_mask` to create this mask.")
        mask = self._as_additive(attn_mask, like)
        if mask is not None:
            if mask.dim() == 2:
                mask = mask.reshape(1, 1, L, S)
            elif mask.dim() == 3:  # [N*H, L, S]
                mask = mask.reshape(N, self.num_heads, L, S)
        kpm = self._as_additive(key_padding_mask, like)
        if kpm is not None:
            kpm = kpm.reshape(N, 1, 1, S)
            mask = kpm if mask is None else mask + kpm
        return mask
