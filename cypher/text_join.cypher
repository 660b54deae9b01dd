// $edges: [{from, to, kind, w}], from < to. Edges no passage owns (the
// KG's, kind 4; synonyms, kind 3): made once, never reweighted.
UNWIND $edges AS row
MATCH (a:TextNode {tkey: row.from})
MATCH (b:TextNode {tkey: row.to})
MERGE (a)-[r:TG {kind: row.kind}]->(b)
ON CREATE SET r.w = row.w
