//go:build ignore

// Funclen lists the non-test functions longer than a limit (lines from the
// func keyword to the closing brace) and the longest function per package.
//
//	go run scripts/funclen.go [-min 80] [-longest] [dir]
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type fn struct {
	pkg, name, pos string
	lines          int
}

func main() {
	limit := flag.Int("min", 80, "list functions longer than this many lines")
	longest := flag.Bool("longest", false, "also print the longest function of each package")
	flag.Parse()
	root := "."
	if flag.NArg() > 0 {
		root = flag.Arg(0)
	}
	fns, err := scan(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "funclen:", err)
		os.Exit(1)
	}
	sort.Slice(fns, func(i, j int) bool { return fns[i].lines > fns[j].lines })
	n := 0
	for _, f := range fns {
		if f.lines > *limit {
			n++
			fmt.Printf("%4d  %s.%s  %s\n", f.lines, f.pkg, f.name, f.pos)
		}
	}
	fmt.Printf("%d non-test functions over %d lines\n", n, *limit)
	if *longest {
		best := map[string]fn{}
		for _, f := range fns {
			if b, ok := best[f.pkg]; !ok || f.lines > b.lines {
				best[f.pkg] = f
			}
		}
		pkgs := make([]string, 0, len(best))
		for p := range best {
			pkgs = append(pkgs, p)
		}
		sort.Strings(pkgs)
		fmt.Println("\nlongest function per package:")
		for _, p := range pkgs {
			fmt.Printf("%4d  %s  %s\n", best[p].lines, p, best[p].name)
		}
	}
}

// scan parses every non-test .go file under root, skipping hidden and
// testdata folders and files with a build-ignore constraint.
func scan(root string) ([]fn, error) {
	var out []fn
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if ignored(f) {
			return nil
		}
		pkg := filepath.Dir(path)
		for _, decl := range f.Decls {
			d, ok := decl.(*ast.FuncDecl)
			if !ok || d.Body == nil {
				continue
			}
			start, end := fset.Position(d.Pos()), fset.Position(d.End())
			out = append(out, fn{pkg: pkg, name: funcName(d), pos: fmt.Sprintf("%s:%d", path, start.Line), lines: end.Line - start.Line + 1})
		}
		return nil
	})
	return out, err
}

func ignored(f *ast.File) bool {
	for _, cg := range f.Comments {
		if cg.Pos() >= f.Package {
			break
		}
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:build ignore") {
				return true
			}
		}
	}
	return false
}

// funcName is F or (T).M.
func funcName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	t := d.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return "(" + id.Name + ")." + d.Name.Name
	}
	return d.Name.Name
}
