// $rows: [{qid, label, description, aliases, leadNames, names, derived, nameTokens, formsVersion}].
// Degree is kept by merge_triples.cypher; a new entity starts at 0.
UNWIND $rows AS row
MERGE (e:Entity {qid: row.qid})
ON CREATE SET e.degree = 0
SET e.label = row.label, e.description = row.description,
    e.aliases = row.aliases, e.leadNames = row.leadNames, e.names = row.names,
    e.derived = row.derived, e.nameTokens = row.nameTokens, e.formsVersion = row.formsVersion
