package neo4jkg

import (
	"os"

	"github.com/dmar-kg/dmar/internal/config"
)

// ConfigFromEnv is the Neo4j of the integration tests: DMAR_NEO4J_URI ("" when
// unset), with user, database and password as dmar's configuration reads
// them from the environment.
//
// Deprecated: the package takes its Config as a value and reads no
// environment; this remains only for internal/server's injection test and
// goes when that test builds its Config itself (as this package's tests do).
func ConfigFromEnv() Config {
	n, _ := config.Neo4jEnv(os.Getenv)
	return Config{URI: config.Neo4jURI(os.Getenv), User: n.User, Password: n.Password.Reveal(), Database: n.Database}
}
