// $keys: [node key]. Those the text graph holds.
UNWIND $keys AS key
MATCH (n:TextNode {tkey: key})
RETURN n.tkey AS key
