// $words: [word], $cap. For each word, the nodes with a vector that hold
// it, with their vectors, unless more than $cap do (a new node's synonym
// candidates; textgraph.SynonymWordCap).
UNWIND $words AS w
CALL (w) {
  MATCH (n:TextNode)
  WHERE n.tvec IS NOT NULL AND w IN n.twords
  RETURN count(n) AS c, collect({key: n.tkey, vector: n.tvec}) AS nodes
}
RETURN w AS word, CASE WHEN c <= $cap THEN nodes ELSE [] END AS nodes
