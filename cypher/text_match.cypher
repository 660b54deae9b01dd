// $keys: [node key], $vector (or null), $k, $min. The phrase and entity
// nodes among $keys (score 1), then the $k others held by a passage whose
// vector's cosine with $vector is at least $min, best first (ties: key).
// vector.similarity.cosine is (1 + cos) / 2; cos is taken back from it.
CALL () {
  UNWIND $keys AS key
  MATCH (n:TextNode {tkey: key})
  WHERE NOT key STARTS WITH 'd:'
  RETURN collect({key: n.tkey, label: n.tlabel, score: 1.0, passages: n.tpassages}) AS exact
}
CALL (exact) {
  WITH [x IN exact | x.key] AS taken
  MATCH (n:TextNode)
  WHERE $vector IS NOT NULL AND $k > 0 AND n.tvec IS NOT NULL AND n.tpassages > 0 AND NOT n.tkey IN taken
  WITH n, 2 * vector.similarity.cosine(n.tvec, $vector) - 1 AS cos
  WHERE cos >= $min
  ORDER BY cos DESC, n.tkey
  LIMIT $k
  RETURN collect({key: n.tkey, label: n.tlabel, score: cos, passages: n.tpassages}) AS near
}
RETURN exact, near
