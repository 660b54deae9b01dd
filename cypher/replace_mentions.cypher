// $docs: [{id, title, mentions: [{qid, place}]}]. Each document's MENTIONS
// edges become exactly its mentions, each with its place (0 text, 1 first
// sentence, 2 title); mentions of unknown QIDs are dropped.
UNWIND $docs AS doc
MERGE (d:Document {id: doc.id})
SET d.title = doc.title
WITH d, doc, [m IN doc.mentions | m.qid] AS qids
CALL (d, qids) {
  OPTIONAL MATCH (d)-[old:MENTIONS]->(e:Entity)
  WHERE NOT e.qid IN qids
  DELETE old
}
WITH d, doc
CALL (d, doc) {
  UNWIND doc.mentions AS m
  MATCH (e:Entity {qid: m.qid})
  MERGE (d)-[r:MENTIONS]->(e)
  SET r.place = m.place
}
