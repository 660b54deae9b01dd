// $qids: list of QIDs; unknown ones give no row.
UNWIND $qids AS qid
MATCH (e:Entity {qid: qid})
RETURN e.qid AS qid, e.label AS label, e.description AS description,
       e.aliases AS aliases, e.degree AS degree, e.leadNames AS leadNames
