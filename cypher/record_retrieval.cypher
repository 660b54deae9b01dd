// A finished retrieval and its anchor documents, for analysts to browse:
// (:Retrieval)-[:ANCHOR {rank, score}]->(:Document)-[:MENTIONS]->(:Entity).
// $anchors: [{docId, title, rank, score, entities: [QID]}].
MERGE (r:Retrieval {id: $id})
SET r.query = $query, r.reformulated = $reformulated, r.at = $at
WITH r
CALL (r) {
  UNWIND $anchors AS a
  MERGE (d:Document {id: a.docId})
  ON CREATE SET d.title = a.title
  MERGE (r)-[x:ANCHOR]->(d)
  SET x.rank = a.rank, x.score = a.score
  WITH d, a
  UNWIND a.entities AS qid
  MATCH (e:Entity {qid: qid})
  MERGE (d)-[:MENTIONS]->(e)
}
