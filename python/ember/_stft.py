"""ember.stft / ember.istft (and the Tensor methods), as torch's: frames cut
with unfold, windowed, transformed with ember.fft; the inverse overlap-adds
the windowed frames and divides by the summed squared window."""
import ember
from ember import fft as _fft


def _window(window, win_length, n_fft, like, op):
    """The window zero-padded to n_fft, centred (a rectangle of win_length ones by default)."""
    if window is None:
        window = ember.ones(win_length, dtype=like.dtype if like.is_floating_point() else ember.float32,
                            device=like.device)
    elif window.dim() != 1 or window.shape[0] != win_length:
        raise RuntimeError(f"{op}: expected a 1D window tensor of size equal to win_length={win_length}, "
                           f"but got window with size {list(window.shape)}")
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = ember.nn.functional.pad(window, (left, n_fft - win_length - left))
    return window


def _lengths(n_fft, hop_length, win_length, op):
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if n_fft <= 0:
        raise RuntimeError(f"{op}: expected 0 < n_fft, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(f"{op}: expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        raise RuntimeError(f"{op}: expected 0 < win_length <= n_fft, but got win_length={win}")
    return hop, win


def _overlap_add(frames, positions, total):
    """Sums each (batch, frame, sample) value into the output sample it covers."""
    batch = frames.shape[0]
    if frames.is_complex():
        parts = ember.view_as_real(frames).reshape(batch, -1, 2)
        out = ember.zeros(batch, total, 2, dtype=parts.dtype, device=parts.device).index_add(1, positions, parts)
        return ember.view_as_complex(out)
    out = ember.zeros(batch, total, dtype=frames.dtype, device=frames.device)
    return out.index_add(1, positions, frames.reshape(batch, -1))


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None):
    """Short-time Fourier transform: (..., n_fft // 2 + 1 or n_fft, n_frames) complex."""
    op = "stft"
    is_complex_input = input.is_complex() or (window is not None and window.is_complex())
    if return_complex is None:
        if not is_complex_input:
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs; "
                               "pass return_complex=True (return_complex=False is deprecated)")
        return_complex = True
    if input.dim() not in (1, 2):
        raise RuntimeError(f"{op}: expected a 1D or 2D tensor, but got a tensor of shape {list(input.shape)}")
    hop, win = _lengths(n_fft, hop_length, win_length, op)
    x = input if input.dim() == 2 else input.unsqueeze(0)
    if center:
        pad = n_fft // 2
        x = ember.nn.functional.pad(x.unsqueeze(1), (pad, pad), mode=pad_mode).squeeze(1)
    if x.shape[-1] < n_fft:
        raise RuntimeError(f"{op}: expected 0 < n_fft <= {x.shape[-1]} (the padded signal length), "
                           f"but got n_fft={n_fft}")
    frames = x.unfold(-1, n_fft, hop) * _window(window, win, n_fft, x, op)
    if onesided is None:
        onesided = not is_complex_input
    if onesided and is_complex_input:
        raise RuntimeError(f"{op}: cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    spec = (_fft.rfft if onesided else _fft.fft)(frames, dim=-1, norm=norm).transpose(-1, -2)
    if input.dim() == 1:
        spec = spec.squeeze(0)
    return spec if return_complex else ember.view_as_real(spec.contiguous())


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """Inverse short-time Fourier transform of a complex (..., freq, n_frames) spectrogram."""
    op = "istft"
    if not input.is_complex():
        raise RuntimeError(f"{op} requires a complex-valued input tensor")
    if input.dim() not in (2, 3):
        raise RuntimeError(f"{op}: expected a tensor with 2 or 3 dimensions of complex, got {list(input.shape)}")
    hop, win = _lengths(n_fft, hop_length, win_length, op)
    spec = input if input.dim() == 3 else input.unsqueeze(0)
    n_frames = spec.shape[-1]
    if onesided is None:
        onesided = spec.shape[-2] != n_fft
    expected = n_fft // 2 + 1 if onesided else n_fft
    if spec.shape[-2] != expected:
        raise RuntimeError(f"{op}: expected the frequency dimension (-2) of input to be {expected} "
                           f"(onesided={onesided}, n_fft={n_fft}), but got {spec.shape[-2]}")
    if return_complex and onesided:
        raise RuntimeError(f"{op}: cannot have onesided output if return_complex is True")
    norm = "ortho" if normalized else "backward"
    columns = spec.transpose(-1, -2)
    if onesided:
        frames = _fft.irfft(columns, n=n_fft, dim=-1, norm=norm)
    else:
        frames = _fft.ifft(columns, n=n_fft, dim=-1, norm=norm)
        if not return_complex:
            frames = frames.real
    w = _window(window, win, n_fft, frames.real if frames.is_complex() else frames, op)
    frames = frames * w
    total = n_fft + hop * (n_frames - 1)
    positions = (ember.arange(n_frames, device=frames.device).unsqueeze(1) * hop
                 + ember.arange(n_fft, device=frames.device)).reshape(-1)
    signal = _overlap_add(frames, positions, total)
    envelope = ember.zeros(total, dtype=w.dtype, device=w.device).index_add(
        0, positions, (w * w).repeat(n_frames))
    start = n_fft // 2 if center else 0
    end = total - (n_fft // 2 if center else 0) if length is None else start + length
    kept = envelope[start:min(end, total)]
    if kept.numel() and kept.abs().min().item() < 1e-11:
        raise RuntimeError(f"{op}: window overlap add min: {kept.abs().min().item():g} "
                           "(the window does not satisfy the NOLA condition)")
    signal = signal[:, start:min(end, total)] / kept
    if end > total:
        signal = ember.nn.functional.pad(signal, (0, end - total))
    return signal if input.dim() == 3 else signal.squeeze(0)


ember.Tensor.stft = stft
ember.Tensor.istft = istft
