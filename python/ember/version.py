"""ember.version, as torch.version: the build's version strings (scripts print torch.version.cuda
or test it against None to know whether the build has CUDA)."""
from ember import _C

_info = _C._build_info()

__version__ = _info["version"]
# "13.0" for a CUDA build (toolkit major.minor, as torch reports it), None without CUDA
cuda = (".".join(_info["cuda_toolkit"].split(".")[:2])
        if _info.get("cuda") == "ON" and _info.get("cuda_toolkit") else None)
hip = None
rocm = None
xpu = None
debug = _info.get("build_type") == "Debug"
git_version = "Unknown"
