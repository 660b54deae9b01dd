// After a load: recount (:NameToken {token, freq}) from every entity's
// e.nameTokens ($stamp marks this count); drop_stale_name_tokens.cypher then
// deletes the tokens no entity holds any more. One pass over the entities (a
// load changes counts globally), written in transactions of 10,000 tokens,
// so that a graph with millions of distinct tokens does not hold them all in
// one transaction's state (on the 20M-edge benchmark graph that ran out of a
// 4 GB heap). Needs an implicit transaction (session.Run).
MATCH (e:Entity)
UNWIND e.nameTokens AS token
WITH token, count(*) AS freq
CALL (token, freq) {
  MERGE (k:NameToken {token: token})
  SET k.freq = freq, k.stamp = $stamp
} IN TRANSACTIONS OF 10000 ROWS
