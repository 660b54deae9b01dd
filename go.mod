module github.com/dmar-kg/dmar

go 1.26.8

require (
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/hashicorp/golang-lru/v2 v2.0.7 // indirect
)
