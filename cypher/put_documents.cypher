// $docs: [{id, title, entities: [QID]}]. Mentions of unknown QIDs are dropped.
UNWIND $docs AS doc
MERGE (d:Document {id: doc.id})
SET d.title = doc.title
WITH d, doc
CALL (d, doc) {
  UNWIND doc.entities AS qid
  MATCH (e:Entity {qid: qid})
  MERGE (d)-[:MENTIONS]->(e)
}
