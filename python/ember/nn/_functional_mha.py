"""multi_head_attention_forward as torch.nn.functional's: the whole of nn.MultiheadAttention's computation
on sequence-first [L, N, E] (or unbatched [L, E]) inputs, with the projection weights passed in.
nn.MultiheadAttention's forward calls it."""
import ember

__all__ = ["multi_head_attention_forward"]


def _as_additive(mask, like):
    if mask is None:
        return None
    if mask.dtype == ember.bool:  # True = not allowed to attend
        zeros = ember.zeros(tuple(mask.shape), dtype=like.dtype, device=like.device)
        return zeros.masked_fill(mask, float("-inf"))
    return mask.to(like.dtype)


def _merge_masks(attn_mask, key_padding_mask, is_causal, L, S, N, H, like):
    """One additive mask broadcastable to [N, H, L, S], or None."""
    # As in torch, is_causal is only a hint that attn_mask is causal; the mask itself is required.
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer "
                           "module method `generate_square_subsequent_mask` to create this mask.")
    mask = _as_additive(attn_mask, like)
    if mask is not None:
        if mask.dim() == 2:
            if tuple(mask.shape) != (L, S):
                raise RuntimeError(f"The shape of the 2D attn_mask is {tuple(mask.shape)}, but should be {(L, S)}.")
            mask = mask.reshape(1, 1, L, S)
        elif mask.dim() == 3:  # [N*H, L, S]
            if tuple(mask.shape) != (N * H, L, S):
                raise RuntimeError(f"The shape of the 3D attn_mask is {tuple(mask.shape)}, but should be "
                                   f"{(N * H, L, S)}.")
            mask = mask.reshape(N, H, L, S)
        else:
            raise RuntimeError(f"attn_mask's dimension {mask.dim()} is not supported")
    kpm = _as_additive(key_padding_mask, like)
    if kpm is not None:
        if tuple(kpm.shape) != (N, S):
            raise AssertionError(f"expecting key_padding_mask shape of {(N, S)}, but got {tuple(kpm.shape)}")
        kpm = kpm.reshape(N, 1, 1, S)
        mask = kpm if mask is None else mask + kpm
    return mask


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """(attn_output [L, N, E], attn_weights [N, L, S] averaged over heads, [N, H, L, S], or None)."""
    F = ember.nn.functional
    batched = query.dim() == 3
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    L, N, E = query.shape
    if E != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {E}")
    if key.shape[:2] != value.shape[:2]:
        raise AssertionError(f"key shape {tuple(key.shape)} does not match value shape {tuple(value.shape)}")
    if E % num_heads != 0:
        raise AssertionError(f"embed_dim {E} not divisible by num_heads {num_heads}")
    S, H, D = key.shape[0], num_heads, E // num_heads
    if use_separate_proj_weight:
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is True but q_proj_weight, k_proj_weight or "
                                 "v_proj_weight is None")
        w_q, w_k, w_v = q_proj_weight, k_proj_weight, v_proj_weight
    else:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        w_q, w_k, w_v = in_proj_weight.chunk(3)
    b_q = b_k = b_v = None
    if in_proj_bias is not None:
        b_q, b_k, b_v = in_proj_bias.chunk(3)
    mask = _merge_masks(attn_mask, key_padding_mask, is_causal, L, S, N, H, query)
    q = F.linear(query, w_q, b_q).reshape(L, N, H, D).permute(1, 2, 0, 3)  # [N, H, L, D]
    extra = 0  # keys appended below; the masks let every query attend to them

    def heads(projected, static, name):
        """[S', N, E] -> [N, H, S', D], or the given static [N*H, S', D] projection."""
        if static is not None:
            if static.dim() != 3 or static.shape[0] != N * H or static.shape[2] != D:
                raise AssertionError(f"expecting static_{name}.size(0) of {N * H} and size(2) of {D}, but got "
                                     f"{tuple(static.shape)}")
            return static.reshape(N, H, static.shape[1], D)
        return projected.reshape(projected.shape[0], N, H, D).permute(1, 2, 0, 3)

    k = None if static_k is not None else F.linear(key, w_k, b_k)
    v = None if static_v is not None else F.linear(value, w_v, b_v)
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key or value")
        k = ember.cat([k, bias_k.expand(1, N, E)], 0)
        v = ember.cat([v, bias_v.expand(1, N, E)], 0)
        extra += 1
    k, v = heads(k, static_k, "k"), heads(v, static_v, "v")
    if add_zero_attn:
        zeros = ember.zeros(N, H, 1, D, dtype=k.dtype, device=k.device)
        k = ember.cat([k, zeros], 2)
        v = ember.cat([v, zeros], 2)
        extra += 1
    if mask is not None and extra:
        mask = F.pad(mask, (0, extra))
    p = dropout_p if training else 0.0
    if not need_weights:  # the weights are not returned: one call, fused on the GPU where it can be
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)  # [N, H, L, D]
        weights = None
    else:
        scores = ember.matmul(q, k.transpose(-2, -1)) * (1.0 / D ** 0.5)
        if mask is not None:
            scores = scores + mask
        weights = ember.softmax(scores, -1)
        if p > 0.0:
            weights = F.dropout(weights, p, True)
        out = ember.matmul(weights, v)  # [N, H, L, D]
    out = F.linear(out.permute(2, 0, 1, 3).reshape(L, N, E), out_proj_weight, out_proj_bias)
    if not batched:
        out = out.squeeze(1)
    if weights is None:
        return out, None
    if average_attn_weights:
        weights = weights.mean(1)
    if not batched:
        weights = weights.squeeze(0)
    return out, weights
