//go:build !amd64

package memindex

// haveDot32 is false: without a vector kernel, vector search takes dot4
// over the documents' own vectors (the blocks would only cost memory).
var haveDot32 = false

func dot32(q, blk []float32, out *[32]float32) { dot32Go(q, blk, out) }
