package pipeline_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// The context linker is opt-in: by default query entities carry no
// confidence (and the JSON no field); with linking=context each has one.
func TestLinkingContext(t *testing.T) {
	p := newPipeline(t, nil)
	res := retrieve(t, p, nolan, p.Defaults())
	js, _ := json.Marshal(res.QueryEntities)
	if len(res.QueryEntities) == 0 || strings.Contains(string(js), "confidence") {
		t.Fatalf("default query entities: %s", js)
	}
	o := p.Defaults()
	o.Linking = "context"
	res = retrieve(t, p, nolan, o)
	if len(res.QueryEntities) == 0 {
		t.Fatal("context linking found no entity")
	}
	for _, e := range res.QueryEntities {
		if e.Confidence <= 0 || e.Confidence > 1 {
			t.Errorf("confidence of %+v", e)
		}
	}
	o.Linking = "fuzzy"
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "linking") {
		t.Errorf("linking=fuzzy validated: %v", err)
	}
}
