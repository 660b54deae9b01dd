// $rows: [{qid, names}].
UNWIND $rows AS row
MATCH (e:Entity {qid: row.qid})
SET e.names = row.names
