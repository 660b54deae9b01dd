// $pairs: [{from, to, kind, w}]. Passages' contributions added (w > 0) or
// taken back (w < 0): an edge's weight is the sum of what its passages
// contributed, and it goes when that reaches 0; a contains edge (kind 0)
// counts its phrase's passages up or down.
UNWIND $pairs AS row
MATCH (a:TextNode {tkey: row.from})
MATCH (b:TextNode {tkey: row.to})
MERGE (a)-[r:TG {kind: row.kind}]->(b)
ON CREATE SET r.w = 0.0
SET r.w = r.w + row.w
SET b.tpassages = coalesce(b.tpassages, 0) + CASE WHEN row.kind = 0 THEN sign(row.w) ELSE 0 END
WITH r
WHERE r.w <= 1e-6
DELETE r
