module github.com/dmar-kg/dmar

go 1.26.8

require github.com/yalue/onnxruntime_go v1.27.0

require golang.org/x/text v0.31.0
