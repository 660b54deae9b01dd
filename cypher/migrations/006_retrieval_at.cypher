// Analysts list recent retrievals: ORDER BY r.at DESC.
CREATE RANGE INDEX retrieval_at IF NOT EXISTS
FOR (r:Retrieval) ON (r.at)
