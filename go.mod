module github.com/dmar-kg/dmar

go 1.26.8

require github.com/yalue/onnxruntime_go v1.27.0

require (
	github.com/google/go-cmp v0.7.0
	github.com/hashicorp/golang-lru/v2 v2.0.7
	golang.org/x/text v0.31.0
)
