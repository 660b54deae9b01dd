#!/usr/bin/env bash
# Opt-in: the ONNX Runtime GPU build for `device: cuda` (not part of
# scripts/setup.sh: 247 MB, and only useful on a machine with an NVIDIA GPU).
#
# Takes the GPU build of ORT 1.30.0 from the PyPI wheel onnxruntime-gpu
# (pip download --no-deps, no Python install) and keeps only its core library
# and the two provider libraries, in $DMAR_CACHE/onnxruntime-cuda/. That build
# links CUDA 13 (cudart, cuBLAS/cuBLASLt, cuRAND) and loads cuDNN 9. With
# --cuda-libs it also unpacks those from PyPI's nvidia-* wheels (about 1.5 GB)
# into the same folder; without it they must come from the machine (a CUDA 13
# toolkit, or a Python environment that has them: its nvidia/*/lib folders).
# The provider library has no RUNPATH, so the folder holding the CUDA
# libraries must be on LD_LIBRARY_PATH (the printed environment does that).
# Idempotent. Prints the environment to use as its last lines.
set -euo pipefail
version=1.30.0
cache=${DMAR_CACHE:-$HOME/.cache/dmar}
dest=$cache/onnxruntime-cuda
wheels=$cache/pip/cuda
with_cuda_libs=0
[ "${1:-}" = --cuda-libs ] && with_cuda_libs=1
mkdir -p "$dest" "$wheels"
pipdl() {
	python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
		--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
		--platform manylinux2014_x86_64 -d "$wheels" "$@"
}
if [ ! -s "$dest/libonnxruntime_providers_cuda.so" ]; then
	whl=$(ls "$wheels"/onnxruntime_gpu-$version-*.whl 2>/dev/null | head -1 || true)
	if [ -z "$whl" ]; then
		echo "setup-cuda: downloading onnxruntime-gpu==$version (247 MB)" >&2
		pipdl "onnxruntime-gpu==$version"
		whl=$(ls "$wheels"/onnxruntime_gpu-$version-*.whl | head -1)
	fi
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	python3 -m zipfile -e "$whl" "$tmp"
	cp "$tmp/onnxruntime/capi/libonnxruntime.so.$version" "$tmp/onnxruntime/capi/libonnxruntime_providers_shared.so" \
		"$tmp/onnxruntime/capi/libonnxruntime_providers_cuda.so" "$dest/"
	ln -sf "libonnxruntime.so.$version" "$dest/libonnxruntime.so.1"
fi
if [ "$with_cuda_libs" = 1 ] && [ ! -e "$dest/libcudart.so.13" ]; then
	echo "setup-cuda: downloading the CUDA 13 and cuDNN 9 libraries from PyPI (about 1.5 GB)" >&2
	for pkg in "nvidia-cuda-runtime~=13.0" "nvidia-cublas~=13.0" "nvidia-curand~=10.4" "nvidia-cuda-nvrtc~=13.0" "nvidia-cudnn-cu13~=9.0"; do
		pipdl "$pkg"
	done
	tmp2=$(mktemp -d)
	for w in "$wheels"/nvidia_*.whl; do python3 -m zipfile -e "$w" "$tmp2"; done
	find "$tmp2" -name '*.so*' -path '*/lib/*' -exec cp -P {} "$dest/" \;
	rm -rf "$tmp2"
fi
libpath=${LD_LIBRARY_PATH:-}
[ -e "$dest/libcudart.so.13" ] && libpath=$dest${libpath:+:$libpath}
missing=$(LD_LIBRARY_PATH=$libpath ldd "$dest/libonnxruntime_providers_cuda.so" | awk '/not found/ && $1 != "libcuda.so.1" {print $1}' | tr '\n' ' ')
if [ -n "$missing" ]; then
	echo "setup-cuda: the CUDA provider still needs: $missing(run with --cuda-libs, or put a CUDA 13 installation on LD_LIBRARY_PATH)" >&2
fi
ldd "$dest/libonnxruntime_providers_cuda.so" | grep -q 'libcuda.so.1 => not found' &&
	echo "setup-cuda: libcuda.so.1 comes with the NVIDIA driver; this machine has none" >&2
echo "setup-cuda: installed ORT $version GPU build in $dest; use:" >&2
echo "export DMAR_ORT_LIB=$dest/libonnxruntime.so.1 DMAR_DEVICE=cuda${libpath:+ LD_LIBRARY_PATH=$libpath}"
