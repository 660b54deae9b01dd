package weaviate

import (
	"strings"

	"google.golang.org/grpc/resolver"
)

// grpcScheme is the gRPC resolver scheme of a cluster's gRPC endpoints:
// dmar-weaviate:///HOST:PORT,HOST:PORT,... resolves to every endpoint
// listed, balanced round robin: a call goes to the next node whose
// connection is up, so when a node goes away the calls after go to the
// others; the batch writer's and the searches' retries send a call that
// broke again.
const grpcScheme = "dmar-weaviate"

func init() { resolver.Register(listBuilder{}) }

// grpcTarget is the dial target of endpoints: the endpoint itself for one,
// the list resolver's for several.
func grpcTarget(endpoints []string) string {
	if len(endpoints) == 1 {
		return endpoints[0]
	}
	return grpcScheme + ":///" + strings.Join(endpoints, ",")
}

type listBuilder struct{}

func (listBuilder) Scheme() string { return grpcScheme }

func (listBuilder) Build(t resolver.Target, cc resolver.ClientConn, _ resolver.BuildOptions) (resolver.Resolver, error) {
	var addrs []resolver.Address
	for _, a := range strings.Split(t.Endpoint(), ",") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, resolver.Address{Addr: a})
		}
	}
	// Round robin: searches spread over the nodes, and a node that goes
	// away leaves the others to take the next calls.
	sc := cc.ParseServiceConfig(`{"loadBalancingConfig": [{"round_robin": {}}]}`)
	if err := cc.UpdateState(resolver.State{Addresses: addrs, ServiceConfig: sc}); err != nil {
		return nil, err
	}
	return listResolver{}, nil
}

// listResolver's addresses never change.
type listResolver struct{}

func (listResolver) ResolveNow(resolver.ResolveNowOptions) {}
func (listResolver) Close()                                {}
