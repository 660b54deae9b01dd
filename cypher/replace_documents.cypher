// $docs: [{id, title, entities: [QID]}]. Each document's MENTIONS edges
// become exactly its entities; mentions of unknown QIDs are dropped.
UNWIND $docs AS doc
MERGE (d:Document {id: doc.id})
SET d.title = doc.title
WITH d, doc
CALL (d, doc) {
  OPTIONAL MATCH (d)-[old:MENTIONS]->(e:Entity)
  WHERE NOT e.qid IN doc.entities
  DELETE old
}
WITH d, doc
CALL (d, doc) {
  UNWIND doc.entities AS qid
  MATCH (e:Entity {qid: qid})
  MERGE (d)-[:MENTIONS]->(e)
}
