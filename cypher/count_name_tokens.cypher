// After a load: recount (:NameToken {token, freq}) from every entity's
// e.nameTokens, and drop tokens no entity holds any more ($stamp marks this
// count). One pass over the entities; a load changes counts globally.
CALL () {
  MATCH (e:Entity)
  UNWIND e.nameTokens AS token
  WITH token, count(*) AS freq
  MERGE (k:NameToken {token: token})
  SET k.freq = freq, k.stamp = $stamp
}
CALL () {
  MATCH (k:NameToken)
  WHERE k.stamp <> $stamp
  DELETE k
}
RETURN 1 AS done
