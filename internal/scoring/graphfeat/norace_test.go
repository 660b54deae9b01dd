//go:build !race

package graphfeat

const raceEnabled = false
