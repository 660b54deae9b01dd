//go:build race

package memindex

// raceEnabled: the race detector is on; the long comparisons over real
// corpora, which test no concurrency, skip (they run without it in CI).
const raceEnabled = true
