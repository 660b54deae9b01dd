// The context linker's candidates for one text, in one round trip:
// $exact and $derived are Lucene queries (quoted normalised forms ORed, as in
// link_candidates.cypher) over the exact forms (entity_names) and the
// derived ones (entity_derived); $tokens are the text's tokens, whose name
// frequencies come from (:NameToken). The caller keeps the forms it asked
// for. hasTokens is false on a graph loaded before name tokens existed.
CALL () {
  UNWIND $exact AS query
  CALL db.index.fulltext.queryNodes('entity_names', query) YIELD node
  RETURN collect([node.qid, node.label, node.names, node.degree]) AS exact
}
CALL () {
  UNWIND $derived AS query
  CALL db.index.fulltext.queryNodes('entity_derived', query) YIELD node
  RETURN collect([node.qid, node.derived, node.degree]) AS derived
}
CALL () {
  UNWIND $tokens AS token
  MATCH (k:NameToken {token: token})
  RETURN collect([k.token, k.freq]) AS freqs
}
CALL () {
  MATCH (k:NameToken)
  RETURN count(k) > 0 AS hasTokens
  LIMIT 1
}
RETURN exact, derived, freqs, hasTokens
