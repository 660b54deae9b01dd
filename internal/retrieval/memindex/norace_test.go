//go:build !race

package memindex

const raceEnabled = false
