package config

// Settings of single subcommands, outside Config because no other command
// reads them. They are read here so that every DMAR_* variable is read in
// this package.

// Reader is dmar eval's generator for end-to-end EM/F1: DMAR_READER_BASE_URL,
// DMAR_READER_MODEL and DMAR_READER_API_KEY (the defaults of its flags).
type Reader struct {
	BaseURL string
	Model   string
	APIKey  Secret
}

// ReaderEnv reads the eval reader's variables through getenv.
func ReaderEnv(getenv func(string) string) Reader {
	return Reader{BaseURL: getenv("DMAR_READER_BASE_URL"), Model: getenv("DMAR_READER_MODEL"), APIKey: Secret(getenv("DMAR_READER_API_KEY"))}
}

// SPARQLEndpoint is DMAR_SPARQL_URL, the default of dmar load sparql --endpoint.
func SPARQLEndpoint(getenv func(string) string) string { return getenv("DMAR_SPARQL_URL") }

// LegacyNeo4jURI is where the deprecated dmar load neo4j loads when neither
// --uri nor the graph setting names a Neo4j: DMAR_NEO4J_URI, else
// bolt://127.0.0.1:7687. No other command reads DMAR_NEO4J_URI (the graph
// setting is DMAR_GRAPH).
func LegacyNeo4jURI(getenv func(string) string) string {
	if u := Neo4jURI(getenv); u != "" {
		return u
	}
	return "bolt://127.0.0.1:7687"
}

// Neo4jEnv is the Neo4j user, database and password of the environment
// alone (DMAR_NEO4J_USER, DMAR_NEO4J_DATABASE, DMAR_NEO4J_PASSWORD or
// DMAR_NEO4J_PASSWORD_FILE), for the loaders that take no configuration.
func Neo4jEnv(getenv func(string) string) (Neo4j, Problems) {
	var c Config
	var ps Problems
	for _, p := range Env(&c, getenv) {
		if p.Field == "DMAR_NEO4J_PASSWORD_FILE" {
			ps = append(ps, p)
		}
	}
	return c.Neo4j, ps
}

// SharedData is DMAR_SHARED_DATA, the shared real data sets (internal/datapath).
func SharedData(getenv func(string) string) string { return getenv("DMAR_SHARED_DATA") }

// Neo4jURI is DMAR_NEO4J_URI, the Neo4j of the integration tests and of the
// deprecated dmar load neo4j ("" when unset).
func Neo4jURI(getenv func(string) string) string { return getenv("DMAR_NEO4J_URI") }

// ClientAPIKey is the API key a dmar client command (query --server, bench
// load) sends: DMAR_API_KEY, or DMARLOAD_API_KEY, the name the former
// cmd/dmarload read.
func ClientAPIKey(getenv func(string) string) string {
	if k := getenv("DMAR_API_KEY"); k != "" {
		return k
	}
	return getenv("DMARLOAD_API_KEY")
}
