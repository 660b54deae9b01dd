// $ids: [document id]. Each known document's mentions: [{qid, place}],
// sorted by QID (an empty list for a document that mentions nothing).
UNWIND $ids AS id
MATCH (d:Document {id: id})
CALL (d) {
  OPTIONAL MATCH (d)-[m:MENTIONS]->(e:Entity)
  WITH e.qid AS qid, coalesce(m.place, 0) AS place
  ORDER BY qid
  RETURN collect(CASE WHEN qid IS NULL THEN null ELSE {qid: qid, place: place} END) AS mentions
}
RETURN id, mentions
