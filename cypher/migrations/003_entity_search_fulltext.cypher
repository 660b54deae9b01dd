// Search index for people: words of labels and aliases, accents folded
// (CALL db.index.fulltext.queryNodes('entity_search', 'nolan') in Browser).
CREATE FULLTEXT INDEX entity_search IF NOT EXISTS
FOR (e:Entity) ON EACH [e.label, e.aliases]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'standard-folding'}}
