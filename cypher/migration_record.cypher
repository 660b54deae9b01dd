MERGE (m:Migration {n: $n})
ON CREATE SET m.name = $name, m.at = datetime()
