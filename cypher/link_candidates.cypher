// $forms: normalised forms (kg.Spans). For each, the entities whose label or
// an alias has that form, through the keyword full-text index entity_names.
// Forms hold only letters, digits and spaces, so quoting makes each one
// exact term lookup.
UNWIND $forms AS form
CALL db.index.fulltext.queryNodes('entity_names', '"' + form + '"') YIELD node
RETURN form, node.qid AS qid, node.label AS label, node.aliases AS aliases,
       node.degree AS degree
