"""MultiheadAttention as torch.nn.MultiheadAttention: a packed in-projection when kdim = vdim = embed_dim,
separate q/k/v projection weights otherwise; add_bias_kv and add_zero_attn append one key/value each."""
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
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        factory = dict(device=device, dtype=dtype)
        # Registration order (and so state_dict order) is torch's.
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(ember.empty(3 * embed_dim, embed_dim, **factory))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(ember.empty(embed_dim, embed_dim, **factory))
            self.k_proj_weight = Parameter(ember.empty(embed_dim, self.kdim, **factory))
            self.v_proj_weight = Parameter(ember.empty(embed_dim, self.vdim, **factory))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(ember.empty(3 * embed_dim, **factory))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **factory)
        if add_bias_kv:
            self.bias_k = Parameter(ember.empty(1, 1, embed_dim, **factory))
            self.bias_v = Parameter(ember.empty(1, 1, embed_dim, **factory))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def _projection_weights(self):
        if self._qkv_same_embed_dim:
            return self.in_proj_weight.chunk(3)
        return self.q_proj_weight, self.k_proj_weight, self.v_proj_weight

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
        if E != self.embed_dim:
            raise AssertionError(f"was expecting embedding dimension of {self.embed_dim}, but got {E}")
        if key.shape[-1] != self.kdim or value.shape[-1] != self.vdim:
            raise AssertionError(f"MultiheadAttention: expected key and value of embedding dimensions "
                                 f"{self.kdim} and {self.vdim}, got {key.shape[-1]} and {value.shape[-1]}")
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key shape {tuple(key.shape)} does not match value shape {tuple(value.shape)}")
        S = key.shape[0]
        H, D = self.num_heads, self.head_dim
        w_q, w_k, w_v = self._projection_weights()
        b_q = b_k = b_v = None
        if self.in_proj_bias is not None:
            b_q, b_k, b_v = self.in_proj_bias.chunk(3)
        mask = self._merge_masks(attn_mask, key_padding_mask, is_causal, L, S, N, query)
        q = F.linear(query, w_q, b_q)
        k = F.linear(key, w_k, b_k)
        v = F.linear(value, w_v, b_v)
        extra = 0  # keys appended below; the masks let every query attend to them
        if self.bias_k is not None:
            k = ember.cat([k, self.bias_k.expand(1, N, E)], 0)
            v = ember.cat([v, self.bias_v.expand(1, N, E)], 0)
            extra += 1
        # [L, N, H*D] -> [N, H, L, D]
        q = q.reshape(L, N, H, D).permute(1, 2, 0, 3)
        k = k.reshape(S + extra, N, H, D).permute(1, 2, 0, 3)
        v = v.reshape(S + extra, N, H, D).permute(1, 2, 0, 3)
        if self.add_zero_attn:
            zeros = ember.zeros(N, H, 1, D, dtype=k.dtype, device=k.device)
            k = ember.cat([k, zeros], 2)
            v = ember.cat([v, zeros], 2)
            extra += 1
        if mask is not None and extra:
            mask = F.pad(mask, (0, extra))

        p = self.dropout if self.training else 0.0
        if not need_weights:  # the weights are not returned: one call, fused on the GPU where it can be
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)  # [N, H, L, D]
        else:
            scores = ember.matmul(q, k.transpose(-2, -1)) * (1.0 / D ** 0.5)
            if mask is not None:
                scores = scores + mask
            weights = ember.softmax(scores, -1)
            if p > 0.0:
                weights = F.dropout(weights, p, True)
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
                if tuple(mask.shape) != (L, S):
                    raise RuntimeError(f"The shape of the 2D attn_mask is {tuple(mask.shape)}, but should be {(L, S)}.")
                mask = mask.reshape(1, 1, L, S)
            elif mask.dim() == 3:  # [N*H, L, S]
                if tuple(mask.shape) != (N * self.num_heads, L, S):
                    raise RuntimeError(f"The shape of the 3D attn_mask is {tuple(mask.shape)}, but should be "
                                       f"{(N * self.num_heads, L, S)}.")
                mask = mask.reshape(N, self.num_heads, L, S)
            else:
                raise RuntimeError(f"attn_mask's dimension {mask.dim()} is not supported")
        kpm = self._as_additive(key_padding_mask, like)
        if kpm is not None:
            if tuple(kpm.shape) != (N, S):
                raise AssertionError(f"expecting key_padding_mask shape of {(N, S)}, but got {tuple(kpm.shape)}")
            kpm = kpm.reshape(N, 1, 1, S)
            mask = kpm if mask is None else mask + kpm
        return mask
