// $seeds: [node key], $hops (1-4), $hub. The seeds' neighbourhood in the
// text graph, in one round trip: every node within $hops edges, walking on
// from a node only while it is a seed or has at most $hub edges (a hub is
// kept, not expanded), each at its least hop; and every edge of a walked
// node (a seed, or a non-hub short of the last hop), whose other end is then
// always among the nodes. c1..c4 are the nodes walks of 1..4 steps reach;
// a node's hop is the least step that reaches it.
UNWIND $seeds AS key
MATCH (s:TextNode {tkey: key})
WITH collect(DISTINCT s) AS c0
CALL (c0) {
  UNWIND c0 AS n
  MATCH (n)-[:TG]-(m:TextNode)
  RETURN collect(DISTINCT m) AS c1
}
CALL (c1) {
  UNWIND CASE WHEN $hops >= 2 THEN c1 ELSE [] END AS n
  WITH n WHERE COUNT { (n)-[:TG]-() } <= $hub
  MATCH (n)-[:TG]-(m:TextNode)
  RETURN collect(DISTINCT m) AS c2
}
CALL (c2) {
  UNWIND CASE WHEN $hops >= 3 THEN c2 ELSE [] END AS n
  WITH n WHERE COUNT { (n)-[:TG]-() } <= $hub
  MATCH (n)-[:TG]-(m:TextNode)
  RETURN collect(DISTINCT m) AS c3
}
CALL (c3) {
  UNWIND CASE WHEN $hops >= 4 THEN c3 ELSE [] END AS n
  WITH n WHERE COUNT { (n)-[:TG]-() } <= $hub
  MATCH (n)-[:TG]-(m:TextNode)
  RETURN collect(DISTINCT m) AS c4
}
CALL (c0, c1, c2, c3, c4) {
  UNWIND [x IN c0 | {n: x, hop: 0}] + [x IN c1 | {n: x, hop: 1}] + [x IN c2 | {n: x, hop: 2}] +
         [x IN c3 | {n: x, hop: 3}] + [x IN c4 | {n: x, hop: 4}] AS p
  WITH p.n AS n, min(p.hop) AS hop
  WITH n, hop, COUNT { (n)-[:TG]-() } AS deg
  RETURN collect({n: n, hop: hop, deg: deg}) AS found
}
CALL (found) {
  UNWIND found AS x
  WITH x WHERE x.hop < $hops AND (x.hop = 0 OR x.deg <= $hub)
  WITH x.n AS n
  MATCH (n)-[r:TG]-(:TextNode)
  WITH DISTINCT r
  RETURN collect({from: startNode(r).tkey, to: endNode(r).tkey, kind: r.kind, w: r.w}) AS edges
}
RETURN [x IN found | {key: x.n.tkey, label: x.n.tlabel, hop: x.hop, deg: x.deg}] AS nodes, edges
