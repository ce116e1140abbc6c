"""python -m ember.utils.collect_env: what ember was built with, what this
machine has, and one verdict line for each mismatch found (paste the output
into bug reports).

gather() collects the facts into a dict, verdicts(facts) turns them into
problem lines and report(facts) into the text; each can be used alone.
"""
import os
import platform
import sys


def _version_str(v):
    """CUDA's integer versions: 13000 -> '13.0'; 0 -> ''."""
    return f"{v // 1000}.{(v % 1000) // 10}" if v else ""


def _cudnn_str(v):
    """cuDNN 9's integer versions: 91900 -> '9.19.0'."""
    return f"{v // 10000}.{(v % 10000) // 100}.{v % 100}" if v else ""


def _os_name():
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return platform.platform()


def _kernel_driver():
    """The NVIDIA kernel module's version, when one is loaded."""
    try:
        with open("/proc/driver/nvidia/version") as f:
            first = f.readline()
    except OSError:
        return ""
    for word in first.split():
        if word[:1].isdigit() and "." in word:
            return word
    return ""


def _package_version(name):
    try:
        from importlib.metadata import version
        return version(name)
    except Exception:  # not installed, or no metadata
        return ""


def gather():
    """The facts about ember's build and this machine, as a dict."""
    import ember
    from ember import _C

    cuda = _C._cuda
    facts = {
        "ember_version": ember.__version__,
        "ember_location": os.path.dirname(os.path.abspath(ember.__file__)),
        "build": dict(_C._build_info()),
        "python": sys.version.replace("\n", " "),
        "platform": platform.platform(),
        "os": _os_name(),
        "numpy": _package_version("numpy"),
        "torch": _package_version("torch"),
        "cuda_runtime": cuda.runtime_version(),
        "cuda_driver": cuda.driver_version(),
        "kernel_driver": _kernel_driver(),
        "cudnn_loaded": cuda.cudnn_version(),
        "device_count": cuda.device_count(),
        "unavailable_reason": cuda.unavailable_reason(),
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "launch_blocking": os.environ.get("EMBER_LAUNCH_BLOCKING", ""),
        "gpus": [],
    }
    for i in range(facts["device_count"]):
        try:
            p = cuda.get_device_properties(i)
            facts["gpus"].append({"index": i, "name": p.name, "major": p.major, "minor": p.minor,
                                  "total_memory": p.total_memory, "sm_count": p.multi_processor_count,
                                  "arch_problem": cuda.arch_problem(i), "error": ""})
        except RuntimeError as e:  # the query itself failed
            facts["gpus"].append({"index": i, "error": str(e)})
    return facts


def verdicts(facts):
    """One line per problem found; empty when everything fits together."""
    build = facts["build"]
    out = []
    if build.get("cuda") != "ON":
        out.append("built without CUDA: ember can only use the CPU; rebuild on a machine with the CUDA "
                   "toolkit (nvcc) and without EMBER_CUDA=OFF to use a GPU")
        return out
    runtime, driver = facts["cuda_runtime"], facts["cuda_driver"]
    if not driver:
        out.append("no NVIDIA driver: libcuda.so.1 was not found, so no GPU can be used; install the "
                   "NVIDIA driver (nvidia-smi should list the GPU)")
    elif runtime and driver < runtime:
        out.append(f"driver older than runtime: the driver supports CUDA up to {_version_str(driver)} but "
                   f"ember uses the CUDA {_version_str(runtime)} runtime; update the NVIDIA driver")
    elif facts["device_count"] == 0:
        visible = facts.get("cuda_visible_devices")
        hint = f" (CUDA_VISIBLE_DEVICES='{visible}' may hide it)" if visible is not None else ""
        out.append(f"no CUDA GPU: {facts['unavailable_reason'] or 'the driver found no device'}{hint}")
    for gpu in facts["gpus"]:
        if gpu.get("error"):
            out.append(f"GPU cuda:{gpu['index']} cannot be used: {gpu['error']}")
        elif gpu.get("arch_problem"):
            out.append(f"GPU arch not compiled: {gpu['arch_problem']}")
    if not build.get("cudnn"):
        out.append("cuDNN missing: ember was built without cuDNN, so convolution, pooling and batch norm "
                   "cannot run on the GPU; install cuDNN 9 and rebuild")
    elif facts["cudnn_loaded"] and _cudnn_str(facts["cudnn_loaded"]).split(".")[0] != build["cudnn"].split(".")[0]:
        out.append(f"cuDNN mismatch: built with {build['cudnn']} but {_cudnn_str(facts['cudnn_loaded'])} is "
                   "loaded; make the build's cuDNN the one found at run time")
    return out


