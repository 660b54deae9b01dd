// $edges: [{from, to, kind, w}]. The text graph's edges (:TextNode)-[:TG
// {kind, w}]->(:TextNode), stored from the smaller key to the larger, walked
// both ways; kind 0 contains, 1 same sentence, 2 triple, 3 synonym, 4 KG.
UNWIND $edges AS row
MATCH (a:TextNode {tkey: row.from})
MATCH (b:TextNode {tkey: row.to})
MERGE (a)-[r:TG {kind: row.kind}]->(b)
SET r.w = row.w
