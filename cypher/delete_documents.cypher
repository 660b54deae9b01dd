// $ids: [document id]. Removes the documents and their MENTIONS edges.
UNWIND $ids AS id
MATCH (d:Document {id: id})
DETACH DELETE d
