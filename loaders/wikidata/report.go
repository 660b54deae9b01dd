package wikidata

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// Report writes st as dmar load wikidata prints it: with asJSON one JSON
// object (Stats plus throughput), else the counts, the first problems and a
// throughput line.
func (st Stats) Report(w io.Writer, asJSON bool) error {
	mbps, eps := float64(st.Bytes)/1e6/st.Elapsed.Seconds(), float64(st.Read)/st.Elapsed.Seconds()
	if asJSON {
		return json.NewEncoder(w).Encode(struct {
			Stats
			MBPerSec       float64 `json:"mb_per_s"`
			EntitiesPerSec float64 `json:"entities_per_s"`
		}{st, mbps, eps})
	}
	fmt.Fprintf(w, "read %d, loaded %d, filtered %d, bad %d\n", st.Read, st.Loaded, st.Filtered, st.Bad)
	for _, p := range st.Problems {
		fmt.Fprintln(w, "  bad:", p)
	}
	fmt.Fprintf(w, "%d triples, %d relations, %.1f MB in %s (%d passes): %.1f MB/s, %.0f entities/s\n",
		st.Triples, st.Relations, float64(st.Bytes)/1e6, st.Elapsed.Round(time.Millisecond), st.Passes, mbps, eps)
	if st.Truncated {
		fmt.Fprintln(w, "note: the dump is cut off (loaded as --allow-truncated asked); everything before the cut was loaded:", st.TruncatedBy)
	}
	return nil
}
