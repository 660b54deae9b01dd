// Command mkvolume makes a larger dump from the real Wikidata dump sample for
// the loader benchmark: the sample's entity lines repeated -copies times,
// copy k renumbering each entity's own id Q<n> to Q<n + k*1000000> (so every
// entity is distinct; statements keep their real values), in the dump's
// framing, gzip-compressed. Synthetic volume made from real records.
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strconv"
)

var idRe = regexp.MustCompile(`"id":"Q(\d+)"`)

func main() {
	in := flag.String("in", "", "dump sample (latest-all-first50.json)")
	out := flag.String("out", "", "output .json.gz")
	copies := flag.Int("copies", 100, "times to repeat the sample")
	level := flag.Int("level", 6, "gzip level (gzip's default is 6)")
	flag.Parse()
	if err := run(*in, *out, *copies, *level); err != nil {
		fmt.Fprintln(os.Stderr, "mkvolume:", err)
		os.Exit(1)
	}
}

func run(in, out string, copies, level int) error {
	raw, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var lines [][]byte
	for _, l := range bytes.Split(raw, []byte("\n")) {
		l = bytes.TrimSuffix(bytes.TrimSpace(l), []byte(","))
		if len(l) > 1 {
			lines = append(lines, l)
		}
	}
	f, err := os.Create(out + ".part")
	if err != nil {
		return err
	}
	defer f.Close()
	zw, err := gzip.NewWriterLevel(f, level)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(zw, 1<<20)
	w.WriteString("[\n")
	for k := 0; k < copies; k++ {
		for i, l := range lines {
			loc := idRe.FindSubmatchIndex(l) // the entity's own id comes first
			if loc == nil {
				return fmt.Errorf("line %d has no item id", i+1)
			}
			n, _ := strconv.Atoi(string(l[loc[2]:loc[3]]))
			w.Write(l[:loc[2]])
			w.WriteString(strconv.Itoa(n + k*1000000))
			w.Write(l[loc[3]:])
			if k == copies-1 && i == len(lines)-1 {
				w.WriteString("\n")
			} else {
				w.WriteString(",\n")
			}
		}
	}
	w.WriteString("]\n")
	if err := w.Flush(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(out+".part", out)
}
