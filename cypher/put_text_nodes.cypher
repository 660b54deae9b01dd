// $nodes: [{key, label, passages, vector, words}]. The text graph's nodes
// (:TextNode {tkey, tlabel, tpassages, tvec, twords}), vector null for a
// passage, words those its synonym candidates share with it;
// a passage node is joined to its (:Document), an entity node to its
// (:Entity), by :TEXT_OF, for browsing.
UNWIND $nodes AS row
MERGE (n:TextNode {tkey: row.key})
SET n.tlabel = row.label, n.tpassages = row.passages, n.tvec = row.vector, n.twords = row.words
WITH n, row
CALL (n, row) {
  OPTIONAL MATCH (d:Document {id: substring(row.key, 2)})
  WHERE row.key STARTS WITH 'd:'
  OPTIONAL MATCH (e:Entity {qid: substring(row.key, 2)})
  WHERE row.key STARTS WITH 'e:'
  WITH n, coalesce(d, e) AS target
  WHERE target IS NOT NULL
  MERGE (n)-[:TEXT_OF]->(target)
}
