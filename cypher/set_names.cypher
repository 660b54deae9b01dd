// $rows: [{qid, names, derived, nameTokens, formsVersion}].
UNWIND $rows AS row
MATCH (e:Entity {qid: row.qid})
SET e.names = row.names, e.derived = row.derived, e.nameTokens = row.nameTokens,
    e.formsVersion = row.formsVersion
