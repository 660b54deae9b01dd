// $keys: [passage node key]. The parts the passages hold (JSON: the pairs
// each contributed), to take them back.
UNWIND $keys AS key
MATCH (n:TextNode {tkey: key})
WHERE n.tparts IS NOT NULL
RETURN n.tkey AS key, n.tparts AS parts
