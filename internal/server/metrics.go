package server

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics are the server's Prometheus series. It also implements
// pipeline.Metrics.
type Metrics struct {
	Registry *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	stages   *prometheus.HistogramVec
	fallback *prometheus.CounterVec
	cache    *prometheus.CounterVec
}

// NewMetrics registers dmar's series (and Go/process collectors) on a fresh registry.
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dmar_http_requests_total", Help: "HTTP requests by route, method and status."}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "dmar_http_request_duration_seconds", Help: "HTTP request latency by route.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 14)}, []string{"route"}),
		stages: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "dmar_stage_duration_seconds", Help: "Latency of each DMAR stage.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)}, []string{"stage"}),
		fallback: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dmar_fallbacks_total", Help: "Fallbacks and degradations that fired, by name."}, []string{"name"}),
		cache:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dmar_subgraph_cache_lookups_total", Help: "Subgraph/embedding cache lookups by result."}, []string{"result"}),
	}
	m.Registry.MustRegister(m.requests, m.latency, m.stages, m.fallback, m.cache,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Stage implements pipeline.Metrics.
func (m *Metrics) Stage(name string, d time.Duration) {
	m.stages.WithLabelValues(name).Observe(d.Seconds())
}

// Fallback implements pipeline.Metrics.
func (m *Metrics) Fallback(name string) { m.fallback.WithLabelValues(name).Inc() }

// Cache implements pipeline.Metrics.
func (m *Metrics) Cache(hit bool) {
	r := "miss"
	if hit {
		r = "hit"
	}
	m.cache.WithLabelValues(r).Inc()
}
