module github.com/dmar-kg/dmar

go 1.26.8
