// (:NameToken {token, freq}): how many entities' names hold the token
// (kg.NameTokens), which tells a generic word ("music") from a name; looked
// up by token.
CREATE CONSTRAINT name_token IF NOT EXISTS
FOR (k:NameToken) REQUIRE k.token IS UNIQUE
