// $queries: Lucene queries, each a disjunction of quoted normalised forms
// ("christopher nolan" OR "nolan" ...). The keyword full-text index
// entity_names holds each entity's forms (e.names) as single terms, so a
// quoted form matches exactly the entities that have it; the caller maps the
// returned names back to the forms it asked for.
UNWIND $queries AS query
CALL db.index.fulltext.queryNodes('entity_names', query) YIELD node
RETURN node.qid AS qid, node.label AS label, node.names AS names, node.degree AS degree
