// (:TextNode {tkey}): a node of the text graph (internal/textgraph), keyed
// "d:" + document id, "p:" + phrase key or "e:" + QID; looked up by key.
CREATE CONSTRAINT text_node_key IF NOT EXISTS
FOR (n:TextNode) REQUIRE n.tkey IS UNIQUE
