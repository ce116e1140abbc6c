"""FFTs on the CPU engine, ember next to PyTorch (when importable): complex and real transforms
along the last dim of [256, 4096] (complex64/float32 and complex128/float64), a length with a large
prime factor (4099: Bluestein), 2-D transforms over the last two dims of [64, 64, 64] (the inner dim
runs as interleaved transforms), an irfft(rfft(x)) round trip, stft of four one-second 16 kHz
signals, and forward + backward through autograd for two of them. One JSON line per workload with
ms per call and ember's time over torch's.

    PYTHONPATH=python:/tmp/torchenv python -m bench.fft [--threads N] [--only name,name] [--repeats R]

Not one of BENCHMARKS.md's workloads: a probe of core/cpu/fft_*.cpp.
"""
import json
import os
import sys

if __package__ in (None, ""):  # run as a script: python bench/fft.py
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import ember  # noqa: E402

from bench.timing import interleaved_medians, named_cases_arguments, optional_torch, ratio  # noqa: E402


def _real(fw, shape, dtype):
    return fw.randn(*shape, dtype=getattr(fw, dtype))


def _complex(fw, shape, dtype):
    part = "float32" if dtype == "complex64" else "float64"
    return fw.complex(_real(fw, shape, part), _real(fw, shape, part))


def fft_last(fw, shape, dtype):
    x = _complex(fw, shape, dtype)
    return lambda: fw.fft.fft(x)


def rfft_last(fw, shape, dtype):
    x = _real(fw, shape, dtype)
    return lambda: fw.fft.rfft(x)


def rfft_irfft(fw, shape, dtype):
    x = _real(fw, shape, dtype)
    n = shape[-1]
    return lambda: fw.fft.irfft(fw.fft.rfft(x), n=n)


def fft2(fw, shape, dtype):
    x = _complex(fw, shape, dtype)
    return lambda: fw.fft.fft2(x)


def rfft2(fw, shape, dtype):
    x = _real(fw, shape, dtype)
    return lambda: fw.fft.rfft2(x)


def stft(fw, shape, dtype):
    x = _real(fw, shape, dtype)
    window = fw.hann_window(400, dtype=getattr(fw, dtype))
    return lambda: fw.stft(x, n_fft=400, hop_length=160, window=window, return_complex=True)


def _backward(forward, make_input):
    def make(fw, shape, dtype):
        x = make_input(fw, shape, dtype).requires_grad_()
        y = forward(fw, x.detach())
        g = fw.randn(*y.shape, dtype=y.dtype)

        def run():
            x.grad = None
            forward(fw, x).backward(g)
        return run
    return make


rfft_backward = _backward(lambda fw, x: fw.fft.rfft(x), _real)
fft2_backward = _backward(lambda fw, x: fw.fft.fft2(x), _complex)

# name -> (maker, shape, dtype, unit)
WORKLOADS = {
    "fft": (fft_last, (256, 4096), "complex64", "ms"),
    "rfft": (rfft_last, (256, 4096), "float32", "ms"),
    "irfft_rfft": (rfft_irfft, (256, 4096), "float32", "ms"),
    "fft2": (fft2, (64, 64, 64), "complex64", "ms"),
    "rfft2": (rfft2, (64, 64, 64), "float32", "ms"),
    "stft": (stft, (4, 16000), "float32", "ms"),
    "fft_prime": (fft_last, (64, 4099), "complex64", "ms"),
    "fft_f64": (fft_last, (256, 4096), "complex128", "ms"),
    "rfft_f64": (rfft_last, (256, 4096), "float64", "ms"),
    "rfft_backward": (rfft_backward, (256, 4096), "float32", "ms (forward + backward)"),
    "fft2_backward": (fft2_backward, (64, 64, 64), "complex64", "ms (forward + backward)"),
}


def measure(name, repeats):
    maker, shape, dtype, unit = WORKLOADS[name]
    fns = {"ember": maker(ember, shape, dtype)}
    torch = optional_torch()
    if torch is not None:
        fns["torch"] = maker(torch, shape, dtype)
    times = interleaved_medians(fns, repeats=repeats, warmup=2)
    out = {"workload": name, "shape": list(shape), "dtype": dtype, "unit": unit}
    out.update({k: round(s * 1e3, 3) for k, s in times.items()})
    out["ember/torch"] = ratio(times["ember"], times.get("torch"))
    print(json.dumps(out), flush=True)


def main(argv=None):
    args = named_cases_arguments(__doc__, WORKLOADS, argv, kind="workload", threads=2)
    ember.set_num_threads(args.threads)
    torch = optional_torch()
    if torch is not None:
        torch.set_num_threads(args.threads)
    for name in args.only:
        measure(name, args.repeats)


if __name__ == "__main__":
    main()
