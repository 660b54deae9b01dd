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

	backendErrs  *prometheus.CounterVec
	inference    *prometheus.HistogramVec
	authFailures *prometheus.CounterVec
	rateLimited  *prometheus.CounterVec
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
	m.authFailures = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dmar_auth_failures_total", Help: "Requests refused for a missing or unknown API key."}, []string{"reason"})
	m.rateLimited = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dmar_rate_limited_total", Help: "Requests refused with 429 by API key name."}, []string{"key"})
	m.backendErrs = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dmar_backend_errors_total", Help: "Failed calls to a remote backend (neo4j, weaviate) by operation."}, []string{"backend", "op"})
	m.inference = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "dmar_model_inference_duration_seconds", Help: "Time of one ONNX model call (encoder, gnn, gate) by model.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)}, []string{"model"})
	m.Registry.MustRegister(m.requests, m.latency, m.stages, m.fallback, m.cache, m.authFailures, m.rateLimited, m.backendErrs, m.inference,
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

// BackendError counts a failed call to a remote backend.
func (m *Metrics) BackendError(backend, op string) { m.backendErrs.WithLabelValues(backend, op).Inc() }

// Inference times one model call.
func (m *Metrics) Inference(model string, d time.Duration) {
	m.inference.WithLabelValues(model).Observe(d.Seconds())
}
