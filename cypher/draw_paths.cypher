// Neo4j Browser: draws the KG paths that name why dmar ranked its results
// (breakdown.paths of each result and anchor), exactly their nodes and
// relationships, one row per path. Each edge is given as stored
// ({from, pid, to}: from -[pid]-> to), whichever way the path walks it. Set
// the parameters with
// :params {paths: [{name: "result 1: Q25188 -[director]-> Q25191", edges: [{from: "Q25188", pid: "P57", to: "Q25191"}]}]}
// first.
UNWIND $paths AS path
CALL (path) {
  UNWIND range(0, size(path.edges) - 1) AS i
  WITH i, path.edges[i] AS e
  MATCH (a:Entity {qid: e.from})-[r]->(b:Entity {qid: e.to})
  WHERE type(r) = e.pid
  WITH i, a, r, b ORDER BY i
  RETURN collect(r) AS rels, collect(a) + collect(b) AS ends
}
RETURN path.name AS name,
       reduce(acc = [], n IN ends | CASE WHEN n IN acc THEN acc ELSE acc + n END) AS nodes,
       rels
