// $parts: [{key, parts}]. Each passage's part (JSON, null once deleted).
UNWIND $parts AS row
MATCH (n:TextNode {tkey: row.key})
SET n.tparts = row.parts
