module github.com/dmar-kg/dmar

go 1.26.8

require (
	github.com/knakk/digest v0.0.0-20160404164910-fd45becddc49
	github.com/knakk/rdf v0.0.0-20190304171630-8521bf4c5042
	github.com/knakk/sparql v0.0.0-20240119140508-255b851aa040
)
