# Sourced by models/gate/train.sh and models/evgate/train.sh with kind set
# (gate or evgate): sets enc (DMAR_ENCODER, else the default encoder; then
# exported) and the files the model of that encoder is written to. The
# default encoder's model is models/KIND/KIND.onnx, another's
# KIND-NAME.onnx beside its metrics-NAME.json: the files dmar opens for that
# encoder (internal/scoring/onnx: GateFileFor, EvidenceGateFileFor).
default_encoder=bge-small-en-v1.5-int8 # onnx.DefaultEncoderName
enc="${DMAR_ENCODER:-$default_encoder}"
export DMAR_ENCODER="$enc"
out=models/$kind/$kind.onnx metrics=models/$kind/metrics.json
if [ "$enc" != "$default_encoder" ]; then
	out=models/$kind/$kind-$enc.onnx metrics=models/$kind/metrics-$enc.json
fi
