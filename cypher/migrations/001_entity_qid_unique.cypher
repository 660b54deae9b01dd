// One node per Wikidata item; also the index every lookup by QID uses.
CREATE CONSTRAINT entity_qid IF NOT EXISTS
FOR (e:Entity) REQUIRE e.qid IS UNIQUE
