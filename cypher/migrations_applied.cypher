MATCH (m:Migration)
RETURN m.n AS n
