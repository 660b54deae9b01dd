package onnx

// SetCorpusWindow makes EncodeCorpus's windows n texts long and lets it take
// its concurrent path from minTexts texts, for tests that need several
// windows from few texts; it returns the undo.
func SetCorpusWindow(n, minTexts int) func() {
	oldN, oldMin := corpusWindow, corpusMin
	corpusWindow, corpusMin = n, minTexts
	return func() { corpusWindow, corpusMin = oldN, oldMin }
}
