// Neo4j Browser: draws the ego subgraphs of $roots, exactly those dmar used
// (same rules and parameters as subgraphs.cypher). Set the parameters with
// :params {roots: [...], hops: 1, maxNodes: 64, hubDegree: 500} first.
UNWIND $roots AS root
MATCH (r:Entity {qid: root})
WITH r, [r] AS held,
     CASE WHEN r.degree > $hubDegree THEN [] ELSE [r] END AS frontier
CALL (held, frontier) {
  UNWIND CASE WHEN $hops >= 1 THEN frontier ELSE [] END AS f
  MATCH (f)--(n:Entity)
  WHERE NOT n IN held
  WITH DISTINCT n ORDER BY n.qid
  RETURN collect(n) AS cands
}
WITH r, held, cands, CASE WHEN $maxNodes > size(held) THEN $maxNodes - size(held) ELSE 0 END AS room
WITH r, held + cands[..room] AS held, [n IN cands[..room] WHERE n.degree <= $hubDegree] AS frontier
CALL (held, frontier) {
  UNWIND CASE WHEN $hops >= 2 THEN frontier ELSE [] END AS f
  MATCH (f)--(n:Entity)
  WHERE NOT n IN held
  WITH DISTINCT n ORDER BY n.qid
  RETURN collect(n) AS cands
}
WITH r, held, cands, CASE WHEN $maxNodes > size(held) THEN $maxNodes - size(held) ELSE 0 END AS room
WITH r, held + cands[..room] AS held, [n IN cands[..room] WHERE n.degree <= $hubDegree] AS frontier
CALL (held, frontier) {
  UNWIND CASE WHEN $hops >= 3 THEN frontier ELSE [] END AS f
  MATCH (f)--(n:Entity)
  WHERE NOT n IN held
  WITH DISTINCT n ORDER BY n.qid
  RETURN collect(n) AS cands
}
WITH r, held, cands, CASE WHEN $maxNodes > size(held) THEN $maxNodes - size(held) ELSE 0 END AS room
WITH r, held + cands[..room] AS held
CALL (held) {
  UNWIND held AS a
  MATCH (a)-[e]->(b)
  WHERE b IN held AND (a.degree <= $hubDegree OR b.degree <= $hubDegree)
  RETURN collect(e) AS rels
}
RETURN r.qid AS root, held AS nodes, rels
