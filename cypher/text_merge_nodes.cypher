// $nodes: [{key, label, vector, words}]. Nodes a live write adds: a new
// one gets its label, vector and words (its synonym candidates share one)
// and no passages yet; one that exists keeps them, taking the label only
// when it had none. Passage and entity nodes are joined to their
// (:Document) or (:Entity) by :TEXT_OF, as put_text_nodes does.
UNWIND $nodes AS row
MERGE (n:TextNode {tkey: row.key})
ON CREATE SET n.tlabel = row.label, n.tpassages = 0, n.tvec = row.vector, n.twords = row.words
SET n.tlabel = CASE WHEN coalesce(n.tlabel, '') = '' THEN row.label ELSE n.tlabel END
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
