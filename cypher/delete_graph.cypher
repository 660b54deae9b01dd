// Removes the graph's data, keeping the migration records. Needs an implicit
// transaction (session.Run), not a managed one.
MATCH (n)
WHERE NOT n:Migration
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS
