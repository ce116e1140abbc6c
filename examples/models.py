"""The standard models of BENCHMARKS.md (W1 MLP, W2 MNIST convnet, W3 GPT),
written once against the torch.nn API and built with whichever framework is
passed in: `ember` or `torch`. The examples train them; bench/ times them
side by side with PyTorch."""
import math


def mlp(fw):
    """W1: 784 -> 512 -> 512 -> 10 with ReLU."""
    nn = fw.nn
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 10))


def mnist_cnn(fw, dropout=True):
    """W2: the classic MNIST convnet (PyTorch's MNIST example)."""
    nn = fw.nn
    layers = [nn.Conv2d(1, 32, 3), nn.ReLU(), nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2)]
    layers += [nn.Dropout(0.25)] if dropout else []
    layers += [nn.Flatten(), nn.Linear(9216, 128), nn.ReLU()]
    layers += [nn.Dropout(0.5)] if dropout else []
    layers += [nn.Linear(128, 10)]
    return nn.Sequential(*layers)


def gpt(fw, vocab_size, block_size, n_embd, n_layer, n_head, dropout=0.0, fused_attention=False):
    """W3: a GPT-2 style decoder: pre-LN blocks (LayerNorm, qkv Linear, causal
    softmax attention, projection, LayerNorm, Linear 4C, GELU, Linear C),
    learned position embeddings, output head tied to the token embedding.
    fused_attention: F.scaled_dot_product_attention instead of the explicit
    softmax(q k^T) v."""
    nn, F = fw.nn, fw.nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(n_embd, 3 * n_embd)
            self.proj = nn.Linear(n_embd, n_embd)
            self.drop = nn.Dropout(dropout)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(x).split(n_embd, dim=2)
            q, k, v = (t.view(B, T, n_head, C // n_head).transpose(1, 2) for t in (q, k, v))
            if fused_attention:
                y = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout if self.training else 0.0,
                                                   is_causal=True)
                return self.drop(self.proj(y.transpose(1, 2).reshape(B, T, C)))
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(C // n_head))
            mask = fw.ones(T, T, dtype=fw.bool, device=x.device).tril()
            att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
            y = (self.drop(att) @ v).transpose(1, 2).reshape(B, T, C)
            return self.drop(self.proj(y))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(n_embd)
            self.attn = CausalSelfAttention()
            self.ln2 = nn.LayerNorm(n_embd)
            self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd),
                                     nn.Dropout(dropout))

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.block_size = block_size
            self.tok = nn.Embedding(vocab_size, n_embd)
            self.pos = nn.Embedding(block_size, n_embd)
            self.drop = nn.Dropout(dropout)
            self.blocks = nn.ModuleList([Block() for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(n_embd)
            self.head = nn.Linear(n_embd, vocab_size, bias=False)
            self.head.weight = self.tok.weight  # tied
            self.apply(self._init)

        @staticmethod
        def _init(m):
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, mean=0.0, std=0.02)
                if isinstance(m, nn.Linear) and m.bias is not None:
                    nn.init.zeros_(m.bias)

        def forward(self, idx, targets=None):
            B, T = idx.shape
            pos = fw.arange(T, device=idx.device)
            x = self.drop(self.tok(idx) + self.pos(pos))
            for block in self.blocks:
                x = block(x)
            logits = self.head(self.ln_f(x))
            if targets is None:
                return logits, None
            loss = F.cross_entropy(logits.reshape(B * T, -1), targets.reshape(B * T))
            return logits, loss

    return GPT()
