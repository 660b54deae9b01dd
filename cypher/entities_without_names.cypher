// After a bulk import: the next batch, in QID order after $after, of
// entities whose linking forms are not set, or were set under other rules
// than $version (kg.FormsVersion; older dmars set none). The ordered scan of the qid
// index makes each batch start where the last one ended.
MATCH (e:Entity)
WHERE e.qid > $after AND (e.names IS NULL OR e.nameTokens IS NULL OR e.formsVersion IS NULL OR e.formsVersion <> $version)
RETURN e.qid AS qid, e.label AS label, e.aliases AS aliases, e.leadNames AS leadNames
ORDER BY e.qid
LIMIT $limit
