// Ego subgraphs of all $roots at once, by the rules of kg.SubgraphParams:
// level by level, candidates are the unvisited neighbours of the expanded
// (non-hub) nodes of the previous level, sorted by QID and cut at $maxNodes;
// hubs (degree > $hubDegree) are kept but never expanded, so a Wikidata hub's
// millions of edges are never read. Up to 3 levels ($hops 0..3).
// With $star (the graph channel's neighbourhoods, kg.Neighbourhoods) a hub
// root is its one-hop star instead: its neighbours, cut at $maxNodes, and
// its own edges to them; and only the edges the channel can walk are read:
// those with an end at an expanded node (a non-hub short of the last hop).
// $star false is kg.Graph.Subgraphs.
// Keep in step with browse_subgraphs.cypher (a test compares them).
UNWIND $roots AS root
MATCH (r:Entity {qid: root})
WITH r, [r] AS held, $star AND $hops >= 1 AND r.degree > $hubDegree AS star
WITH r, held, star,
     CASE WHEN r.degree > $hubDegree AND NOT star THEN [] ELSE [r] END AS frontier
CALL (held, frontier) {
  UNWIND CASE WHEN $hops >= 1 THEN frontier ELSE [] END AS f
  MATCH (f)--(n:Entity)
  WHERE NOT n IN held
  WITH DISTINCT n ORDER BY n.qid
  RETURN collect(n) AS cands1
}
WITH r, star, held, cands1, CASE WHEN $maxNodes > size(held) THEN $maxNodes - size(held) ELSE 0 END AS room
WITH r, star, held + cands1[..room] AS held, cands1[..room] AS level1, size(cands1) > room AS cut1
WITH r, star, held, level1, cut1, [n IN level1 WHERE n.degree <= $hubDegree AND NOT star] AS frontier
CALL (held, frontier) {
  UNWIND CASE WHEN $hops >= 2 THEN frontier ELSE [] END AS f
  MATCH (f)--(n:Entity)
  WHERE NOT n IN held
  WITH DISTINCT n ORDER BY n.qid
  RETURN collect(n) AS cands2
}
WITH r, star, held, level1, cut1, cands2, CASE WHEN $maxNodes > size(held) THEN $maxNodes - size(held) ELSE 0 END AS room
WITH r, star, held + cands2[..room] AS held, level1, cands2[..room] AS level2, cut1 OR size(cands2) > room AS cut2
WITH r, star, held, level1, level2, cut2, [n IN level2 WHERE n.degree <= $hubDegree] AS frontier
CALL (held, frontier) {
  UNWIND CASE WHEN $hops >= 3 THEN frontier ELSE [] END AS f
  MATCH (f)--(n:Entity)
  WHERE NOT n IN held
  WITH DISTINCT n ORDER BY n.qid
  RETURN collect(n) AS cands3
}
WITH r, star, held, level1, level2, cut2, cands3, CASE WHEN $maxNodes > size(held) THEN $maxNodes - size(held) ELSE 0 END AS room
WITH r, star, held + cands3[..room] AS held, level1, level2, cands3[..room] AS level3, cut2 OR size(cands3) > room AS truncated
// Subgraphs: edges among held nodes with at least one non-hub end, each
// read once from its head's outgoing relationships: a non-hub head has few,
// and a hub's millions of edges are incoming (Wikidata's "human", "United
// States"), so its outgoing ones are few too. Reading both directions of
// every non-hub node read each edge twice and 3x the rows on codexm
// (PROFILE: 276k expanded rows for 300 roots, then 85k).
// Neighbourhoods: the edges of the walked nodes only (a star's root, or the
// non-hubs short of the last hop), out from them and in from held nodes not
// walked, so each edge once. A two-hop walk of 5 roots held 4,487 nodes and
// read 69k relationships for 42k edges; the walked ones are 155 of them.
// Edges name their ends by element id, which costs no property read (the
// levels map ids to QIDs): about 40% off the 300-root call.
WITH r, level1, level2, level3, truncated, held,
     CASE WHEN star THEN [r]
          WHEN $star THEN [n IN [r] + CASE WHEN $hops >= 2 THEN level1 ELSE [] END + CASE WHEN $hops >= 3 THEN level2 ELSE [] END
                           WHERE $hops >= 1 AND n.degree <= $hubDegree]
          ELSE held END AS walked
CALL (held, walked) {
  UNWIND walked AS a
  MATCH (a)-[e]->(b)
  WHERE b IN held AND ($star OR a.degree <= $hubDegree OR b.degree <= $hubDegree)
  RETURN collect([elementId(a), type(e), elementId(b), e.label]) AS outEdges
}
CALL (held, walked) {
  UNWIND CASE WHEN $star THEN walked ELSE [] END AS b
  MATCH (a)-[e]->(b)
  WHERE a IN held AND NOT a IN walked
  RETURN collect([elementId(a), type(e), elementId(b), e.label]) AS inEdges
}
WITH r, level1, level2, level3, truncated, outEdges + inEdges AS edges
RETURN r.qid AS root,
       [lv IN [[r], level1, level2, level3] | [n IN lv | [n.qid, n.label, n.degree, elementId(n)]]] AS levels,
       truncated, edges
