// Linking index: e.names holds the normalised forms (kg.NormalizeForm) of the
// entity's label and aliases. The keyword analyzer keeps each form one term,
// so a quoted form finds exactly the entities that have it.
CREATE FULLTEXT INDEX entity_names IF NOT EXISTS
FOR (e:Entity) ON EACH [e.names]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'keyword'}}
