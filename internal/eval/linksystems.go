package eval

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dmar-kg/dmar/internal/pipeline"
)

// linksVariant parses dmar-linksN: dmar with title_links N (at most N
// pages its best document names follow it; N 0 turns that off).
func linksVariant(name string, questionAware pipeline.Options) (pipeline.Options, string, bool) {
	r, ok := strings.CutPrefix(name, "dmar-links")
	if !ok {
		return questionAware, "", false
	}
	n, err := strconv.Atoi(r)
	if err != nil || n < 0 || n > 10 {
		return questionAware, "", false
	}
	o := questionAware
	o.TitleLinks = n
	return o, fmt.Sprintf("title_links %d (at most %d pages the best document names follow it)", n, n), true
}
