// $qids: [QID], $limit. For each known entity: how many documents mention it
// (df) and the $limit best of them, best place first, then document id
// (edges written before places were stored count as text mentions); and the
// number of documents (n), on every row (one row with a null qid when
// $qids is empty). An unknown entity's row has df 0.
CALL () {
  MATCH (d:Document)
  RETURN count(d) AS n
}
UNWIND CASE WHEN size($qids) = 0 THEN [null] ELSE $qids END AS qid
OPTIONAL MATCH (e:Entity {qid: qid})
CALL (e) {
  MATCH (d:Document)-[m:MENTIONS]->(e)
  WITH d.id AS id, coalesce(m.place, 0) AS place
  ORDER BY place DESC, id
  RETURN count(*) AS df, collect({id: id, place: place})[..$limit] AS docs
}
RETURN n, qid, df, docs
