"""Prints a /v1/retrieve response (JSON on stdin) as a short readable summary."""
import json
import sys

r = json.load(sys.stdin)
print(f"Query:        {r['query']}")
print(f"Method:       {r.get('options', {}).get('method', '?')}")
ents = ", ".join(f"{e['label']} ({e['qid']})" for e in r["query_entities"]) or "none"
print(f"Entities:     {ents}")
opts = r.get("options", {})
# The dmar method's short path has no reformulation, anchors or structural
# score: print only what the request ran.
if r.get("reformulator") not in (None, "", "none") or r.get("anchors"):
    print(f"Reformulated: {r['reformulated_query']}  [{r['reformulator']}]")
    print("Anchors:")
for a in r["anchors"]:
    phi = " ".join(f"{p['qid']}={p['phi']:.3f}" for p in a["phi"])
    sg = sum(len(s["nodes"]) for s in a["subgraphs"])
    print(f"  {a['rank']}. {a['title']} ({a['id']})  fused {a['score']:.3f}  phi {phi}  [{len(a['subgraphs'])} subgraphs, {sg} nodes]")
structural = opts.get("structure", "gnn") != "off"
print("Results:")
for d in r["results"]:
    b = d["breakdown"]
    line = f"  {d['rank']}. {d['title']} ({d['id']})  final {d['score']:.3f}  sem {b['semantic']:.3f}"
    if structural:
        line += f" ent {b['structural']:.3f}  gate {b['gate']['semantic']:.2f}/{b['gate']['structural']:.2f}"
    print(line)
    for path in (b.get("paths") or [])[:1]:
        print(f"       via {path['text']}  (relevance {path['relevance']:.3f})")
for f in r["fallbacks"]:
    print(f"Fallback:     {f['name']}: {f['reason']}")
print("Timings (ms): " + ", ".join(f"{k} {v:.1f}" for k, v in sorted(r["timings_ms"].items())))
