// $rows: [{head, tail, pid, label}]. One relationship per statement, typed by
// its property id. An end never written as an entity gets a stub node whose
// label is its QID (as bundle.Read does). Degrees grow only when the
// relationship is new, so reruns leave them exact.
UNWIND $rows AS row
MERGE (h:Entity {qid: row.head})
ON CREATE SET h.label = row.head, h.names = [toLower(row.head)], h.degree = 0,
              h.derived = [], h.nameTokens = [toLower(row.head)]
MERGE (t:Entity {qid: row.tail})
ON CREATE SET t.label = row.tail, t.names = [toLower(row.tail)], t.degree = 0,
              t.derived = [], t.nameTokens = [toLower(row.tail)]
MERGE (h)-[s:$(row.pid)]->(t)
ON CREATE SET s.pid = row.pid, s.label = row.label,
              h.degree = h.degree + 1, t.degree = t.degree + 1
