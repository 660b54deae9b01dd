// Context linking index: e.derived holds the weaker forms of the entity's
// names (kg.EntityDerivedForms), one keyword term each, as entity_names
// holds the exact ones.
CREATE FULLTEXT INDEX entity_derived IF NOT EXISTS
FOR (e:Entity) ON EACH [e.derived]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'keyword'}}
