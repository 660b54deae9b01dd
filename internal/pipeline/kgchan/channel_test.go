package kgchan_test

import (
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/pipeline/kgchan"
)

// The channel is one of the pipeline's.
var _ pipeline.Channel[kgchan.Output] = kgchan.Channel{}
