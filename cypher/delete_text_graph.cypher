// Removes the text graph (its nodes and edges); the KG and the documents'
// nodes stay. Needs an implicit transaction (session.Run).
MATCH (n:TextNode)
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS
