package onnx

// SetCorpusWindow makes EncodeCorpus's windows n texts long, for tests that
// need several windows from few texts; it returns the undo.
func SetCorpusWindow(n int) func() {
	old := corpusWindow
	corpusWindow = n
	return func() { corpusWindow = old }
}
