// After a bulk import: a batch of entities whose linking forms are not set.
MATCH (e:Entity)
WHERE e.names IS NULL
RETURN e.qid AS qid, e.label AS label, e.aliases AS aliases
LIMIT $limit
