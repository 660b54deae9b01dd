// After count_name_tokens.cypher: delete the tokens its count ($stamp) did
// not reach, in transactions of 10,000. Needs an implicit transaction.
MATCH (k:NameToken)
WHERE k.stamp <> $stamp
CALL (k) { DELETE k } IN TRANSACTIONS OF 10000 ROWS