def _gib(n):
    return f"{n / 2**30:.1f} GiB"


def report(facts):
    """The text python -m ember.utils.collect_env prints."""
    build = facts["build"]
    lines = []

    def section(title):
        lines.append("")
        lines.append(f"== {title}")

    def row(key, value):
        lines.append(f"{key + ':':<26}{value if value not in (None, '') else 'n/a'}")

    lines.append("ember environment (python -m ember.utils.collect_env)")
    section("ember")
    row("version", facts["ember_version"])
    row("location", facts["ember_location"])
    row("build type", build.get("build_type"))
    row("C++ compiler", build.get("compiler"))
    row("CUDA", "ON" if build.get("cuda") == "ON" else "OFF (built without CUDA)")
    if build.get("cuda") == "ON":
        row("CUDA toolkit (build)", build.get("cuda_toolkit"))
        row("CUDA compiler", build.get("cuda_compiler"))
        row("GPU architectures", ", ".join(a for a in build.get("cuda_archs", "").split(";") if a))
        row("cuDNN (build)", build.get("cudnn") or "not found")
        row("NCCL (build)", build.get("nccl") or "not found")
    row("gloo", build.get("gloo"))
    row("BLAS", build.get("blas"))

    section("Python and system")
    row("Python", facts["python"])
    row("OS", facts["os"])
    row("platform", facts["platform"])
    row("numpy", facts["numpy"])
    row("torch", facts["torch"] or "not installed")

    section("CUDA")
    row("CUDA runtime", _version_str(facts["cuda_runtime"]) or "none (CPU build)")
    row("driver supports CUDA", _version_str(facts["cuda_driver"]) or "no driver found")
    row("NVIDIA kernel driver", facts["kernel_driver"] or "not loaded")
    row("cuDNN (loaded)", _cudnn_str(facts["cudnn_loaded"]) or "none")
    row("CUDA_VISIBLE_DEVICES", facts["cuda_visible_devices"] if facts["cuda_visible_devices"] is not None
        else "unset")
    row("EMBER_LAUNCH_BLOCKING", facts["launch_blocking"] or "unset")
    row("GPUs", facts["device_count"])
    for gpu in facts["gpus"]:
        if gpu.get("error"):
            lines.append(f"  cuda:{gpu['index']}: {gpu['error']}")
        else:
            compiled = "no code in this build" if gpu.get("arch_problem") else "compiled for"
            lines.append(f"  cuda:{gpu['index']}: {gpu['name']}, compute capability {gpu['major']}.{gpu['minor']} "
                         f"({compiled}), {_gib(gpu['total_memory'])}, {gpu['sm_count']} SMs")
    if not facts["gpus"] and facts["unavailable_reason"]:
        lines.append(f"  none usable: {facts['unavailable_reason']}")

    section("Verdict")
    problems = verdicts(facts)
    for p in problems:
        lines.append(f"PROBLEM: {p}")
    if not problems:
        lines.append("OK: the build, the driver and the GPUs fit together")
    return "\n".join(lines)


def main():
    print(report(gather()))


if __name__ == "__main__":
    main()
