// Sizes, for load reports and tests (counts come from the count store).
CALL () { MATCH (e:Entity) RETURN count(e) AS entities }
CALL () { MATCH (:Entity)-[s]->(:Entity) RETURN count(s) AS statements }
CALL () { MATCH (d:Document) RETURN count(d) AS documents }
RETURN entities, statements, documents
