package apicheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// moduleRoot is the directory holding go.mod, two levels up.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	return root
}

// isInternal reports whether an import path is an internal package.
func isInternal(path string) bool {
	return strings.HasSuffix(path, "/internal") || strings.Contains(path, "/internal/")
}

// internalRefs returns the selector expressions pkg.Name in n whose pkg is
// an import of an internal package (imports maps local names to paths).
func internalRefs(n ast.Node, imports map[string]string) []string {
	var refs []string
	if n == nil {
		return nil
	}
	ast.Inspect(n, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok {
			if path, ok := imports[id.Name]; ok && isInternal(path) {
				refs = append(refs, id.Name+"."+sel.Sel.Name+" ("+path+")")
			}
		}
		return true
	})
	return refs
}

// exportedParts returns the parts of a type expression that belong to the
// exported API: for a struct its exported fields and embedded fields, for
// an interface its exported methods and embedded interfaces, otherwise the
// expression itself.
func exportedParts(e ast.Expr) []ast.Node {
	switch e := e.(type) {
	case *ast.StructType:
		var out []ast.Node
		for _, f := range e.Fields.List {
			if len(f.Names) == 0 {
				out = append(out, f.Type)
				continue
			}
			for _, n := range f.Names {
				if n.IsExported() {
					out = append(out, f.Type)
					break
				}
			}
		}
		return out
	case *ast.InterfaceType:
		var out []ast.Node
		for _, f := range e.Methods.List {
			if len(f.Names) == 0 || f.Names[0].IsExported() {
				out = append(out, f.Type)
			}
		}
		return out
	}
	return []ast.Node{e}
}

// receiverExported reports whether a method's receiver type is exported.
func receiverExported(fd *ast.FuncDecl) bool {
	e := fd.Recv.List[0].Type
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return false
		}
	}
}

// leaks returns, for one parsed file, the exported declarations whose
// signature or type names an internal package's type.
func leaks(f *ast.File) []string {
	imports := map[string]string{}
	for _, im := range f.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		imports[name] = path
	}
	var out []string
	add := func(what string, refs []string) {
		for _, r := range refs {
			out = append(out, what+": "+r)
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || (d.Recv != nil && !receiverExported(d)) {
				continue
			}
			add(d.Name.Name, internalRefs(d.Type, imports))
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					if s.TypeParams != nil {
						add(s.Name.Name, internalRefs(s.TypeParams, imports))
					}
					for _, p := range exportedParts(s.Type) {
						add(s.Name.Name, internalRefs(p, imports))
					}
				case *ast.ValueSpec:
					if d.Tok == token.CONST {
						// Constants have basic types; a constant
						// defined from an internal one is fine.
						continue
					}
					for i, n := range s.Names {
						if !n.IsExported() {
							continue
						}
						if s.Type != nil {
							add(n.Name, internalRefs(s.Type, imports))
						} else if i < len(s.Values) {
							add(n.Name, internalRefs(s.Values[i], imports))
						}
					}
				}
			}
		}
	}
	return out
}

func TestLeaksFindsAliasToInternal(t *testing.T) {
	const src = `package p
import (
	"example.com/m/internal/param"
	"example.com/m/public"
)
type Param = param.Param
type OK = public.T
type S struct {
	Exported *param.Binding
	hidden   *param.Binding
}
func F(p *param.Param) {}
func G(p *public.T) {}
func (s *S) Bind(b *param.Binding) {}
func (s *S) bind(b *param.Binding) {}
var V = param.New("x")
`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	got := leaks(f)
	want := []string{"Param", "S", "F", "Bind", "V"}
	if len(got) != len(want) {
		t.Fatalf("leaks = %q, want one for each of %q", got, want)
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w+": param.") {
			t.Errorf("leak %d = %q, want one for %s", i, got[i], w)
		}
	}
}

// TestNoInternalTypeInExportedAPI walks every public, non-main package of
// the module and fails on any exported name whose type or signature
// mentions a type of an internal package.
func TestNoInternalTypeInExportedAPI(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			base := d.Name()
			if rel != "." && (base == "internal" || base == "testdata" || strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		checked++
		for _, l := range leaks(f) {
			t.Errorf("%s: exported %s", rel, l)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 10 {
		t.Fatalf("checked only %d files; is the module root %s?", checked, root)
	}
}
