# Sourced by the models' training scripts (models/*/train.sh) with cache set:
# sets py to a python that has numpy, onnx and onnxruntime at the pinned
# versions, installing them once into $cache/pyenv.
py="$cache/pyenv/bin/python"
if ! "$py" -c 'import numpy, onnx, onnxruntime' 2>/dev/null; then
	python3 -m venv "$cache/pyenv"
	"$cache/pyenv/bin/pip" install -q numpy==2.4.6 onnx==1.23.2 onnxruntime==1.32.0
fi
